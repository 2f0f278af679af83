//go:build unix

package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gpuwizard/internal/synth"
)

func TestLintExitsNonZeroOnDatasetErrors(t *testing.T) {
	// A YOLO data.yaml whose folders hold no images.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "images", "train"), 0o755)
	os.MkdirAll(filepath.Join(dir, "images", "val"), 0o755)
	os.WriteFile(filepath.Join(dir, "data.yaml"), []byte("train: images/train\nval: images/val\nnames: [cat]\n"), 0o644)
	code, out, stderr := call(t, Lint, nil, filepath.Join(dir, "data.yaml"))
	if code != ExitFailed || !strings.Contains(out, "error: "+filepath.Join(dir, "data.yaml")+": the dataset has no images") ||
		!strings.Contains(out, "fix: point train: and val: at the folders") || !strings.Contains(stderr, "lint: 1 error: ") || !strings.Contains(out, "format: yolo, 1 class\n") {
		t.Fatalf("lint of an empty YOLO dataset: exit %d\n%s%s", code, out, stderr)
	}
	// An empty data.yaml.
	os.WriteFile(filepath.Join(dir, "data.yaml"), nil, 0o644)
	if code, _, stderr := call(t, Lint, nil, filepath.Join(dir, "data.yaml")); code != ExitFailed || !strings.Contains(stderr, "expected keys like path, train, val, names") {
		t.Fatalf("lint of an empty data.yaml: exit %d %s", code, stderr)
	}
}

func TestPredictRefusesPipesQuickly(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "digit.png")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, _, stderr := call(t, Predict, nil, "--model", fifo, fifo)
	if code != ExitUsage || !strings.Contains(stderr, fifo+" is a named pipe (FIFO)") || time.Since(start) > 5*time.Second {
		t.Fatalf("predict with a FIFO model: exit %d %s", code, stderr)
	}
	code, _, stderr = call(t, Train, nil, "--config", fifo)
	if code != ExitUsage || !strings.Contains(stderr, fifo+" is a named pipe (FIFO)") || time.Since(start) > 5*time.Second {
		t.Fatalf("train --config FIFO: exit %d %s", code, stderr)
	}
}

// Names from users' folders never reach the terminal raw: a dataset whose
// class folders are named with an escape sequence and a newline.
func TestOutputEscapesNames(t *testing.T) {
	root := t.TempDir()
	for _, c := range []string{"red\x1b[31m", "two\nlines"} {
		if err := synth.LeftRight(filepath.Join(root, "tmp"), 3); err != nil {
			t.Fatal(err)
		}
		os.Rename(filepath.Join(root, "tmp", "left"), filepath.Join(root, c))
		os.RemoveAll(filepath.Join(root, "tmp"))
	}
	var out, errb bytes.Buffer
	env := Env{Stdout: &out, Stderr: &errb}
	Run(context.Background(), []string{"lint", root}, env)
	Run(context.Background(), []string{"train", "--data", root, "--model", "mlp", "--image-size", "8", "--epochs", "1", "--project", filepath.Join(t.TempDir(), "runs")}, env)
	all := out.String() + errb.String()
	if strings.ContainsRune(all, 0x1b) || !strings.Contains(all, `red\x1b[31m`) || !strings.Contains(all, `two\nlines`) {
		t.Errorf("names not escaped in:\n%q", all)
	}
}
