package doctor

import (
	"testing"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/gpu/paste"
)

// Reports pasted from Windows get fixes a Windows user pastes into
// PowerShell: the causes' own fixes in PowerShell, and the catalogue's
// "a && b" as Windows PowerShell 5.1 runs it.
func TestWindowsReportFixes(t *testing.T) {
	m := mustMatrix(t)
	reports := map[string]string{
		"cudnn":     "PS C:\\Users\\ada> python detect.py\r\nCould not load library cudnn_cnn_infer64_8.dll. Error code 126\r\nPlease make sure cudnn_cnn_infer64_8.dll is in your library path!\r\n",
		"ordinal":   "(venv) C:\\Users\\ada\\proj> python train.py\r\nRuntimeError: CUDA error: invalid device ordinal\r\n",
		"oom":       "C:\\Users\\ada\\proj> python train.py\r\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 8.00 GiB of which 0 bytes is free.\r\n",
		"mxnet":     "C:\\Users\\ada> python -c \"import mxnet as mx; print(mx.context.num_gpus())\"\r\nMXNetError: Compile with USE_CUDA=1 to enable GPU usage\r\n",
		"no_driver": "C:\\Users\\ada> python -c \"import torch; torch.zeros(1).cuda()\"\r\nRuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\r\n",
	}
	for name, text := range reports {
		f := paste.Parse(text, time.Now())
		if f.Host.OS != "windows" {
			t.Errorf("%s: not read as a Windows report", name)
			continue
		}
		r := Diagnose(f, m)
		fixes := 0
		for _, fd := range r.Findings {
			for _, s := range fd.Fix {
				if s.Command == "" {
					continue
				}
				fixes++
				if bad := posixOnly.FindString(s.Command); bad != "" {
					t.Errorf("%s: %s: %q is not PowerShell (%q)", name, fd.ID, s.Command, bad)
				}
			}
		}
		if fixes == 0 {
			t.Errorf("%s: no command to run: %+v", name, r.Findings)
		}
	}
}

func TestPowerShellSteps(t *testing.T) {
	got := powerShellSteps([]gpu.Step{{Text: "x", Command: "pip uninstall -y mxnet && pip install mxnet-cu112"}, {Command: "nvidia-smi"}})
	if got[0].Command != "pip uninstall -y mxnet; if ($?) { pip install mxnet-cu112 }" || got[1].Command != "nvidia-smi" || got[0].Text != "x" {
		t.Errorf("%+v", got)
	}
	got = powerShellSteps([]gpu.Step{{Command: "a && b && c"}})
	if got[0].Command != "a; if ($?) { b; if ($?) { c } }" {
		t.Errorf("%q", got[0].Command)
	}
}

// TestTellApartOnWindows: on a report from native Windows, the command
// that tells each cause apart runs in PowerShell (no &&, no $VAR).
func TestTellApartOnWindows(t *testing.T) {
	f := paste.Parse("C:\\Users\\ada\\proj> python train.py\r\nThe GPU is not used on my Windows 11 PC, training runs on the CPU\r\n", time.Now())
	j := &judge{f: f, m: mustMatrix(t)}
	r := j.reading()
	for _, c := range gpu.Causes {
		st := j.tellApart(r, c)
		if st.Command == "" {
			t.Errorf("%s: no command", c)
			continue
		}
		if bad := posixOnly.FindString(st.Command); bad != "" {
			t.Errorf("%s: %q is not PowerShell (%q)", c, st.Command, bad)
		}
	}
}

// TestDifferentialFixOnWindows: a thin report whose words say it is from
// Windows gets its first cause's fix in PowerShell too, not Linux's
// (ldconfig, LD_LIBRARY_PATH), even when no tool output shows the system.
func TestDifferentialFixOnWindows(t *testing.T) {
	r := diagnoseText(t, "onnxruntime-gpu 1.20.1 on Windows 11 with CUDA 12.4 and cuDNN 8.9: the CUDAExecutionProvider is not available and it runs on the CPU")
	if len(r.Findings) == 0 || r.Findings[0].Cause != gpu.CauseCudnnProblem {
		t.Fatalf("findings %v, want cudnn_problem first", findingIDs(r))
	}
	for _, st := range r.Findings[0].Fix {
		if bad := posixOnly.FindString(st.Command); bad != "" {
			t.Errorf("%q is not PowerShell (%q)", st.Command, bad)
		}
	}
}
