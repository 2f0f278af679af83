//go:build unix

package data

import (
	"bytes"
	"compress/gzip"
	"errors"
	"image"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gpuwizard/internal/safefile"
)

// within fails the test when f takes longer than d (a hang).
func inTime(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %s", what, d)
	}
}

func TestImageBombIsSkippedUndecoded(t *testing.T) {
	root := hostileFolder(t)
	bomb := filepath.Join(root, "a", "bomb.png")
	os.WriteFile(bomb, pngHeader(30000, 30000), 0o644)
	var d *Dataset
	var err error
	inTime(t, 10*time.Second, "loading a folder with an image bomb", func() { d, err = Load(root, Options{ImageSize: 8}) })
	if err != nil {
		t.Fatal(err)
	}
	sum := d.Lint.Summary()
	if !strings.Contains(sum, bomb+": skipped without decoding: image too large: the png header declares") || !strings.Contains(sum, "30000x30000 (900 Mpx), more than the 50 Mpx") {
		t.Fatalf("no warning naming the bomb:\n%s", sum)
	}
	if d.Train.Len()+d.Val.Len() != 8 {
		t.Fatalf("%d images kept, want the 8 good ones", d.Train.Len()+d.Val.Len())
	}
	// predict refuses it the same way.
	_, err = DecodeImageFile(bomb)
	if !errors.Is(err, ErrImageTooLarge) || !strings.Contains(err.Error(), bomb) || !strings.Contains(err.Error(), "shrink it below 50 megapixels") {
		t.Fatalf("DecodeImageFile: %v", err)
	}
	// An image of exactly the budget passes the header check.
	if _, _, err := checkImageHeader(bytes.NewReader(pngHeader(10000, 5000)), MaxImagePixels); err != nil {
		t.Fatalf("50 Mpx: %v", err)
	}
	if _, _, err := checkImageHeader(bytes.NewReader(pngHeader(10000, 5001)), MaxImagePixels); !errors.Is(err, ErrImageTooLarge) {
		t.Fatalf("50.01 Mpx: %v", err)
	}
}

func TestTIFFOffsetsDoNotAllocate(t *testing.T) {
	// A 8-byte TIFF whose first IFD is at 2 GiB: x/image/tiff on a plain
	// reader would buffer 2 GiB to reach it.
	raw := []byte("II*\x00\xff\xff\xff\x7f")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := decodeChecked(bytes.NewReader(raw), defaultImageLimits(), nil, func(image.Image) {})
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a TIFF without an IFD decoded")
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Fatalf("reading the header allocated %d bytes", got)
	}
}

func TestDevicesAndPipesAreRefused(t *testing.T) {
	root := hostileFolder(t)
	zero := filepath.Join(root, "a", "zero.jpg")
	fifo := filepath.Join(root, "b", "pipe.png")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	var d *Dataset
	var err error
	inTime(t, 10*time.Second, "a folder with /dev/zero and a FIFO", func() { d, err = Load(root, Options{ImageSize: 8}) })
	if err != nil {
		t.Fatal(err)
	}
	sum := d.Lint.Summary()
	for _, want := range []string{zero + ": skipped: " + zero + " (a link to /dev/zero) is a character device, not a regular file", fifo + ": skipped: " + fifo + " is a named pipe (FIFO), not a regular file"} {
		if !strings.Contains(sum, want) {
			t.Errorf("lint lacks %q:\n%s", want, sum)
		}
	}
	if _, err := DecodeImageFile(fifo); !errors.Is(err, safefile.ErrNotRegular) {
		t.Errorf("predict on a FIFO: %v", err)
	}

	// A CIFAR batch that is a link to /dev/zero, an IDX file that is a FIFO.
	cifar := t.TempDir()
	os.Symlink("/dev/zero", filepath.Join(cifar, "data_batch_1.bin"))
	inTime(t, 10*time.Second, "CIFAR on /dev/zero", func() { _, err = Load(cifar, Options{}) })
	if !errors.Is(err, safefile.ErrNotRegular) || !strings.Contains(err.Error(), "data_batch_1.bin (a link to /dev/zero) is a character device") {
		t.Errorf("CIFAR batch on /dev/zero: %v", err)
	}
	idx := t.TempDir()
	syscall.Mkfifo(filepath.Join(idx, "train-images-idx3-ubyte.gz"), 0o644)
	os.WriteFile(filepath.Join(idx, "train-labels-idx1-ubyte.gz"), gz(idxBytes([]int{1}, []byte{1})), 0o644)
	inTime(t, 10*time.Second, "IDX on a FIFO", func() { _, err = Load(idx, Options{}) })
	if !errors.Is(err, safefile.ErrNotRegular) || !strings.Contains(err.Error(), "train-images-idx3-ubyte.gz is a named pipe") {
		t.Errorf("IDX FIFO: %v", err)
	}

	// YOLO: a list file that is a FIFO, an image linked to /dev/zero, a
	// label file linked to /dev/zero, a data.yaml that is a FIFO.
	y := t.TempDir()
	writePNG(t, filepath.Join(y, "images", "val", "v.png"), 0, 0, false)
	write(t, filepath.Join(y, "labels", "val", "v.txt"), "0 0.5 0.5 0.2 0.2\n")
	writePNG(t, filepath.Join(y, "images", "val", "w.png"), 0, 1, false)
	os.Symlink("/dev/zero", filepath.Join(y, "labels", "val", "w.txt"))
	os.Symlink("/dev/zero", filepath.Join(y, "images", "val", "z.jpg"))
	syscall.Mkfifo(filepath.Join(y, "train.txt"), 0o644)
	write(t, filepath.Join(y, "data.yaml"), "train: train.txt\nval: images/val\nnames: [a]\n")
	var lint *Lint
	inTime(t, 10*time.Second, "YOLO with FIFOs and /dev/zero", func() { lint, err = LintDetection(filepath.Join(y, "data.yaml")) })
	if err != nil {
		t.Fatal(err)
	}
	sum = lint.Summary()
	for _, want := range []string{"train.txt: unreadable list file", "train.txt is a named pipe (FIFO)", "z.jpg: skipped: ", "w.txt: unreadable label file", "w.txt (a link to /dev/zero) is a character device", "the train split (" + filepath.Join(y, "train.txt") + ") has no images"} {
		if !strings.Contains(sum, want) {
			t.Errorf("YOLO lint lacks %q:\n%s", want, sum)
		}
	}
	fy := filepath.Join(t.TempDir(), "data.yaml")
	syscall.Mkfifo(fy, 0o644)
	inTime(t, 10*time.Second, "a data.yaml FIFO", func() { _, err = LintDetection(fy) })
	if !errors.Is(err, safefile.ErrNotRegular) {
		t.Errorf("data.yaml FIFO: %v", err)
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func TestGzipBombIDX(t *testing.T) {
	// A valid header for 2 images of 2×2, then 64 MiB of zeros: only the
	// 8 declared bytes are inflated.
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(idxBytes([]int{2, 2, 2}, []byte{1, 2, 3, 4, 5, 6, 7, 8}))
	zw.Write(make([]byte, 64<<20))
	zw.Close()
	cr := &countingReader{r: bytes.NewReader(buf.Bytes())}
	dims, px, err := ReadIDX("bomb.gz", cr)
	if err != nil || len(dims) != 3 || !bytes.Equal(px, []byte{1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Fatalf("bomb with a small header: %v %v %v", dims, px, err)
	}
	if cr.n > int64(buf.Len())/4 {
		t.Fatalf("read %d of %d compressed bytes: the reader went past what the header declares", cr.n, buf.Len())
	}
	// Huge dimensions: a clear error before anything is allocated, never
	// "too few images to keep any for validation".
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "train-images-idx3-ubyte.gz"), gz(idxBytes([]int{3000000, 1000, 1000}, nil)), 0o644)
	os.WriteFile(filepath.Join(dir, "train-labels-idx1-ubyte.gz"), gz(idxBytes([]int{3000000}, nil)), 0o644)
	_, err = Load(dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "train-images-idx3-ubyte.gz: the header declares 3000000×1000×1000 (2.73 TiB of data): with labels and records the dataset would take 2.73 TiB in memory, more than the 2 GiB a dataset may take: the header is corrupt, or train on a subset (at most 2147 images of 1000x1000 fit)") {
		t.Fatalf("huge dimensions: %v", err)
	}
	_, _, err = ParseIDX("f", gz(idxBytes([]int{1, 30000, 30000}, nil)))
	if err == nil || !strings.Contains(err.Error(), "images of 30000x30000 pixels, more than the 50 Mpx") {
		t.Fatalf("huge images: %v", err)
	}
	// A header that is within the limits but has one image: the error says
	// how many there are.
	os.WriteFile(filepath.Join(dir, "train-images-idx3-ubyte.gz"), gz(idxBytes([]int{1, 28, 28}, make([]byte, 784))), 0o644)
	os.WriteFile(filepath.Join(dir, "train-labels-idx1-ubyte.gz"), gz(idxBytes([]int{1}, []byte{3})), 0o644)
	if _, err = Load(dir, Options{}); err == nil || !strings.Contains(err.Error(), "1 training image,") {
		t.Fatalf("one image: %v", err)
	}
	// Truncated and damaged streams.
	varied := make([]byte, 4096)
	for i := range varied {
		varied[i] = byte(i*i*31 + i>>3)
	}
	good := gz(idxBytes([]int{16, 16, 16}, varied))
	if _, _, err := ParseIDX("t.gz", good[:len(good)/2]); err == nil || !strings.Contains(err.Error(), "t.gz: the gzip stream is truncated or damaged in the data") {
		t.Fatalf("truncated gzip: %v", err)
	}
}

func TestFolderLintErrorsAndWarnings(t *testing.T) {
	// An empty val folder is an error; so is a dataset without images.
	root := hostileFolder(t)
	os.MkdirAll(filepath.Join(root, "..", filepath.Base(root)), 0o755)
	split := t.TempDir()
	for i := 0; i < 3; i++ {
		writePNG(t, filepath.Join(split, "train", "a", string(rune('a'+i))+".png"), 0, i, false)
		writePNG(t, filepath.Join(split, "train", "b", string(rune('a'+i))+".png"), 1, i, false)
	}
	os.MkdirAll(filepath.Join(split, "val", "a"), 0o755)
	d, err := Load(split, Options{ImageSize: 8})
	if err == nil || !strings.Contains(err.Error(), "the val split has no usable images") || d == nil || len(d.Lint.Errors()) != 1 ||
		!strings.Contains(d.Lint.Errors()[0].Fix, "remove the empty val folder") {
		t.Fatalf("empty val folder: %v", err)
	}
	noImages := t.TempDir()
	os.MkdirAll(filepath.Join(noImages, "a"), 0o755)
	os.MkdirAll(filepath.Join(noImages, "b"), 0o755)
	if _, err := Load(noImages, Options{}); err == nil || !strings.Contains(err.Error(), "no images") {
		t.Fatalf("no images: %v", err)
	}
	// Only bombs: a clear error that names the first one, and the lint.
	bombs := t.TempDir()
	os.MkdirAll(filepath.Join(bombs, "a"), 0o755)
	os.MkdirAll(filepath.Join(bombs, "b"), 0o755)
	os.WriteFile(filepath.Join(bombs, "a", "1.png"), pngHeader(30000, 30000), 0o644)
	os.WriteFile(filepath.Join(bombs, "b", "1.png"), pngHeader(30000, 30000), 0o644)
	d, err = Load(bombs, Options{})
	if err == nil || !strings.Contains(err.Error(), "none of the training images could be read") || d == nil || d.Train == nil || d.Val == nil ||
		!strings.Contains(d.Lint.Summary(), "skipped without decoding: image too large") {
		t.Fatalf("only bombs: %v", err)
	}

	// The same image in two classes, and a strong imbalance (12 to 1).
	imb := t.TempDir()
	for i := 0; i < 12; i++ {
		writePNG(t, filepath.Join(imb, "many", string(rune('a'+i))+".png"), 0, i, false)
	}
	writePNG(t, filepath.Join(imb, "few", "x.png"), 1, 0, false)
	writePNG(t, filepath.Join(imb, "few", "y.png"), 1, 1, false)
	raw, _ := os.ReadFile(filepath.Join(imb, "many", "a.png"))
	os.WriteFile(filepath.Join(imb, "few", "dup.png"), raw, 0o644)
	// 12 + 3 images, 10 % for validation: 11 and 2 in train (5.5×) — add
	// more to "many" to pass 10×.
	for i := 12; i < 30; i++ {
		writePNG(t, filepath.Join(imb, "many", string(rune('A'+i))+".png"), 0, i, false)
	}
	d, err = Load(imb, Options{ImageSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	sum := d.Lint.Summary()
	for _, want := range []string{
		filepath.Join(imb, "many", "a.png") + `: the same image (same content) is in class "few" as ` + filepath.Join(imb, "few", "dup.png"),
		`strong class imbalance in train: "many" has 27 training images, "few" only 2 (14×, more than 10×)`,
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("lint lacks %q:\n%s", want, sum)
		}
	}
	// Balanced: no imbalance warning.
	d, err = Load(hostileFolder(t), Options{ImageSize: 8})
	if err != nil || strings.Contains(d.Lint.Summary(), "imbalance") {
		t.Fatalf("balanced: %v\n%s", err, d.Lint.Summary())
	}
}

func TestSameImagesInIDX(t *testing.T) {
	dir := t.TempDir()
	px := make([]byte, 20*8*8)
	labels := make([]byte, 20)
	for i := range px {
		px[i] = byte(i/64*11 + i%64*3) // 20 different images
	}
	for i := range labels {
		labels[i] = byte(i % 10)
	}
	copy(px[13*64:], px[:64]) // image 13 (a 3) = image 0 (a 0)
	os.WriteFile(filepath.Join(dir, "train-images-idx3-ubyte"), idxBytes([]int{20, 8, 8}, px), 0o644)
	os.WriteFile(filepath.Join(dir, "train-labels-idx1-ubyte"), idxBytes([]int{20}, labels), 0o644)
	d, err := Load(dir, Options{ValSplit: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if sum := d.Lint.Summary(); !strings.Contains(sum, `train image 13 is the same image as train image 0 but labelled "3", not "0"`) || strings.Count(sum, "same image") != 1 {
		t.Fatalf("lint:\n%s", d.Lint.Summary())
	}
}

func TestYOLOLintErrors(t *testing.T) {
	// An empty data.yaml, one with no images, one whose path: leaves the
	// dataset's folder, and an empty val split.
	root := t.TempDir()
	write(t, filepath.Join(root, "empty", "data.yaml"), "")
	if _, err := LintDetection(filepath.Join(root, "empty", "data.yaml")); err == nil || !strings.Contains(err.Error(), "data.yaml: expected keys like path, train, val, names") {
		t.Errorf("empty data.yaml: %v", err)
	}
	none := filepath.Join(root, "none")
	os.MkdirAll(filepath.Join(none, "images", "train"), 0o755)
	os.MkdirAll(filepath.Join(none, "images", "val"), 0o755)
	write(t, filepath.Join(none, "data.yaml"), "path: .\ntrain: images/train\nval: images/val\nnames: [a, b]\n")
	lint, err := LintDetection(filepath.Join(none, "data.yaml"))
	if err != nil || len(lint.Errors()) != 1 || !strings.Contains(lint.Errors()[0].Message, "the dataset has no images") {
		t.Errorf("no images: %v\n%s", err, lint.Summary())
	}
	writePNG(t, filepath.Join(none, "images", "train", "a.png"), 0, 0, false)
	write(t, filepath.Join(none, "labels", "train", "a.txt"), "0 0.5 0.5 0.1 0.1\n")
	lint, err = LintDetection(none)
	if err != nil || len(lint.Errors()) != 1 || !strings.Contains(lint.Errors()[0].String(), "the val split ("+filepath.Join(none, "images", "val")+") has no images") {
		t.Errorf("empty val: %v\n%s", err, lint.Summary())
	}
	for src, want := range map[string]string{
		"path: ..\ntrain: none/images/train\nval: none/images/val\nnames: [a]\n": "data.yaml:1: path: .. points outside the dataset's folder",
		"path: /\ntrain: etc\nval: etc\nnames: [a]\n":                            "data.yaml:1: path: / points outside",
		"train: ../none/images/train\nval: images/val\nnames: [a]\n":             "data.yaml:1: train: ../none/images/train points outside the dataset's folder",
	} {
		dir := filepath.Join(root, "evil")
		os.MkdirAll(filepath.Join(dir, "images", "val"), 0o755)
		write(t, filepath.Join(dir, "data.yaml"), src)
		if _, err := LintDetection(filepath.Join(dir, "data.yaml")); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v (want %q)", src, err, want)
		}
	}
	// A symlink inside the folder that leads out of it counts as outside.
	link := filepath.Join(root, "linked")
	os.MkdirAll(link, 0o755)
	os.Symlink(filepath.Join(none, "images"), filepath.Join(link, "images"))
	write(t, filepath.Join(link, "data.yaml"), "train: images/train\nval: images/train\nnames: [a]\n")
	if _, err := LintDetection(filepath.Join(link, "data.yaml")); err == nil || !strings.Contains(err.Error(), "points outside") {
		t.Errorf("symlink out: %v", err)
	}
	// A data.yaml above the cap.
	big := filepath.Join(root, "big", "data.yaml")
	write(t, big, "names: [a]\n#"+strings.Repeat("x", MaxYAMLFile))
	if _, err := LintDetection(big); !errors.Is(err, safefile.ErrTooLarge) || !strings.Contains(err.Error(), "more than the 1 MiB a data.yaml may have") {
		t.Errorf("big data.yaml: %v", err)
	}
}

func TestDecodeBudgetBoundsConcurrentDecoding(t *testing.T) {
	b := newDecodeBudget(100)
	var used, peak atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(n int64) {
			defer wg.Done()
			b.acquire(n)
			u := used.Add(min(n, 100))
			for {
				p := peak.Load()
				if u <= p || peak.CompareAndSwap(p, u) {
					break
				}
			}
			time.Sleep(time.Millisecond)
			used.Add(-min(n, 100))
			b.release(n)
		}(int64(10 + i*7%200)) // some above the whole budget: they run alone
	}
	inTime(t, 10*time.Second, "the budget", wg.Wait)
	if peak.Load() > 100 || peak.Load() == 0 {
		t.Fatalf("peak %d bytes in flight, budget 100", peak.Load())
	}
}
