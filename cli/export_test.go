package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gpuwizard/internal/synth"
)

// trainTiny trains the 2-class MLP for one epoch; its run folder.
func trainTiny(t *testing.T) (run, data string) {
	t.Helper()
	data = t.TempDir()
	if err := synth.LeftRight(data, 20); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(t.TempDir(), "runs")
	code, _, stderr := call(t, Train, nil, "--data", data, "--model", "mlp", "--image-size", "8", "--epochs", "1", "--project", project, "--name", "tiny", "--json")
	if code != ExitOK {
		t.Fatalf("train: %d %s", code, stderr)
	}
	return filepath.Join(project, "tiny"), data
}

func TestExport(t *testing.T) {
	run, _ := trainTiny(t)
	out := filepath.Join(t.TempDir(), "tiny.onnx")
	// RUN before the flags, as the usage has it.
	code, _, stderr := call(t, Export, nil, run, "--format", "onnx", "--out", out)
	if st, err := os.Stat(out); code != ExitOK || err != nil || st.Size() < 1000 || !strings.Contains(stderr, "wrote "+out) {
		t.Fatalf("export onnx: %d %s (%v)", code, stderr, err)
	}
	// The default format is onnx; an existing --out is refused.
	if code, _, stderr := call(t, Export, nil, "--out", out, run); code != ExitUsage || !strings.Contains(stderr, "already exists") {
		t.Fatalf("export over a file: %d %s", code, stderr)
	}
	dest := filepath.Join(t.TempDir(), "copy")
	if code, _, stderr := call(t, Export, nil, run, "--format", "folder", "--out", dest); code != ExitOK {
		t.Fatalf("export folder: %d %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dest, "best.ckpt")); err != nil {
		t.Fatalf("the copied run: %v", err)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{run}, "give a run and a file"},
		{[]string{run, "--format", "pt", "--out", filepath.Join(t.TempDir(), "m.pt")}, `--format "pt"`},
		{[]string{filepath.Join(t.TempDir(), "none"), "--out", filepath.Join(t.TempDir(), "m.onnx")}, "no such file"},
		{[]string{run, "--out", filepath.Join(t.TempDir(), "m.onnx"), "extra"}, "unexpected argument"},
	} {
		if code, _, stderr := call(t, Export, nil, c.args...); code != ExitUsage || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: %d %s (want 2 and %q)", c.args, code, stderr, c.msg)
		}
	}
}

func TestPredictJSON(t *testing.T) {
	run, data := trainTiny(t)
	img := filepath.Join(data, "right", "000.png")
	code, out, stderr := call(t, Predict, nil, "--model", run, "--json", "--top", "1", "--invert", "no", img, "/nonexistent/b.png")
	if code != ExitUsage || !strings.Contains(stderr, "/nonexistent/b.png") {
		t.Fatalf("predict --json: %d %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("one line per image, got:\n%s", out)
	}
	var got struct {
		Image string    `json:"image"`
		Probs []float64 `json:"probs"`
		Top   []struct {
			Class int     `json:"class"`
			Name  string  `json:"name"`
			Prob  float64 `json:"prob"`
		} `json:"top"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatal(err)
	}
	if got.Image != img || len(got.Probs) != 2 || math.Abs(got.Probs[0]+got.Probs[1]-1) > 1e-9 || len(got.Top) != 1 ||
		got.Top[0].Name != "right" || got.Top[0].Class != 1 || got.Top[0].Prob != got.Probs[1] {
		t.Fatalf("predict --json: %s", lines[0])
	}
	if err := json.Unmarshal([]byte(lines[1]), &got); err != nil || got.Image != "/nonexistent/b.png" || !strings.Contains(got.Error, "no such file") {
		t.Fatalf("an unreadable image: %s (%v)", lines[1], err)
	}
}
