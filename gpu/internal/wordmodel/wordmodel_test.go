package wordmodel

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestFeatures(t *testing.T) {
	got := Features("PyTorch 2.0.1+cpu, CUDA_VISIBLE_DEVICES=1\nwheel cu118 at 0x7ffe12ab /usr/lib/wsl/lib deadbeef12345678 c++")
	for _, w := range []string{"pytorch", "+cpu", "cuda_visible_devices", "cu118", "wsl", "pytorch +cpu", "+cpu cuda_visible_devices", "wheel cu118"} {
		if !slices.Contains(got, w) {
			t.Errorf("no %q in %q", w, got)
		}
	}
	for _, w := range []string{"2", "0x7ffe12ab", "deadbeef12345678", "cuda_visible_devices wheel", "+", "c"} {
		if slices.Contains(got, w) {
			t.Errorf("%q in %q", w, got)
		}
	}
}

func TestTrainPredictFormat(t *testing.T) {
	docs := []Doc{
		{"driver_missing", "nouveau is loaded, dkms failed after a kernel update"},
		{"driver_missing", "dkms build failed, nouveau blacklisted, kernel update"},
		{"driver_missing", "after the kernel update nvidia-smi fails, nouveau"},
		{"cpu_only_build", "pip install torch on windows gives 2.1.0+cpu"},
		{"cpu_only_build", "torch 2.0.0+cpu from pip install torch, windows"},
		{"cpu_only_build", "windows pip install torch: +cpu wheel"},
	}
	m := Train(docs, 50, 2)
	p := m.Predict("my kernel update broke it: dkms and nouveau")
	if p.Cause != "driver_missing" || len(p.Words) == 0 {
		t.Errorf("%+v", p)
	}
	back, err := Parse(m.Format())
	if err != nil || string(back.Format()) != string(m.Format()) || back.Predict("pip install torch +cpu on windows").Cause != "cpu_only_build" {
		t.Errorf("the model does not survive Format and Parse: %v", err)
	}
}

// TestPredictBounded: an 8 MiB paste costs what its first and last half
// MiB do.
func TestPredictBounded(t *testing.T) {
	m := Train([]Doc{{"a", "nouveau dkms kernel"}, {"a", "nouveau dkms"}, {"b", "pip torch cpu"}, {"b", "pip torch"}}, 10, 1)
	big := strings.Repeat("the nouveau driver and pip torch cpu words 0x1234 /usr/lib\n", 8<<20/58)
	start := time.Now()
	m.Predict(big)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("8 MiB took %v", d)
	}
}

// TestFeaturesSkipSMITable: nvidia-smi's table frame and header rows say
// the same words on every machine and are not read; nor is its GPU row,
// whose GPU the doctor reads as a fact (a table added to a report had
// turned its words to another cause); a Markdown table of the report's own
// words is read.
func TestFeaturesSkipSMITable(t *testing.T) {
	prose := "torch.cuda.is_available() returns False on my laptop\n"
	table := "+-----------------------------------------------------------------------------------------+\n" +
		"| NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: 12.4     |\n" +
		"|-----------------------------------------+------------------------+----------------------+\n" +
		"| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n" +
		"|   0  NVIDIA GeForce RTX 3060        Off |   00000000:01:00.0  On |                  N/A |\n" +
		"| 30%   41C    P8             15W /  170W |     512MiB /  12288MiB |      2%      Default |\n" +
		"+-----------------------------------------+------------------------+----------------------+\n"
	got := Features(prose + table)
	for _, w := range []string{"persistence", "volatile", "uncorr", "disp", "mib", "default", "smi"} {
		if slices.Contains(got, w) {
			t.Errorf("nvidia-smi's table word %q was read: %v", w, got)
		}
	}
	for _, w := range Features(prose) {
		if !slices.Contains(got, w) {
			t.Errorf("the prose's word %q was lost beside the table: %v", w, got)
		}
	}
	// The GPU's row names the GPU: a fact, read by the parser.
	if slices.Contains(got, "geforce") {
		t.Errorf("the GPU row's name was read as words: %v", got)
	}
	md := "| package | version |\n| onnxruntime | cpu |\n"
	if got := Features(md); !slices.Contains(got, "onnxruntime") {
		t.Errorf("a Markdown table's words were dropped: %v", got)
	}
}
