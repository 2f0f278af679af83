package paste

import (
	"testing"
	"time"

	"gpuwizard/gpu/compat"
)

// TestSMIHeaderFrom610: from driver 610 nvidia-smi's header says "KMD
// Version" and "CUDA UMD Version" (sgl-project/sglang#27487), and -q marks
// the old names deprecated.
func TestSMIHeaderFrom610(t *testing.T) {
	header := "| NVIDIA-SMI 610.43.02              KMD Version: 610.43.02     CUDA UMD Version: 13.3     |\n" +
		"|   0  NVIDIA B200                    On  |   00000000:63:00.0 Off |                    0 |\n" +
		"| N/A   26C    P0            139W / 1000W |       0MiB / 183359MiB |      0%      Default |\n"
	q := "==============NVSMI LOG==============\n" +
		"KMD Version                               : 610.47\n" +
		"CUDA Version                              : 13.3 [Deprecated; will be removed in CUDA 14.0. Use CUDA UMD Version instead]\n" +
		"CUDA UMD Version                          : 13.3\n"
	for name, tc := range map[string]struct{ text, driver string }{"header": {header, "610.43.02"}, "-q": {q, "610.47"}} {
		f := Parse(tc.text, time.Now())
		if f.NVML.DriverVersion != tc.driver || f.NVML.CUDADriverVersion != "13.3" {
			t.Errorf("%s: driver %q, CUDA %q; want %s and 13.3", name, f.NVML.DriverVersion, f.NVML.CUDADriverVersion, tc.driver)
		}
	}
	f := Parse(header, time.Now())
	if len(f.NVML.GPUs) != 1 || f.NVML.GPUs[0].Name != "NVIDIA B200" || f.NVML.GPUs[0].MemoryTotalMiB != 183359 {
		t.Errorf("GPU row not read: %+v", f.NVML.GPUs)
	}
}

// TestSMIQueryCSV: nvidia-smi --query-gpu=... --format=csv, with its
// header, and without (the fields then come from the command line).
func TestSMIQueryCSV(t *testing.T) {
	cases := []struct {
		name, text, gpu, cc, driver string
		total                       uint64
	}{
		{"header", "$ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv\n" +
			"name, driver_version, memory.total [MiB], compute_cap\n" +
			"NVIDIA GeForce RTX 5090, 570.86.16, 32607 MiB, 12.0\n", "NVIDIA GeForce RTX 5090", "12.0", "570.86.16", 32607},
		{"noheader", "nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader\n```\nTesla T4, 7.5, 535.104.05\n```\n",
			"Tesla T4", "7.5", "535.104.05", 0},
		{"name only", "name\nNVIDIA GeForce GTX 1080 Ti\n", "NVIDIA GeForce GTX 1080 Ti", "", "", 0},
	}
	for _, tc := range cases {
		f := Parse(tc.text, time.Now())
		if len(f.NVML.GPUs) != 1 {
			t.Errorf("%s: GPUs %+v", tc.name, f.NVML.GPUs)
			continue
		}
		g := f.NVML.GPUs[0]
		if g.Name != tc.gpu || g.CC != tc.cc || f.NVML.DriverVersion != tc.driver || g.MemoryTotalMiB != tc.total {
			t.Errorf("%s: GPU %q CC %q %d MiB, driver %q", tc.name, g.Name, g.CC, g.MemoryTotalMiB, f.NVML.DriverVersion)
		}
	}
	// A header's rows end with the first line that is not one.
	f := Parse("name, compute_cap\nNVIDIA A100-SXM4-40GB, 8.0\nTraceback (most recent call last):\nfoo, 1.2\n", time.Now())
	if len(f.NVML.GPUs) != 1 {
		t.Errorf("rows read past the table: %+v", f.NVML.GPUs)
	}
	// Prose with commas is no header.
	f = Parse("name, please help\nNVIDIA is great, 8.0\n", time.Now())
	if len(f.NVML.GPUs) != 0 {
		t.Errorf("prose read as a query: %+v", f.NVML.GPUs)
	}
}

// TestBareTorchVersion: torch's version printed alone, and the answers to
// the doctor's own question (torch.__version__, torch.version.cuda,
// is_available, the arch list) on one line.
func TestBareTorchVersion(t *testing.T) {
	cases := []struct {
		text, version, cuda string
		cpu                 bool
		avail               string
		archs               int
	}{
		{"2.5.1+cu124\n", "2.5.1+cu124", "12.4", false, "", 0},
		{"'2.3.0+cpu'\n", "2.3.0+cpu", "", true, "", 0},
		{"2.7.0+cu128 12.8 True ['sm_75', 'sm_80', 'sm_86', 'sm_90', 'sm_100', 'sm_120', 'compute_120']\n", "2.7.0+cu128", "12.8", false, "true", 7},
		{"2.4.1 None False []\n", "2.4.1", "", true, "false", 0},
		{"/home/me/venv/bin/python 2.5.1+cu121 12.1\n", "2.5.1+cu121", "12.1", false, "", 0},
	}
	for _, tc := range cases {
		f := Parse(tc.text, time.Now())
		if len(f.Pythons) == 0 {
			t.Errorf("%q: no torch read", tc.text)
			continue
		}
		pk, ok := f.Pythons[0].Package("torch")
		if !ok || pk.Version != tc.version || pk.CUDA != tc.cuda || pk.CPUOnly != tc.cpu {
			t.Errorf("%q: torch %+v", tc.text, pk)
		}
		avail := ""
		if f.Paste.CUDAAvailable != nil {
			avail = map[bool]string{true: "true", false: "false"}[*f.Paste.CUDAAvailable]
		}
		if avail != tc.avail || len(f.Paste.ArchList) != tc.archs {
			t.Errorf("%q: is_available %q, arch list %v", tc.text, avail, f.Paste.ArchList)
		}
	}
	// torchvision's own version (0.x) and numbers in prose are not torch.
	for _, s := range []string{"0.20.1+cu124\n", "3.10 12.4 True\n", "it took 2.5 12.4 seconds\n"} {
		if f := Parse(s, time.Now()); len(f.Pythons) > 0 {
			if pk, ok := f.Pythons[0].Package("torch"); ok {
				t.Errorf("%q read as torch %+v", s, pk)
			}
		}
	}
}

// TestGPUNamesInProse: a GPU named in words, as people write it, is read
// and has the compute capability its name implies.
func TestGPUNamesInProse(t *testing.T) {
	m, err := compat.LoadMatrix()
	if err != nil {
		t.Fatal(err)
	}
	for name, cc := range map[string]string{
		"Tesla K40m": "3.5", "Tesla T4": "7.5", "A10G": "8.6", "L40S": "8.9", "Titan RTX": "7.5", "GeForce 940MX": "5.0",
		"Quadro M4000": "5.2", "RTX A6000": "8.6", "RTX 6000 Ada": "8.9", "RTX PRO 6000 Blackwell": "12.0", "rtx 3090": "8.6",
		"gtx1080": "6.1", "RTX5090": "12.0", "GTX 1080ti": "6.1", "RTX 4060 Laptop GPU": "8.9", "H100": "9.0",
	} {
		f := Parse("My GPU is a "+name+" and torch.cuda.is_available() is False", time.Now())
		if len(f.NVML.GPUs) != 1 || m.CCForName(f.NVML.GPUs[0].Name) != cc {
			t.Errorf("%s: GPUs %+v, want one of compute capability %s", name, f.NVML.GPUs, cc)
		}
	}
	// Numbers and Apple's chips are no NVIDIA GPU.
	for _, s := range []string{"I trained for 3090 steps", "my MacBook M4 runs it", "an AWS p3 instance", "a 100 epochs run"} {
		if f := Parse(s, time.Now()); len(f.NVML.GPUs) != 0 {
			t.Errorf("%q: read a GPU %+v", s, f.NVML.GPUs)
		}
	}
}

// TestPrintsThenValues: a script's prints in a row, then what they
// printed, are paired in order (print(torch.__version__),
// print(torch.cuda.is_available()), print(torch.version.cuda), then
// 1.12.1, False, None); a line that is no value ends the wait.
func TestPrintsThenValues(t *testing.T) {
	text := "import torch\nprint(torch.__version__)\nprint(torch.cuda.is_available())\nprint(torch.version.cuda)\n\n1.12.1\nFalse\nNone\n"
	f := Parse(text, time.Now())
	if len(f.Pythons) == 0 {
		t.Fatalf("no torch read from %q", text)
	}
	pk, ok := f.Pythons[0].Package("torch")
	if !ok || pk.Version != "1.12.1" || !pk.CPUOnly || pk.CUDA != "" {
		t.Errorf("torch %+v, want 1.12.1, a CPU-only build", pk)
	}
	if f.Paste.CUDAAvailable == nil || *f.Paste.CUDAAvailable {
		t.Errorf("is_available %v, want false", f.Paste.CUDAAvailable)
	}
	// Prose between the prints and the numbers: nothing is paired.
	f = Parse("print(torch.__version__)\nprint(torch.version.cuda)\nI get this:\n12.1\nNone\n", time.Now())
	if len(f.Pythons) > 0 {
		if pk, ok := f.Pythons[0].Package("torch"); ok && (pk.Version == "12.1" || pk.CPUOnly) {
			t.Errorf("values read across prose: torch %+v", pk)
		}
	}
}

// TestSMIVersionsTellWSL: Linux's nvidia-smi (555.42.03) over a Windows
// driver (555.85) is WSL 2; the same version on both sides (Linux, or
// native Windows) is not.
func TestSMIVersionsTellWSL(t *testing.T) {
	for head, wsl := range map[string]int{
		"| NVIDIA-SMI 555.42.03              Driver Version: 555.85         CUDA Version: 12.5     |": 2,
		"| NVIDIA-SMI 555.42.03              Driver Version: 555.42.03      CUDA Version: 12.5     |": 0,
		"| NVIDIA-SMI 546.33                 Driver Version: 546.33         CUDA Version: 12.3     |": 0,
	} {
		f := Parse(head+"\n", time.Now())
		if f.Host.WSL != wsl || f.NVML.DriverVersion == "" {
			t.Errorf("%s: WSL %d (driver %q), want %d", head, f.Host.WSL, f.NVML.DriverVersion, wsl)
		}
	}
}

// TestSeries50InCJK: the 50 series named in Chinese or Japanese (50系显卡,
// 50シリーズ) is a Blackwell GPU.
func TestSeries50InCJK(t *testing.T) {
	m, err := compat.LoadMatrix()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"cu124 不支持50系显卡", "RTX50シリーズで動かない"} {
		f := Parse(s, time.Now())
		if len(f.NVML.GPUs) != 1 || m.CCForName(f.NVML.GPUs[0].Name) != "12.0" {
			t.Errorf("%q: GPUs %+v, want one Blackwell", s, f.NVML.GPUs)
		}
	}
	if f := Parse("I trained 150系列 models", time.Now()); len(f.NVML.GPUs) != 0 {
		t.Errorf("150系列 read as a GPU: %+v", f.NVML.GPUs)
	}
}

// TestOneLinerThenValues: python -c "...; print(a); print(b); print(c)",
// then, after a lead-in ("and I got :") and a quote, its three values:
// each print takes its line, those the doctor reads are read.
func TestOneLinerThenValues(t *testing.T) {
	text := "So I run the following code\n\n\"python -c \"import torch; print(torch.cuda.is_available()); print(torch.version.cuda); print(torch.cuda.get_device_name(0))\"\n\n" +
		"and I got : \n\n\"\nTrue\n11.8\nNVIDIA GeForce GTX 1060 6GB\n\"\n"
	f := Parse(text, time.Now())
	if f.Paste.CUDAAvailable == nil || !*f.Paste.CUDAAvailable {
		t.Errorf("is_available %v, want true", f.Paste.CUDAAvailable)
	}
	if len(f.Pythons) == 0 {
		t.Fatalf("no torch read")
	}
	if pk, ok := f.Pythons[0].Package("torch"); !ok || pk.CUDA != "11.8" {
		t.Errorf("torch %+v, want CUDA 11.8", pk)
	}
}
