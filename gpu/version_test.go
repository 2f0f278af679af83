package gpu

import (
	"strings"
	"testing"
	"time"
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
	src := "__version__ = '2.1.0+cu121'\ndebug = False\ncuda: Optional[str] = '12.1'\nhip: Optional[str] = None\n"
	if pyAssign(src, "cuda") != "12.1" || pyAssign(src, "hip") != "" || !pyAssigned(src, "hip") || pyAssign(src, "__version__") != "2.1.0+cu121" {
		t.Error("pyAssign misread version.py")
	}
}

func TestParseDeepOutput(t *testing.T) {
	out := "some noise\nGPUWIZARD_DEEP {\"ran\": true, \"torch\": \"2.11.0+cu130\", \"torch_cuda\": \"13.0\", \"cuda_available\": true, \"device_count\": 1, \"arch_list\": [\"sm_90\"], \"cudnn\": \"91701\", \"devices\": [{\"index\": 0, \"name\": \"NVIDIA H100\", \"compute_capability\": \"9.0\", \"matmul_ok\": true, \"conv_ok\": true}], \"warnings\": [\"slow\"]}\n"
	r, err := ParseDeepOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Ran || r.TorchCUDA != "13.0" || r.DeviceCount != 1 || len(r.Devices) != 1 || !r.Devices[0].ConvOK || r.Devices[0].CC != "9.0" || len(r.Warnings) != 1 {
		t.Fatalf("parsed %+v", r)
	}
	if _, err := ParseDeepOutput("Traceback (most recent call last):\n"); err == nil {
		t.Fatal("no marker must be an error")
	}
	if _, err := ParseDeepOutput("GPUWIZARD_DEEP {not json"); err == nil {
		t.Fatal("bad JSON must be an error")
	}
}

// fuzzBudget checks the speed rule, 100 ms per 100 KB, with 2× slack for a
// loaded 2-core machine (and more under the race detector). The measured
// figure is BenchmarkParsePaste100KB's.
func fuzzBudget(t *testing.T, n int, start time.Time) {
	limit := time.Duration(1+n/100_000) * 200 * time.Millisecond
	if raceEnabled {
		limit *= 10
	}
	if d := time.Since(start); d > limit {
		t.Fatalf("took %s on %d bytes", d, n)
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
	f.Add("cuda: Optional[str] = '12.1'\n__version__ = '2.1.0'")
	f.Add("GPUWIZARD_DEEP {\"ran\": true}")
	f.Add("RuntimeError: CUDA error: no kernel image is available for execution on the device")
	f.Fuzz(func(t *testing.T, s string) {
		start := time.Now()
		_ = ParseNvccVersion(s)
		_ = ParseLdconfig(s)
		_ = ParseCudnnHeader(s)
		_ = pyAssign(s, "cuda")
		_, _ = ParseDeepOutput(s)
		for _, h := range ClassifyText(s) {
			if !strings.Contains(s, strings.TrimSuffix(h.Line, "…")) {
				t.Fatalf("hit line %q is not in the text", h.Line)
			}
		}
		fuzzBudget(t, len(s), start)
	})
}

// Every signature has needles, and each needle really occurs in what it
// matches (a wrong needle would hide the signature).
func TestSignatureNeedles(t *testing.T) {
	samples := map[string]string{
		"driver_too_old_for_torch":     "The NVIDIA driver on your system is too old (found version 11040)",
		"cuda_driver_insufficient":     "CUDA driver version is insufficient for CUDA runtime version",
		"ptx_too_new":                  "the provided PTX was generated by a compiler newer than what is supported",
		"no_kernel_image":              "CUDA error: no kernel image is available for execution on the device",
		"sm_not_compatible":            "GPU with CUDA capability sm_120 is not compatible with the current PyTorch installation",
		"torch_not_compiled_with_cuda": "AssertionError: Torch not compiled with CUDA enabled",
		"no_nvidia_driver":             "Found no NVIDIA driver on your system",
		"nvidia_smi_failed":            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver",
		"rm_mismatch":                  "Failed to initialize NVML: Driver/library version mismatch",
		"cuda_oom":                     "torch.cuda.OutOfMemoryError: CUDA out of memory.",
		"cudnn_status":                 "cuDNN error: CUDNN_STATUS_NOT_INITIALIZED",
		"cudnn_load":                   "Could not load library libcudnn_cnn_infer.so.8",
		"tf_dlopen":                    "Could not load dynamic library 'libcudart.so.11.0'",
		"device_mismatch":              "Expected all tensors to be on the same device, but found",
		"invalid_cuda_device":          "Invalid CUDA 'device=0' requested",
		"invalid_device_ordinal":       "RuntimeError: CUDA error: invalid device ordinal",
		"no_cuda_gpus":                 "RuntimeError: No CUDA GPUs are available",
		"secure_boot_key_rejected":     "modprobe: ERROR: could not insert 'nvidia': Key was rejected by service",
		"module_not_found":             "modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0",
		"container_cuda_requirement":   "requirement error: unsatisfied condition: cuda>=12.8, please update your driver",
		"wsl_libcuda_missing":          "Error: libcuda.so: cannot open shared object file: No such file or directory",
	}
	for _, s := range signatures {
		text, ok := samples[s.ID]
		if !ok || len(s.needles) == 0 {
			t.Errorf("%s: no sample or no needles", s.ID)
			continue
		}
		hits := ClassifyText(text)
		found := false
		for _, h := range hits {
			found = found || h.ID == s.ID
		}
		if !found {
			t.Errorf("%s does not match its sample %q", s.ID, text)
		}
	}
}
