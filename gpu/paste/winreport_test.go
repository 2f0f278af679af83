package paste

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"gpuwizard/gpu"
)

func readWindowsReport(t *testing.T, name string) *gpu.Facts {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "windows", name))
	if err != nil {
		t.Fatal(err)
	}
	return Parse(string(b), time.Now())
}

func hasSignature(f *gpu.Facts, id string) (gpu.SignatureHit, bool) {
	for _, h := range f.Paste.Signatures {
		if h.ID == id {
			return h, true
		}
	}
	return gpu.SignatureHit{}, false
}

// Reports pasted from Windows: backslashes, drive letters and CRLF line
// ends are read as they are written there.
func TestWindowsReports(t *testing.T) {
	f := readWindowsReport(t, "collect_env.txt")
	if f.Host.OS != "windows" || f.NVML.DriverVersion != "560.94" || len(f.NVML.GPUs) != 1 || f.NVML.GPUs[0].Name != "NVIDIA GeForce RTX 4090" {
		t.Errorf("collect_env from Windows: host %+v, NVML %+v", f.Host, f.NVML)
	}
	if pk, ok := f.Pythons[0].Package("torch"); !ok || pk.Version != "2.5.1+cpu" || !pk.CPUOnly {
		t.Errorf("torch %+v", pk)
	}

	f = readWindowsReport(t, "c10_winerror_126.txt")
	h, ok := hasSignature(f, "windows_torch_dll_winerror_126")
	if !ok || h.Values["library"] != "c10.dll" || f.Host.OS != "windows" {
		t.Errorf("c10.dll's WinError 126: %+v (os %q)", f.Paste.Signatures, f.Host.OS)
	}
	if q := f.Paste.Quotes["python"]; len(q) == 0 || q[0] != `File "C:\Users\ada\ComfyUI\venv\Lib\site-packages\torch\__init__.py", line 148, in <module>` {
		t.Errorf("the traceback's torch, as quoted: %q", q)
	}

	// Each DataLoader worker (a spawned process) loads torch's CUDA DLLs
	// again, until Windows' paging file is full.
	f = readWindowsReport(t, "dataloader_winerror_1455.txt")
	h, ok = hasSignature(f, "windows_torch_dll_paging_file_1455")
	if !ok || h.Values["library"] != "cudnn_cnn64_9.dll" || f.Host.OS != "windows" {
		t.Errorf("WinError 1455 in a DataLoader worker: %+v (os %q)", f.Paste.Signatures, f.Host.OS)
	}
	if _, ok := hasSignature(f, "windows_torch_dll_winerror_126"); ok {
		t.Error("WinError 1455 is not the Visual C++ runtime's WinError 126")
	}

	// dxdiag gives the driver in Windows' form: 31.0.15.3623 is 536.23;
	// Intel's 31.0.101.4502 is not an NVIDIA version and is left alone.
	f = readWindowsReport(t, "dxdiag.txt")
	if f.NVML.DriverVersion != "536.23" || f.Host.OS != "windows" {
		t.Errorf("dxdiag: driver %q, os %q", f.NVML.DriverVersion, f.Host.OS)
	}

	f = readWindowsReport(t, "pip_long_path.txt")
	if _, ok := hasSignature(f, "pip_windows_long_path_hint"); !ok {
		t.Errorf("pip's long path hint: %+v", f.Paste.Signatures)
	}
}
