package gpu

import (
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
		ok   bool
	}{
		{"driver", "550.54.15", "550.54.15", true},
		{"local tag", "2.1.0+cu121", "2.1.0", true},
		{"leading v", "v12.4", "12.4", true},
		{"prerelease", "1.13.0a0", "1.13.0", true},
		{"trailing dot", "12.", "12", true},
		{"spaces", "  9.0 ", "9.0", true},
		{"not a version", "cuda", "", false},
		{"empty", "", "", false},
		{"huge number is cut", "1234567890123", "123456789", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := ParseVersion(tt.in)
			if ok != tt.ok || v.String() != tt.want {
				t.Fatalf("ParseVersion(%q) = %q, %v; want %q, %v", tt.in, v.String(), ok, tt.want, tt.ok)
			}
		})
	}
}

func TestVersionCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"12", "12.0", 0},
		{"525.60.13", "525.60.2", 1},
		{"9.10", "9.9", 1},
		{"11.8", "12.0", -1},
	}
	for _, tt := range tests {
		if got := MustVersion(tt.a).Compare(MustVersion(tt.b)); got != tt.want {
			t.Errorf("%s vs %s = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
	if !VersionAtLeast("580.65.06", "580.65.06") || VersionAtLeast("575.51", "580") || VersionAtLeast("x", "1") {
		t.Error("VersionAtLeast is wrong")
	}
}

func TestVariantAndArchNames(t *testing.T) {
	cases := map[string]string{"cu121": "12.1", "cu118": "11.8", "cu130": "13.0", "cpu": "", "cu1": "", "cuXYZ": ""}
	for in, want := range cases {
		if got := VariantCUDA(in); got != want {
			t.Errorf("VariantCUDA(%q) = %q, want %q", in, got, want)
		}
	}
	if got := CUDAVariant("12.8"); got != "cu128" {
		t.Errorf("CUDAVariant = %q", got)
	}
	if got := CUDAFromInt(12040); got != "12.4" {
		t.Errorf("CUDAFromInt = %q", got)
	}
	arch := map[string]string{"sm_86": "8.6", "sm_120": "12.0", "compute_90": "9.0", "sm_90a": "9.0", "sm_": "", "gfx90a": ""}
	for in, want := range arch {
		if got := ArchFromSM(in); got != want {
			t.Errorf("ArchFromSM(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParsers(t *testing.T) {
	if v := ParseNvccVersion("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 12.4, V12.4.131\nBuild cuda_12.4.r12.4"); v != "12.4.131" {
		t.Errorf("nvcc = %q", v)
	}
	if v := ParseNvccVersion("Cuda compilation tools, release 11.8"); v != "11.8" {
		t.Errorf("nvcc short = %q", v)
	}
	hdr := "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 7\n#define CUDNN_VERSION (CUDNN_MAJOR * 1000)"
	if v := ParseCudnnHeader(hdr); v != "8.9.7" {
		t.Errorf("cudnn header = %q", v)
	}
	ld := "\t5 libs found in cache `/etc/ld.so.cache'\n" +
		"\tlibcudnn.so.8 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.8\n" +
		"\tlibcudnn_ops_infer.so.8 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn_ops_infer.so.8\n" +
		"\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n" +
		"\tlibnvidia-ml.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\n" +
		"\tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.12\n"
	libs := ParseLdconfig(ld)
	var names []string
	for _, l := range libs {
		names = append(names, l.Soname)
	}
	if got := strings.Join(names, " "); got != "libcudnn.so.8 libcuda.so.1 libnvidia-ml.so.1 libcudart.so.12" {
		t.Errorf("ldconfig libs = %q", got)
	}
}

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"550.54.15", "2.1.0+cu121", "v12", "", "..", "1.2.3.4.5.6.7.8", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := ParseVersion(s)
		if ok != (len(v) > 0) {
			t.Fatalf("ok=%v with %d parts", ok, len(v))
		}
		if ok {
			w, ok2 := ParseVersion(v.String())
			if !ok2 || w.Compare(v) != 0 {
				t.Fatalf("round trip %q → %q → %q", s, v, w)
			}
		}
		_ = VariantCUDA(s)
		_ = ArchFromSM(s)
		_ = MajorMinor(s)
	})
}

func FuzzTextParsers(f *testing.F) {
	f.Add("Cuda compilation tools, release 12.4, V12.4.131")
	f.Add("\tlibcudnn.so.8 (libc6,x86-64) => /usr/lib/libcudnn.so.8\n")
	f.Add("#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n")
	f.Fuzz(func(t *testing.T, s string) {
		_ = ParseNvccVersion(s)
		for _, l := range ParseLdconfig(s) {
			if l.Name == "" || !strings.Contains(s, l.Soname) {
				t.Fatalf("library %+v is not in the text", l)
			}
		}
		if v := ParseCudnnHeader(s); v != "" {
			if _, ok := ParseVersion(v); !ok {
				t.Fatalf("cuDNN version %q does not parse", v)
			}
		}
	})
}
