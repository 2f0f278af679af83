// Package data loads image classification datasets (read-only: the user's
// files are never modified) and lints detection datasets. Images are kept
// as 8-bit pixels (N×C×H×W) to keep memory low; batches are converted to
// float32 as they are drawn.
package data

import (
	"errors"
	"fmt"
	"math/rand"
	"sort"

	"gpuwizard/internal/plural"
)

// ErrData is returned (wrapped) for unusable datasets; the message names
// the file, line or field and the fix.
var ErrData = errors.New("data")

// Split is one part of a dataset: images and their class indices.
type Split struct {
	Pixels []uint8 // N × C × H × W
	Labels []int32
	Files  []string // where each image came from, when known
}

// Len is the number of images.
func (s *Split) Len() int { return len(s.Labels) }

// Dataset is a classification dataset ready to train on.
type Dataset struct {
	Name     string
	Format   string // "builtin", "idx", "cifar10", "imagefolder"
	Root     string
	Classes  []string
	Channels int
	Height   int
	Width    int
	Train    *Split
	Val      *Split
	Test     *Split // nil when the dataset has none
	Lint     *Lint
	Credit   string // attribution, for built-in and known datasets
	SizeNote string // folders: the size images were resized to, and why

	loadedFrom string  // Load's path (sourceName); "" when not loaded by Load
	loadedWith Options // and options (see LoadedWith)
}

// ImageSize is C×H×W.
func (d *Dataset) ImageSize() int { return d.Channels * d.Height * d.Width }

// Counts returns images per class in a split.
func (d *Dataset) Counts(s *Split) []int {
	c := make([]int, len(d.Classes))
	if s == nil {
		return c
	}
	for _, y := range s.Labels {
		if int(y) < len(c) {
			c[y]++
		}
	}
	return c
}

// StratifiedSplit moves a seeded, per-class fraction of train into a new
// validation split (at least one image of every class with two or more).
func StratifiedSplit(train *Split, classes int, frac float64, seed int64, size int) (*Split, *Split, error) {
	if frac <= 0 || frac >= 1 {
		return nil, nil, fmt.Errorf("%w: val_split %.3g: must be between 0 and 1 (0.1 keeps 10%% for validation)", ErrData, frac)
	}
	byClass := make([][]int, classes)
	for i, y := range train.Labels {
		byClass[y] = append(byClass[y], i)
	}
	rng := rand.New(rand.NewSource(seed))
	var valIdx, trainIdx []int
	for _, idx := range byClass {
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		if len(idx) == 0 {
			continue // an empty class is reported by the lint
		}
		k := int(float64(len(idx))*frac + 0.5)
		if k == 0 && len(idx) >= 2 {
			k = 1
		}
		if k == len(idx) {
			k = len(idx) - 1 // keep at least one image to train on
		}
		valIdx = append(valIdx, idx[:k]...)
		trainIdx = append(trainIdx, idx[k:]...)
	}
	sort.Ints(valIdx)
	sort.Ints(trainIdx)
	if len(valIdx) == 0 {
		return nil, nil, fmt.Errorf("%w: %s, no class with two or more: too few to keep any for validation: add images, or give a val folder", ErrData, plural.Count(train.Len(), "training image"))
	}
	return subset(train, trainIdx, size), subset(train, valIdx, size), nil
}

func subset(s *Split, idx []int, size int) *Split {
	out := &Split{Pixels: make([]uint8, 0, len(idx)*size), Labels: make([]int32, 0, len(idx))}
	for _, i := range idx {
		out.Pixels = append(out.Pixels, s.Pixels[i*size:(i+1)*size]...)
		out.Labels = append(out.Labels, s.Labels[i])
		if s.Files != nil {
			out.Files = append(out.Files, s.Files[i])
		}
	}
	return out
}

// Batcher draws batches of float32 inputs (pixels / 255) and one-hot
// labels from a split, shuffled per epoch from a seed. The last partial
// batch is padded by repeating images, and Valid says how many are real.
type Batcher struct {
	s       *Split
	size    int // C×H×W
	classes int
	batch   int
	order   []int
	pos     int
	X, Y    []float32
	Idx     []int // the split indices in the current batch
	Valid   int
}

// NewBatcher prepares batches of the given size.
func NewBatcher(s *Split, size, classes, batch int) *Batcher {
	b := &Batcher{s: s, size: size, classes: classes, batch: batch, order: make([]int, s.Len()),
		X: make([]float32, batch*size), Y: make([]float32, batch*classes), Idx: make([]int, batch)}
	b.Rewind()
	return b
}

// Steps is the number of batches in one pass.
func (b *Batcher) Steps() int { return (b.s.Len() + b.batch - 1) / b.batch }

// Shuffle starts a new pass in an order drawn from seed.
func (b *Batcher) Shuffle(seed int64) {
	b.Rewind()
	rand.New(rand.NewSource(seed)).Shuffle(len(b.order), func(i, j int) { b.order[i], b.order[j] = b.order[j], b.order[i] })
}

// Rewind starts a new pass in file order (evaluation).
func (b *Batcher) Rewind() {
	for i := range b.order {
		b.order[i] = i
	}
	b.pos = 0
}

// Next fills X, Y, Idx and Valid; false at the end of the pass.
func (b *Batcher) Next() bool {
	n := b.s.Len()
	if b.pos >= n || n == 0 {
		return false
	}
	clear(b.Y)
	b.Valid = min(b.batch, n-b.pos)
	for k := 0; k < b.batch; k++ {
		i := b.order[b.pos+k%b.Valid] // past Valid: the batch's images again
		b.Idx[k] = i
		px := b.s.Pixels[i*b.size : (i+1)*b.size]
		x := b.X[k*b.size : (k+1)*b.size]
		for j, v := range px {
			x[j] = float32(v) * (1.0 / 255)
		}
		b.Y[k*b.classes+int(b.s.Labels[i])] = 1
	}
	b.pos += b.Valid
	return true
}
