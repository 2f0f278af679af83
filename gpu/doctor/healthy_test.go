package doctor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/gpu/paste"
)

// quiet checks a report of a working machine: ready, no error or warning,
// and no advice to reinstall the working torch.
func quiet(t *testing.T, name string, r gpu.Report) {
	t.Helper()
	if !r.Ready {
		t.Errorf("%s: not ready: %s", name, r.Verdict)
	}
	for _, f := range r.Findings {
		if f.Severity == gpu.SevError || f.Severity == gpu.SevWarning {
			t.Errorf("%s: %s %s: %s", name, f.Severity, f.ID, f.Title)
		}
		for _, s := range f.Fix {
			if strings.Contains(s.Command, "--force-reinstall") {
				t.Errorf("%s: %s advises %q on a working install", name, f.ID, s.Command)
			}
		}
	}
}

// TestHealthyMachinesStayQuiet: the facts and the reports of a working
// H100 machine (driver 580, CUDA 13, torch 2.11.0+cu130 in a venv, JAX with
// CUDA 13 plugins), as gpuwizard doctor --save and the usual tools wrote
// them there.
func TestHealthyMachinesStayQuiet(t *testing.T) {
	matrix := mustMatrix(t)
	dir := filepath.Join("..", "testdata", "healthy")
	b, err := os.ReadFile(filepath.Join(dir, "h100-healthy-facts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f gpu.Facts
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	quiet(t, "h100-healthy-facts.json", Diagnose(&f, matrix))
	pastes, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	if len(pastes) < 4 {
		t.Fatalf("%d healthy reports, want nvidia-smi, nvidia-smi -q, collect_env and nvcc+pip", len(pastes))
	}
	for _, p := range pastes {
		text, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		facts := paste.Parse(string(text), time.Now())
		if len(facts.Paste.Formats) == 0 {
			t.Errorf("%s: no format recognised", filepath.Base(p))
		}
		quiet(t, filepath.Base(p), Diagnose(facts, matrix))
	}
}

// TestSavedFactsStillJudged: facts saved by the version before the doctor
// was rebuilt (schema 1) load and get the same most important finding as
// the machines they came from.
func TestSavedFactsStillJudged(t *testing.T) {
	matrix := mustMatrix(t)
	want := map[string]string{}
	for _, sc := range scenarios() {
		want[sc.name] = sc.top
	}
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "facts-v1", "*.json"))
	if len(files) < 10 {
		t.Fatalf("%d saved facts files", len(files))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var f gpu.Facts
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r := Diagnose(&f, matrix)
		if top, ok := want[name]; ok && (len(r.Findings) == 0 || r.Findings[0].ID != top) {
			t.Errorf("%s: top finding %v, want %s", name, r.Findings, top)
		}
	}
}
