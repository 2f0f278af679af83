package gpu

import "testing"

func TestWindowsDriverVersion(t *testing.T) {
	for in, want := range map[string]string{
		"32.0.15.6094":  "560.94", // the example
		"31.0.15.7652":  "576.52",
		"30.0.14.7196":  "471.96",
		"27.21.14.5671": "456.71",
		"32.0.16.1047":  "610.47",
		" 32.0.15.6094": "560.94",
		"560.94":        "",
		"10.0.22621.1":  "", // Microsoft's basic display driver: not an NVIDIA version
		"32.0.15.60941": "",
	} {
		if got := WindowsDriverVersion(in); got != want {
			t.Errorf("WindowsDriverVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDLLLibrary(t *testing.T) {
	for in, want := range map[string][2]string{
		"cudnn64_9.dll":      {"libcudnn", "9"},
		"CUDNN64_8.DLL":      {"libcudnn", "8"},
		"cudart64_110.dll":   {"libcudart", "11.0"},
		"cudart64_101.dll":   {"libcudart", "10.1"},
		"cudart64_12.dll":    {"libcudart", "12"},
		"cudart64_92.dll":    {"libcudart", "9.2"},
		"cublas64_11.dll":    {"libcublas", "11"},
		"nvrtc64_120_0.dll":  {"libnvrtc", "12.0"},
		"nvcuda.dll":         {"libcuda", ""},
		"nvml.dll":           {"libnvidia-ml", ""},
		"zlibwapi.dll":       {"zlibwapi", ""},
		"cudnn_ops64_9.dll":  {"", ""}, // a sub-library: only the main one is tracked
		"cublasLt64_12.dll":  {"", ""},
		"libcudnn.so.9":      {"", ""},
		"cudart32_110.dll":   {"", ""},
		"torch_cuda.dll":     {"", ""},
		"cudart64_110.dll.x": {"", ""},
	} {
		if n, v := DLLLibrary(in); n != want[0] || v != want[1] {
			t.Errorf("DLLLibrary(%q) = %q, %q; want %q", in, n, v, want)
		}
	}
}

func TestCommandWord(t *testing.T) {
	for in, want := range map[string]string{
		`C:\Users\ada\.venv\Scripts\python.exe`:        `C:\Users\ada\.venv\Scripts\python.exe`,
		`C:\Program Files\Python312\python.exe`:        `& 'C:\Program Files\Python312\python.exe'`,
		`C:\Users\o'neil\python.exe`:                   `& 'C:\Users\o''neil\python.exe'`,
		`\\nas\tools\python.exe`:                       `\\nas\tools\python.exe`,
		`C:\Users\ada\miniconda3\envs\$x\python.exe`:   `& 'C:\Users\ada\miniconda3\envs\$x\python.exe'`,
		"/home/ada/project/.venv/bin/python":           "/home/ada/project/.venv/bin/python",
		"/home/ada/my project/.venv/bin/python":        "'/home/ada/my project/.venv/bin/python'",
		"python":                                       "python",
		`C:\Users\ada\AppData\Local\Programs\Python\x`: `C:\Users\ada\AppData\Local\Programs\Python\x`,
	} {
		if got := CommandWord(in); got != want {
			t.Errorf("CommandWord(%q) = %q, want %q", in, got, want)
		}
	}
	if !IsWindowsPath(`d:/data`) || IsWindowsPath(`C:`) || IsWindowsPath("/c/x") || IsWindowsPath(`1:\x`) {
		t.Error("IsWindowsPath")
	}
}

func TestDLLNumberVersion(t *testing.T) {
	for in, want := range map[string]string{"64_112": "11.2", "64_8": "8", "64_110": "11.0", "12.2": "12.2", "64_": "64_", "64_x": "64_x", "": ""} {
		if got := DLLNumberVersion(in); got != want {
			t.Errorf("DLLNumberVersion(%q) = %q, want %q", in, got, want)
		}
	}
}
