package data

import (
	"errors"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gpuwizard/internal/safefile"
)

// TestLintYOLOImages: the lint hands a loader each split's readable
// images, each once, and the same problems LintDetection reports.
func TestLintYOLOImages(t *testing.T) {
	root := t.TempDir()
	for i, n := range []string{"b", "a", "c"} {
		writePNG(t, filepath.Join(root, "images", "train", n+".png"), i%2, i, false)
	}
	write(t, filepath.Join(root, "images", "train", "broken.png"), "not a png")
	writePNG(t, filepath.Join(root, "images", "val", "v.png"), 0, 9, false)
	write(t, filepath.Join(root, "list.txt"), "images/train/a.png\nimages/train/a.png\nimages/val/v.png\n")
	y := filepath.Join(root, "data.yaml")
	write(t, y, "train: [images/train, images/train]\nval: list.txt\nnames: [x, y]\n")
	cfg, lint, err := LintYOLO(root)
	if err != nil {
		t.Fatal(err)
	}
	base := func(ps []string) string {
		var out []string
		for _, p := range ps {
			out = append(out, filepath.Base(p))
		}
		return strings.Join(out, " ")
	}
	if got := base(cfg.Images["train"]); got != "a.png b.png c.png" {
		t.Fatalf("train images: %s", got)
	}
	if got := base(cfg.Images["val"]); got != "a.png v.png" {
		t.Fatalf("val images: %s", got)
	}
	again, err := LintDetection(y)
	if err != nil || again.Summary() != lint.Summary() || !strings.Contains(lint.Summary(), "broken.png") {
		t.Fatalf("LintDetection says otherwise (%v):\n%s\n---\n%s", err, again.Summary(), lint.Summary())
	}
	if lint.TrainingError(y) != nil {
		t.Fatalf("warnings only, yet: %v", lint.TrainingError(y))
	}
	if _, err := Load(y, Options{}); !errors.Is(err, ErrData) || !strings.Contains(err.Error(), "train a detector on it") {
		t.Fatalf("a classifier's Load of a YOLO set: %v", err)
	}
	lint.Add(Problem{Severity: LintError, File: y, Message: "m", Fix: "f"})
	if err := lint.TrainingError(y); !errors.Is(err, ErrData) || !strings.Contains(err.Error(), "cannot be trained on (1 problem; the first: error: "+y+": m (fix: f))") {
		t.Fatalf("%v", err)
	}
}

// TestImageDecoder: images inside the folder decode; a link out of it, a
// pipe or a label file over the cap are refused with the reason.
func TestImageDecoder(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	writePNG(t, filepath.Join(root, "in.png"), 0, 1, true)
	writePNG(t, filepath.Join(outside, "out.png"), 0, 1, true)
	// The link is checked where the system makes one that leads to the
	// file: Windows may refuse to make it, Wine makes one it cannot follow.
	link := filepath.Join(root, "link.png")
	linked := os.Symlink(filepath.Join(outside, "out.png"), link) == nil
	if _, err := os.Stat(link); err != nil {
		linked = false
	}
	dec, err := NewImageDecoder(root)
	if err != nil {
		t.Fatal(err)
	}
	var size image.Point
	if err := dec.Decode(filepath.Join(root, "in.png"), func(img image.Image) { size = img.Bounds().Size() }); err != nil || size != image.Pt(20, 16) {
		t.Fatalf("in.png: %v, %v", err, size)
	}
	if linked {
		err = dec.Decode(filepath.Join(root, "link.png"), func(image.Image) { t.Fatal("decoded a file outside the dataset") })
		if !errors.Is(err, safefile.ErrOutside) || ImageProblem("link.png", err).Severity != LintWarning {
			t.Fatalf("link out: %v", err)
		}
	}
	write(t, filepath.Join(root, "fake.png"), "\x89PNG\r\n\x1a\n not really")
	if err := dec.Decode(filepath.Join(root, "fake.png"), func(image.Image) { t.Fatal("decoded garbage") }); err == nil {
		t.Fatal("garbage decoded")
	}
	write(t, filepath.Join(root, "big.txt"), strings.Repeat("0 0.5 0.5 0.1 0.1\n", 10))
	if _, err := dec.ReadFile(filepath.Join(root, "big.txt"), 20, "a YOLO label file"); !errors.Is(err, safefile.ErrTooLarge) {
		t.Fatalf("over the cap: %v", err)
	}
	if _, err := NewImageDecoder(filepath.Join(root, "missing")); !errors.Is(err, ErrData) {
		t.Fatalf("a missing folder: %v", err)
	}
}
