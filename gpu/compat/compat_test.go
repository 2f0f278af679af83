package compat

import (
	"gpuwizard/gpu"
	"strings"
	"testing"
)

func mustMatrix(t testing.TB) *Matrix {
	t.Helper()
	m, err := LoadMatrix()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestEmbeddedMatrixIsValid(t *testing.T) {
	m := mustMatrix(t)
	if len(m.Torch) < 10 || len(m.CUDAFamilies) != 3 || len(m.TensorFlow) < 5 {
		t.Fatalf("matrix looks truncated: %d torch, %d families", len(m.Torch), len(m.CUDAFamilies))
	}
	for i := 1; i < len(m.Torch); i++ {
		if !gpu.VersionAtLeast(m.Torch[i-1].Version, m.Torch[i].Version) {
			t.Errorf("torch rows must be newest first: %s before %s", m.Torch[i-1].Version, m.Torch[i].Version)
		}
	}
}

func TestParseMatrixRejectsBadRows(t *testing.T) {
	bad := map[string]string{
		"unknown source": "sources: {A: x}\ncuda_families:\n  - {major: \"12\", driver_linux: \"525.60.13\", source: B}\n",
		"unknown field":  "sources: {A: x}\nbogus: 1\n",
		"bad version":    "sources: {A: x}\ncuda_families:\n  - {major: \"12\", driver_linux: \"new\", source: A}\n",
		"bad variant":    "sources: {A: x}\ntorch:\n  - version: \"2.1\"\n    source: A\n    variants:\n      - {name: cu121, cuda: \"11.8\", archs: \"8.0\", source: A}\n",
	}
	for name, y := range bad {
		if _, err := ParseMatrix([]byte(y)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestCoversBinaryCompatibility(t *testing.T) {
	cu126 := SplitArchs("5.0;6.0;7.0;7.5;8.0;8.6;9.0")
	tests := []struct {
		name      string
		sass, ptx []string
		cc        string
		driver    string
		build     string
		covered   bool
		viaPTX    bool
	}{
		{"GTX 1080 runs sm_60", cu126, nil, "6.1", "12.4", "12.6", true, false},
		{"RTX 4090 runs sm_86", cu126, nil, "8.9", "12.4", "12.6", true, false},
		{"RTX 5090 not on cu126", cu126, nil, "12.0", "12.8", "12.6", false, false},
		{"sm_90 never runs on 10.0", []string{"9.0"}, nil, "10.0", "13.0", "12.6", false, false},
		{"GTX 1080 not on cu130", SplitArchs("7.5;8.0;8.6;9.0;10.0;12.0"), []string{"12.0"}, "6.1", "13.0", "13.0", false, false},
		{"PTX JIT for a newer GPU", []string{"9.0"}, []string{"9.0"}, "12.0", "13.0", "12.8", true, true},
		{"PTX needs a driver as new as the build", []string{"9.0"}, []string{"9.0"}, "12.0", "12.4", "12.8", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Covers(tt.sass, tt.ptx, tt.cc, tt.driver, tt.build)
			if c.Covered != tt.covered || c.ViaPTX != tt.viaPTX {
				t.Fatalf("Covers = %+v", c)
			}
			if !c.Covered && c.Reason == "" {
				t.Fatal("no reason given")
			}
		})
	}
}

func TestAdviseTorch(t *testing.T) {
	m := mustMatrix(t)
	tests := []struct {
		name    string
		q       WheelQuery
		torch   string
		variant string
		why     string // a rejected reason that must be given
	}{
		{"H100 on driver 580", WheelQuery{DriverVersion: "580.95.05", DriverCUDA: "13.0", CCs: []string{"9.0"}}, "2.13", "cu130", ""},
		{"GTX 1080 on driver 580: only cu126", WheelQuery{DriverVersion: "580.95.05", DriverCUDA: "13.0", CCs: []string{"6.1"}, GPUNames: []string{"NVIDIA GeForce GTX 1080"}}, "2.13", "cu126", "cu130 wheels have no kernels for NVIDIA GeForce GTX 1080"},
		{"RTX 5090 on driver 560: cu128 of 2.11", WheelQuery{DriverVersion: "560.35.03", DriverCUDA: "12.6", CCs: []string{"12.0"}}, "2.11", "cu128", "CUDA 13 builds need driver ≥ 580.65.06"},
		{"GTX 1080 + RTX 4090 on driver 550", WheelQuery{DriverVersion: "550.54.15", DriverCUDA: "12.4", CCs: []string{"6.1", "8.9"}}, "2.13", "cu126", ""},
		{"K80 on driver 470", WheelQuery{DriverVersion: "470.82.01", DriverCUDA: "11.4", CCs: []string{"3.7"}}, "2.7", "cu118", ""},
		{"Python 3.8 caps torch at 2.4", WheelQuery{DriverVersion: "550.54.15", CCs: []string{"8.6"}, Python: "3.8"}, "2.4", "cu124", "needs Python"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := m.AdviseTorch(tt.q)
			if !a.OK || a.Torch != tt.torch || a.Variant != tt.variant {
				t.Fatalf("advice = %+v; want torch %s %s", a, tt.torch, tt.variant)
			}
			if tt.why != "" && !strings.Contains(strings.Join(a.Rejected, "\n"), tt.why) {
				t.Fatalf("rejected %q; want a reason containing %q", a.Rejected, tt.why)
			}
			cmd := a.PipCommand("python3")
			if !strings.Contains(cmd, "--index-url https://download.pytorch.org/whl/"+tt.variant) {
				t.Fatalf("command %q", cmd)
			}
		})
	}
	if a := m.AdviseTorch(WheelQuery{DriverVersion: "470.82.01", CCs: []string{"12.0"}}); a.OK {
		t.Fatalf("RTX 5090 on a 470 driver has no wheel, got %+v", a)
	}
}

func TestCCForName(t *testing.T) {
	m := mustMatrix(t)
	for name, want := range map[string]string{
		"NVIDIA GeForce RTX 3060":    "8.6",
		"NVIDIA GeForce RTX 5090":    "12.0",
		"NVIDIA GeForce GTX 1080 Ti": "6.1",
		"NVIDIA H100 80GB HBM3":      "9.0",
		"Tesla T4":                   "7.5",
		"NVIDIA A100-SXM4-40GB":      "8.0",
		"Some Unknown GPU":           "",
	} {
		if got := m.CCForName(name); got != want {
			t.Errorf("CCForName(%q) = %q, want %q", name, got, want)
		}
	}
}
