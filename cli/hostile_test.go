//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
