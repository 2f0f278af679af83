package data

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// writeIDXDir writes an MNIST-style training set of n images of side×side
// (gzip), with varied pixels and labels 0..9.
func writeIDXDir(t *testing.T, dir string, n, side int) {
	t.Helper()
	px := make([]byte, n*side*side)
	for i := range px {
		px[i] = byte(i*7 + i/(side*side)*13)
	}
	labels := make([]byte, n)
	for i := range labels {
		labels[i] = byte(i % 10)
	}
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "train-images-idx3-ubyte.gz"), gz(idxBytes([]int{n, side, side}, px)), 0o644)
	os.WriteFile(filepath.Join(dir, "train-labels-idx1-ubyte.gz"), gz(idxBytes([]int{n}, labels)), 0o644)
}

// allocatedBy is how many bytes f allocates (TotalAlloc), run alone.
func allocatedBy(f func()) int64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc)
}

// sameStorage says whether b starts where a ends, in one array.
func sameStorage(a, b []uint8) bool {
	return unsafe.Add(unsafe.Pointer(unsafe.SliceData(a)), len(a)) == unsafe.Pointer(unsafe.SliceData(b))
}

func TestIDXIsHeldOnce(t *testing.T) {
	// 20,000 images of 28×28 (15 MiB): inflated into one buffer, split in
	// place. Before, the data was read in parts and joined, then copied
	// into the training and validation splits: three times the data.
	dir := t.TempDir()
	const n, side = 20000, 28
	writeIDXDir(t, dir, n, side)
	var d *Dataset
	var err error
	got := allocatedBy(func() { d, err = Load(dir, Options{ValSplit: 0.1, Seed: 3}) })
	if err != nil {
		t.Fatal(err)
	}
	pixels := int64(n * side * side)
	if limit := pixels + n*fixedImageBytes + 4<<20; got > limit {
		t.Errorf("loading %d MiB of pixels allocated %d MiB, more than the %d MiB they and their records take", pixels>>20, got>>20, limit>>20)
	}
	if !sameStorage(d.Train.Pixels, d.Val.Pixels) || cap(d.Train.Pixels) != len(d.Train.Pixels) {
		t.Error("the training and validation splits do not share one array")
	}
	if d.MemoryBytes() != pixels+n*fixedImageBytes {
		t.Errorf("MemoryBytes %d", d.MemoryBytes())
	}
	// The in-place split is StratifiedSplit's, image for image.
	whole := &Split{Pixels: append(append([]uint8(nil), d.Train.Pixels...), d.Val.Pixels...), Labels: append(append([]int32(nil), d.Train.Labels...), d.Val.Labels...)}
	tr, va, err := StratifiedSplit(whole, 10, 0.2, 9, side*side)
	if err != nil {
		t.Fatal(err)
	}
	tr2, va2, _ := splitInPlace(whole, 10, 0.2, 9, side*side)
	if !bytes.Equal(tr.Pixels, tr2.Pixels) || !bytes.Equal(va.Pixels, va2.Pixels) || fmt.Sprint(tr.Labels) != fmt.Sprint(tr2.Labels) || va.Len() != va2.Len() {
		t.Error("splitInPlace differs from StratifiedSplit")
	}
}

func TestIDXHeaderBeyondTheBudget(t *testing.T) {
	// 3,000 images of 28×28 with 1 MiB to hold them: refused from the
	// header, before anything is allocated, with what fits.
	dir := t.TempDir()
	writeIDXDir(t, dir, 3000, 28)
	var err error
	got := allocatedBy(func() { _, err = Load(dir, Options{memLimit: 1 << 20}) })
	want := "train-images-idx3-ubyte.gz: the header declares 3000×28×28 (2.2 MiB of data): with labels and records the dataset would take 2.5 MiB in memory, more than the 1 MiB a dataset may take: the header is corrupt, or train on a subset (at most 1217 images of 28x28 fit)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("over the budget: %v\nwant %s", err, want)
	}
	if got > 512<<10 {
		t.Errorf("refusing allocated %d KiB", got>>10)
	}
	// 1217 images fit.
	writeIDXDir(t, dir, 1217, 28)
	if _, err := Load(dir, Options{memLimit: 1 << 20}); err != nil {
		t.Errorf("1217 images: %v", err)
	}
}

func TestIDXHeaderThatLies(t *testing.T) {
	// A header that declares 60,000×28×28 (45 MiB) in front of 1 MiB: the
	// counting pass finds out before the buffer is allocated.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "train-images-idx3-ubyte.gz"), gz(idxBytes([]int{60000, 28, 28}, make([]byte, 1<<20))), 0o644)
	os.WriteFile(filepath.Join(dir, "train-labels-idx1-ubyte.gz"), gz(idxBytes([]int{60000}, make([]byte, 60000))), 0o644)
	var err error
	got := allocatedBy(func() { _, err = Load(dir, Options{}) })
	if err == nil || !strings.Contains(err.Error(), "train-images-idx3-ubyte.gz: the gzip stream is truncated or damaged in the data (the header promises 47040000 bytes), after 1048576 bytes") {
		t.Fatalf("lying header: %v", err)
	}
	if got > 4<<20 {
		t.Errorf("a header that lies cost %d MiB", got>>20)
	}
	// More data than declared: read up to the declared size, and said.
	px := make([]byte, 100*64+5000)
	for i := range px {
		px[i] = byte(i * 31)
	}
	labels := make([]byte, 100)
	for i := range labels {
		labels[i] = byte(i % 10)
	}
	os.WriteFile(filepath.Join(dir, "train-images-idx3-ubyte.gz"), gz(idxBytes([]int{100, 8, 8}, px)), 0o644)
	os.WriteFile(filepath.Join(dir, "train-labels-idx1-ubyte.gz"), gz(idxBytes([]int{100}, labels)), 0o644)
	d, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum := d.Lint.Summary(); !strings.Contains(sum, "train-images-idx3-ubyte.gz: the file holds more data than its header declares; only the declared images were read") {
		t.Errorf("no warning about the extra data:\n%s", sum)
	}
	// Raw (not gzip), the same.
	os.Remove(filepath.Join(dir, "train-images-idx3-ubyte.gz"))
	os.WriteFile(filepath.Join(dir, "train-images-idx3-ubyte"), idxBytes([]int{100, 8, 8}, px), 0o644)
	if d, err = Load(dir, Options{}); err != nil || !strings.Contains(d.Lint.Summary(), "holds more data than its header declares") {
		t.Errorf("raw with extra data: %v", err)
	}
	// A stream read once (not a file) grows its buffer and says the same.
	f, err := readIDX("s.gz", struct{ *bytes.Buffer }{bytes.NewBuffer(gz(idxBytes([]int{100, 8, 8}, px)))}, &idxBudget{limit: 1 << 20})
	if err != nil || !f.trailing || !bytes.Equal(f.payload, px[:6400]) {
		t.Errorf("stream: %v %v", err, f.trailing)
	}
}

func TestIdenticalIDXImagesAreCountedNotListed(t *testing.T) {
	// 5,000 identical images with 10 labels: 20 warnings listed, the rest
	// counted.
	dir := t.TempDir()
	labels := make([]byte, 5000)
	for i := range labels {
		labels[i] = byte(i % 10)
	}
	os.WriteFile(filepath.Join(dir, "train-images-idx3-ubyte.gz"), gz(idxBytes([]int{5000, 8, 8}, make([]byte, 5000*64))), 0o644)
	os.WriteFile(filepath.Join(dir, "train-labels-idx1-ubyte.gz"), gz(idxBytes([]int{5000}, labels)), 0o644)
	d, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum := d.Lint.Summary()
	if strings.Count(sum, "is the same image as train image 0") != maxPerKind || !strings.Contains(sum, "train image 1 is the same image as train image 0 but labelled \"1\", not \"0\"") ||
		!strings.Contains(sum, fmt.Sprintf("… and %s more warnings of this kind", thousands(4500-maxPerKind))) {
		t.Errorf("lint:\n%s", sum)
	}
}

func TestBatchesCountAgainstTheDataset(t *testing.T) {
	d := &Dataset{Root: "set", Format: "idx", Classes: make([]string, 10), Channels: 1, Height: 28, Width: 28,
		Train: &Split{Pixels: make([]uint8, 1000*784), Labels: make([]int32, 1000)}}
	if err := d.checkBatch(64, 2<<20); err != nil {
		t.Errorf("batch 64: %v", err)
	}
	err := d.checkBatch(4096, 2<<20)
	if err == nil || !strings.Contains(err.Error(), "set: batches of 4096 images of 1x28x28 take 25 MiB as float32 (training and evaluation), and the dataset 840.8 KiB: together more than the 2 MiB a dataset may take: lower batch to 193 or less") {
		t.Fatalf("batch 4096: %v", err)
	}
	if err := d.checkBatch(193, 2<<20); err != nil {
		t.Errorf("the suggested batch: %v", err)
	}
	if d.CheckBatch(4096) != nil {
		t.Error("4096 images of 28×28 fit MaxDatasetBytes")
	}
}

func TestIDXStreamGrowsToTheDeclaredSize(t *testing.T) {
	// 3 MiB through a stream that cannot be read twice: the buffer grows
	// past its first MiB, and stops at the declared size.
	px := make([]byte, 3<<20+7)
	for i := range px {
		px[i] = byte(i * 13)
	}
	raw := append(idxBytes([]int{3<<20 + 5}, px[:3<<20+5]), px[3<<20+5:]...)
	f, err := readIDX("s", struct{ io.Reader }{bytes.NewReader(raw)}, &idxBudget{limit: 1 << 30})
	if err != nil || !bytes.Equal(f.payload, px[:3<<20+5]) || !f.trailing {
		t.Fatalf("grown: %v, %d bytes, trailing %v", err, len(f.payload), f.trailing)
	}
	if _, err := readIDX("s", struct{ io.Reader }{bytes.NewReader(raw[:2<<20])}, &idxBudget{limit: 1 << 30}); err == nil || !strings.Contains(err.Error(), "s: truncated: the header promises 3145733 bytes of data, the file holds 2097144") {
		t.Fatalf("truncated: %v", err)
	}
}
