//go:build unix

package data

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpuwizard/internal/safefile"
)

// yoloSet writes a YOLO dataset with n labelled images in images/train.
func yoloSet(t *testing.T, root string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("i%d", i)
		writePNG(t, filepath.Join(root, "images", "train", name+".png"), 0, i, false)
		write(t, filepath.Join(root, "labels", "train", name+".txt"), "0 0.5 0.5 0.2 0.2\n")
	}
}

// `gpuwizard lint .` in the dataset: every label is found, and a real
// error is an error.
func TestYOLOLintByRelativePath(t *testing.T) {
	root := t.TempDir()
	yoloSet(t, root, 2)
	write(t, filepath.Join(root, "labels", "train", "i1.txt"), "5 0.5 0.5 0.2 0.2\n")
	write(t, filepath.Join(root, "data.yaml"), "train: images/train\nval: images/train\nnames: [a]\n")
	t.Chdir(root)
	for _, path := range []string{".", "data.yaml", "./data.yaml"} {
		lint, err := LintDetection(path)
		if err != nil {
			t.Fatal(err)
		}
		sum := lint.Summary()
		if strings.Contains(sum, "without a label file") || len(lint.Errors()) != 1 || !strings.Contains(sum, "i1.txt:1: class id 5 ≥ nc (1)") {
			t.Errorf("lint %s:\n%s", path, sum)
		}
	}
}

func TestYOLOHostileLists(t *testing.T) {
	root := t.TempDir()
	ds := filepath.Join(root, "ds")
	yoloSet(t, ds, 3)
	// nc: 100000000 and no names: refused at once.
	write(t, filepath.Join(ds, "nc.yaml"), "train: images/train\nval: images/train\nnc: 100000000\n")
	inTime(t, 2*time.Second, "nc: 100000000", func() {
		if _, err := LintDetection(filepath.Join(ds, "nc.yaml")); err == nil || !strings.Contains(err.Error(), "nc.yaml:3: nc must be a whole number of classes from 1 to 100000") {
			t.Errorf("nc: 100000000: %v", err)
		}
	})
	// One folder listed 50,000 times: its 3 images, counted once.
	var b strings.Builder
	b.WriteString("train:\n")
	for i := 0; i < 50000; i++ {
		b.WriteString("  - images/train\n")
	}
	b.WriteString("val: images/train\nnames: [a]\n")
	write(t, filepath.Join(ds, "repeat.yaml"), b.String())
	inTime(t, 10*time.Second, "a folder listed 50,000 times", func() {
		lint, err := LintDetection(filepath.Join(ds, "repeat.yaml"))
		if err != nil || lint.Images["train"] != 3 || !strings.Contains(lint.Summary(), "train: images/train is listed 50000 times; its images are counted once") {
			t.Errorf("repeated folder: %v\n%v", err, lint.Summary())
		}
	})
	// A list file naming files outside the dataset, and one image 1,000 times.
	outside := filepath.Join(root, "secret.png")
	writePNG(t, outside, 0, 0, false)
	other := filepath.Join(root, "other.png")
	writePNG(t, other, 0, 1, false)
	list := "images/train/i0.png\n../secret.png\n" + other + "\n/etc/passwd\n" + strings.Repeat("images/train/i1.png\n", 1000)
	write(t, filepath.Join(ds, "train.txt"), list)
	write(t, filepath.Join(ds, "list.yaml"), "train: train.txt\nval: images/train\nnames: [a]\n")
	lint, err := LintDetection(filepath.Join(ds, "list.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sum := lint.Summary()
	for _, want := range []string{"train.txt:2: " + outside + " is outside the dataset's folder", "train.txt:3: " + other + " is outside", "train.txt:4: /etc/passwd is outside",
		"999 lines name the same image as an earlier line"} {
		if !strings.Contains(sum, want) {
			t.Errorf("list file: lacks %q:\n%s", want, sum)
		}
	}
	if lint.Images["train"] != 2 || len(lint.Errors()) != 3 {
		t.Errorf("list file: %d train images, %d errors, want 2 and 3:\n%s", lint.Images["train"], len(lint.Errors()), sum)
	}
}

// A data.yaml whose images are all unreadable is an error, not a pass.
func TestYOLOAllUnreadable(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "images", "train", "a.png"), "not an image")
	write(t, filepath.Join(root, "images", "train", "b.jpg"), "nor this")
	write(t, filepath.Join(root, "labels", "train", "a.txt"), "0 0.5 0.5 0.1 0.1\n")
	write(t, filepath.Join(root, "data.yaml"), "train: images/train\nval: images/train\nnames: [a]\n")
	lint, err := LintDetection(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(lint.Errors()) != 2 || !strings.Contains(lint.Summary(), "none of the 2 images of the train split can be read") {
		t.Errorf("all unreadable:\n%s", lint.Summary())
	}
}

// 20,000 dangling links without a digit in their names: seconds, and a
// report of a few lines that still counts them all.
func TestLintOutputIsCappedPerKind(t *testing.T) {
	root := hostileFolder(t)
	for i := 0; i < 20000; i++ {
		name := string([]byte{byte('a' + i/17576%26), byte('a' + i/676%26), byte('a' + i/26%26), byte('a' + i%26)}) + ".png"
		os.Symlink(filepath.Join(root, "nowhere", name), filepath.Join(root, "a", name))
	}
	var d *Dataset
	var err error
	start := time.Now()
	defer func() { t.Logf("load: %s", time.Since(start)) }()
	inTime(t, 20*time.Second, "lint of 20,000 dangling links", func() { d, err = Load(root, Options{ImageSize: 8, Seed: 1}) })
	if err != nil {
		t.Fatal(err)
	}
	sum := d.Lint.Summary()
	if len(d.Lint.Problems) != MaxPerKind || !strings.Contains(sum, "… and 19,980 more warnings of this kind") || len(sum) > 20000 {
		t.Errorf("%d problems listed, %d bytes:\n%.3000s", len(d.Lint.Problems), len(sum), sum)
	}
	js, _ := json.Marshal(d.Lint)
	if !strings.Contains(string(js), `"omitted":{"warning: delete the dangling link, or put the image back where it points":19980}`) {
		t.Errorf("JSON lacks the omitted count: %.500s", js)
	}
}

// Hidden class folders and links out of the dataset are named, not lost
// without a word; a link that stays inside is followed.
func TestFolderSkipsAreNamed(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ds")
	for _, c := range []string{"a", "b", ".ipynb_checkpoints"} {
		for i := 0; i < 3; i++ {
			writePNG(t, filepath.Join(root, c, fmt.Sprintf("%d.png", i)), i%2, i, false)
		}
	}
	for i := 0; i < 3; i++ {
		writePNG(t, filepath.Join(base, "elsewhere", fmt.Sprintf("%d.png", i)), 1, i, false)
		writePNG(t, filepath.Join(root, ".store", "c", fmt.Sprintf("%d.png", i)), 1, i, false)
	}
	os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(root, "linked"))
	os.Symlink(filepath.Join(root, ".store", "c"), filepath.Join(root, "inside"))
	os.Symlink(filepath.Join(base, "elsewhere", "0.png"), filepath.Join(root, "a", "out.png"))
	d, err := Load(root, Options{ImageSize: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	sum := d.Lint.Summary()
	for _, want := range []string{
		filepath.Join(root, ".ipynb_checkpoints") + ": hidden folder skipped",
		filepath.Join(root, "linked") + ": folder skipped: " + filepath.Join(root, "linked") + " leads to " + filepath.Join(base, "elsewhere") + ", outside the folder",
		filepath.Join(root, "a", "out.png") + ": skipped: ",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("lacks %q:\n%s", want, sum)
		}
	}
	if strings.Join(d.Classes, ",") != "a,b,inside" {
		t.Errorf("classes %v, want a, b, inside (a link inside the dataset)", d.Classes)
	}
}

// Control characters in names never reach the terminal raw.
func TestNamesAreEscaped(t *testing.T) {
	root := t.TempDir()
	for _, c := range []string{"red\x1b[31m", "two\nlines"} {
		for i := 0; i < 3; i++ {
			writePNG(t, filepath.Join(root, c, fmt.Sprintf("%d.png", i)), i%2, i, false)
		}
	}
	write(t, filepath.Join(root, "two\nlines", "bad\x1b]0;title\x07.png"), "corrupt")
	d, err := Load(root, Options{ImageSize: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	sum := d.Lint.Summary()
	if strings.ContainsAny(sum, "\x1b\x07") || !strings.Contains(sum, `red\x1b[31m=`) || !strings.Contains(sum, `two\nlines=`) || !strings.Contains(sum, `bad\x1b]0;title\x07.png`) {
		t.Errorf("names not escaped:\n%q", sum)
	}
}

// IDX and CIFAR files linked from outside their folder are refused, like
// images: no reader follows a link out of the dataset.
func TestFixedFormatsStayInTheirFolder(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	os.MkdirAll(real, 0o755)
	os.WriteFile(filepath.Join(real, "train-images-idx3-ubyte.gz"), gz(idxBytes([]int{10, 8, 8}, make([]byte, 640))), 0o644)
	os.WriteFile(filepath.Join(real, "train-labels-idx1-ubyte.gz"), gz(idxBytes([]int{10}, make([]byte, 10))), 0o644)
	os.WriteFile(filepath.Join(real, "data_batch_1.bin"), make([]byte, 3073*4), 0o644)
	ds := filepath.Join(base, "ds")
	os.MkdirAll(ds, 0o755)
	for _, f := range []string{"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"} {
		os.Symlink(filepath.Join(real, f), filepath.Join(ds, f))
	}
	cif := filepath.Join(base, "cifar")
	os.MkdirAll(cif, 0o755)
	os.Symlink(filepath.Join(real, "data_batch_1.bin"), filepath.Join(cif, "data_batch_1.bin"))
	for _, dir := range []string{ds, cif} {
		if _, err := Load(dir, Options{}); !errors.Is(err, safefile.ErrOutside) || !strings.Contains(err.Error(), "leads to "+real) {
			t.Errorf("%s: %v", dir, err)
		}
	}
	// The folder itself reached through a link is fine.
	link := filepath.Join(base, "link")
	os.Symlink(real, link)
	if _, err := Load(link, Options{}); err != nil && errors.Is(err, safefile.ErrOutside) {
		t.Errorf("a dataset folder reached through a link: %v", err)
	}
}
