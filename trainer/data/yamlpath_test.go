package data

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// shapes writes a small YOLO dataset under root/ds (two train images,
// one val image, their labels) and returns ds.
func shapes(t *testing.T, root string) string {
	ds := filepath.Join(root, "ds")
	writePNG(t, filepath.Join(ds, "images", "train", "a.png"), 0, 1, false)
	writePNG(t, filepath.Join(ds, "images", "train", "b.png"), 1, 2, false)
	writePNG(t, filepath.Join(ds, "images", "val", "v.png"), 0, 3, false)
	for _, l := range []string{filepath.Join("train", "a.txt"), filepath.Join("train", "b.txt"), filepath.Join("val", "v.txt")} {
		write(t, filepath.Join(ds, "labels", l), "0 0.5 0.5 0.2 0.2\n")
	}
	return ds
}

// A data.yaml written on Windows: backslashes between folders in train:
// and val: and in a list file's lines, read as separators on every
// system; path: the dataset's folder as an absolute path of this system
// (C:\…\ds under Windows), without quotes.
func TestYOLOWindowsPaths(t *testing.T) {
	ds := shapes(t, t.TempDir())
	write(t, filepath.Join(ds, "val.txt"), ".\\images\\val\\v.png\r\n")
	write(t, filepath.Join(ds, "data.yaml"), "path: "+ds+"\r\ntrain: images\\train\r\nval: val.txt\r\nnames: [shape]\r\n")
	lint, err := LintDetection(filepath.Join(ds, "data.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if lint.Images["train"] != 2 || lint.Images["val"] != 1 || len(lint.Errors()) != 0 || strings.Contains(lint.Summary(), "without") {
		t.Errorf("images %v, problems:\n%s", lint.Images, lint.Summary())
	}
}

// A Windows path where this system has no volumes (C:\datasets\x read on
// Linux) is an error that says so, not a folder joined to data.yaml's;
// one in double quotes, where YAML reads its backslashes as escapes,
// gets the quoting explained.
func TestYOLOForeignOrQuotedPaths(t *testing.T) {
	ds := shapes(t, t.TempDir())
	yaml := filepath.Join(ds, "data.yaml")
	if !foreignAbs(`C:\datasets\x`) {
		// A Linux-only check: where C:\ is a path of this system, the
		// dataset's own absolute path is tested by TestYOLOWindowsPaths.
		write(t, yaml, "path: .\ntrain: images/train\nval: images/val\nnames: [shape]\n")
	} else {
		write(t, yaml, "path: C:\\datasets\\x\ntrain: images/train\nval: images/val\nnames: [shape]\n")
		_, err := LintDetection(yaml)
		if !errors.Is(err, ErrData) || !strings.Contains(err.Error(), `data.yaml:1: path: C:\datasets\x is a Windows path`) {
			t.Errorf("path: C:\\datasets\\x read on this system: %v", err)
		}
		write(t, yaml, "path: .\ntrain: \\\\nas\\share\\images\nval: images/val\nnames: [shape]\n")
		if _, err := LintDetection(yaml); err == nil || !strings.Contains(err.Error(), `data.yaml:2: train: \\nas\share\images is a Windows path`) {
			t.Errorf("a UNC train: read on this system: %v", err)
		}
	}
	write(t, yaml, "path: \"C:\\datasets\\x\"\ntrain: images/train\nval: images/val\nnames: [shape]\n")
	_, err := LintDetection(yaml)
	if err == nil || !strings.Contains(err.Error(), "in single quotes (path: 'C:\\datasets\\x')") {
		t.Errorf("a Windows path in double quotes: %v", err)
	}
}

func TestHostPath(t *testing.T) {
	base := t.TempDir()
	if got, want := hostPath(base, `images\train`), filepath.Join("images", "train"); got != want {
		t.Errorf("hostPath = %q, want %q", got, want)
	}
	if got, want := hostPath(base, "images/train"), filepath.Join("images", "train"); got != want {
		t.Errorf("hostPath = %q, want %q", got, want)
	}
	if foreignAbs("images/train") || foreignAbs(`.\images`) || foreignAbs("/data/x") && filepath.IsAbs("/data/x") {
		t.Error("a relative path, or one of this system, is not foreign")
	}
}
