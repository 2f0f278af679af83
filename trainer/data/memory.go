package data

import (
	"fmt"
	"math"
)

// What each image holds besides its pixels, counted against
// MaxDatasetBytes.
const (
	// fixedImageBytes is an image of a fixed-size dataset (IDX, CIFAR):
	// its label (the file's byte and the int32 kept), its places in the
	// split's index lists (by class, to train, all: ints) and in the
	// Batchers' orders, and the duplicate finder's hash and pair.
	fixedImageBytes = 1 + 4 + 5*8 + 2*16
	// folderImageBytes is an image of a folder, besides its path: the
	// scan's, the decoder's and the split's records, the duplicate
	// finder's map entry, and what fixedImageBytes counts.
	folderImageBytes = 360
)

// memoryNeed is the memory a dataset takes while it loads, part by part.
type memoryNeed struct {
	pixels  int64 // the 8-bit pixels, N×C×H×W, held once
	records int64 // labels, paths, indices, lint records
	working int64 // what loading takes on top: decoders, resize buffers
	limit   int64 // MaxDatasetBytes but in tests
}

func (m memoryNeed) total() int64 { return m.pixels + m.records + m.working }

// fits says whether the dataset fits its limit.
func (m memoryNeed) fits() bool { return m.total() <= m.limit }

// String is the need in words: "2.1 GiB in memory (2 GiB of pixels, 125
// MiB of labels and records, 448 MiB to decode)".
func (m memoryNeed) String() string {
	s := fmt.Sprintf("%s in memory (%s of pixels, %s of labels, paths and records", bytesWords(m.total()), bytesWords(m.pixels), bytesWords(m.records))
	if m.working > 0 {
		s += ", " + bytesWords(m.working) + " to decode them"
	}
	return s + ")"
}

// bytesWords is a byte count in words, up to TiB.
func bytesWords(n int64) string { return floatSize(float64(n)) }

// mulSat multiplies non-negative numbers, saturating at math.MaxInt64.
func mulSat(xs ...int64) int64 {
	v := int64(1)
	for _, x := range xs {
		if x != 0 && v > math.MaxInt64/x {
			return math.MaxInt64
		}
		v *= x
	}
	return v
}

// MemoryBytes is what the loaded dataset holds: its pixels and each
// image's records.
func (d *Dataset) MemoryBytes() int64 {
	var n, px int64
	for _, s := range []*Split{d.Train, d.Val, d.Test} {
		if s != nil {
			n += int64(s.Len())
			px += int64(len(s.Pixels))
		}
	}
	per := int64(fixedImageBytes)
	if d.Format == "imagefolder" {
		per = folderImageBytes
	}
	return px + n*per
}

// batchBytes is what training with batches of batch images takes on top
// of the dataset: the float32 inputs and one-hot labels of two Batchers
// (training, and evaluation), and the logits of a batch.
func batchBytes(size, classes, batch int) int64 {
	return 2*4*int64(batch)*int64(size+classes) + 4*int64(batch)*int64(classes)
}

// CheckBatch says whether training on d with batches of batch images stays
// within MaxDatasetBytes: the dataset and the float32 copies of a batch the
// trainer makes (Batcher's X and Y, for training and evaluation). The
// model's own memory is the trainer's to count.
func (d *Dataset) CheckBatch(batch int) error {
	return d.checkBatch(batch, MaxDatasetBytes)
}

func (d *Dataset) checkBatch(batch int, limit int64) error {
	ds, b := d.MemoryBytes(), batchBytes(d.ImageSize(), len(d.Classes), batch)
	if ds+b <= limit {
		return nil
	}
	fit := (limit - ds) / max(batchBytes(d.ImageSize(), len(d.Classes), 1), 1)
	fix := "use a smaller image size, or fewer images"
	if fit >= 1 {
		fix = fmt.Sprintf("lower batch to %d or less", fit)
	}
	return fmt.Errorf("%w: %s: batches of %d images of %dx%dx%d take %s as float32 (training and evaluation), and the dataset %s: together more than the %s a dataset may take: %s",
		ErrData, d.Root, batch, d.Channels, d.Height, d.Width, bytesWords(b), bytesWords(ds), bytesWords(limit), fix)
}
