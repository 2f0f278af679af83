package doctor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gpuwizard/gpu"
)

// TestToldTrouble: a person telling of their own machine or work is a
// report of trouble, with or without a trouble word; what tools print, code
// and a question of what to buy are not.
func TestToldTrouble(t *testing.T) {
	told := []string{
		"My RTX 4060 laptop trains YOLOv8 at 2 it/s with Windows 11 and torch 2.3",
		"I installed CUDA 12.4 and cuDNN, then pytorch from pip, and training takes hours",
		"我的电脑是3060，装了pytorch，训练很慢",
		"Tengo una RTX 3070 y el entrenamiento va muy lento",
		"### Describe the bug\nTraining runs at CPU speed.",
		"GPU support?",
	}
	for _, s := range told {
		if toldTrouble(s) == "" {
			t.Errorf("%q: not read as a report", s)
		}
	}
	quiet := []string{
		"for i in range(10):\n    x = model(i)\n",
		"Which GPU should I buy for training, a 4090 or two 3090s?",
		"Timestamp : Mon Nov 23 09:16:03 2026\nDriver Version : 580.95.05",
	}
	for _, name := range []string{"collect_env.txt", "nvidia-smi.txt", "nvidia-smi-q.txt", "nvcc-pip.txt"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "healthy", name))
		if err != nil {
			t.Fatal(err)
		}
		quiet = append(quiet, string(b))
	}
	for _, s := range quiet {
		if q := toldTrouble(s); q != "" {
			t.Errorf("%.40q: read as a report told (%q)", s, q)
		}
	}
}

// TestToldReportGetsDifferential: a first-person report with no trouble
// word, no error text and no fact that decides gets the differential's
// likely causes (it had got "nothing recognised").
func TestToldReportGetsDifferential(t *testing.T) {
	r := diagnoseText(t, "I use a GeForce RTX 3060 on Windows 11 and installed torch with pip install torch torchvision, "+
		"the training of my YOLO model takes hours and the GPU sits at 0% in the task manager")
	if len(r.Findings) == 0 || !strings.HasPrefix(r.Findings[0].ID, "report_likely_") {
		t.Fatalf("want the differential first, got %v", findingIDs(r))
	}
	if r.Findings[0].Cause != gpu.CauseCPUOnlyBuild {
		t.Errorf("first %s, want cpu_only_build (pip's torch on Windows)", r.Findings[0].Cause)
	}
}

// TestLookalikesFillDifferential: a thin report whose facts speak for one
// cause gets that cause's lookalikes after it, each with evidence and the
// command that tells it apart; a cause the report's facts rule out is not
// named.
func TestLookalikesFillDifferential(t *testing.T) {
	r := diagnoseText(t, "Dockerコンテナの中でGPUが認識されない")
	top := topCauses(r, 3)
	if len(top) != 3 || top[0] != gpu.CauseWSLOrContainer {
		t.Fatalf("first three %v (%v), want wsl_or_container and two lookalikes", top, findingIDs(r))
	}
	for _, f := range r.Findings[1:3] {
		if !strings.HasPrefix(f.ID, "report_likely_") || len(f.Evidence) == 0 || len(f.Fix) == 0 || f.Fix[0].Command == "" {
			t.Errorf("%s: want evidence and a command that tells it apart, got %+v", f.ID, f)
		}
	}
	// torch's CUDA build, shown, rules out a CPU-only build: the lookalike
	// of a second install is named, the CPU-only build not.
	r = diagnoseText(t, "I use torch 2.4.1+cu121 in my venv and in PyCharm torch.cuda.is_available() returns False")
	if slices.Contains(topCauses(r, 3), gpu.CauseCPUOnlyBuild) {
		t.Errorf("a CUDA build shown, yet cpu_only_build named: %v", findingIDs(r))
	}
}

// TestHostedWithItsGPUShown: a notebook or cloud machine whose GPU
// nvidia-smi shows in use (0% utilisation) has its GPU: the hosted
// runtime's cue (a session without a GPU) stays out.
func TestHostedWithItsGPUShown(t *testing.T) {
	r := diagnoseText(t, "I train on a Colab VM with a T4 and it is very slow; nvidia-smi shows 0% utilization while it trains. "+
		"main.py sets gpu_device=1 though the VM has one GPU")
	if len(r.Findings) == 0 || r.Findings[0].Cause == gpu.CauseWSLOrContainer {
		t.Fatalf("first finding %v, want another cause than a hosted runtime without a GPU", findingIDs(r))
	}
}
