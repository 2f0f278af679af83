package probe

import "testing"

func TestPyAssign(t *testing.T) {
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

func FuzzProbeParsers(f *testing.F) {
	f.Add("cuda: Optional[str] = '12.1'\n__version__ = '2.1.0'")
	f.Add("GPUWIZARD_DEEP {\"ran\": true}")
	f.Fuzz(func(t *testing.T, s string) {
		_ = pyAssign(s, "cuda")
		if r, err := ParseDeepOutput(s); err == nil && r.Interpreter != "" {
			t.Fatalf("the interpreter comes from the caller, not the output: %q", r.Interpreter)
		}
	})
}
