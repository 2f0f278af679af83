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
// train is left as it is; the splits returned share a copy of it.
func StratifiedSplit(train *Split, classes int, frac float64, seed int64, size int) (*Split, *Split, error) {
	c := &Split{Pixels: append([]uint8(nil), train.Pixels...), Labels: append([]int32(nil), train.Labels...)}
	if train.Files != nil {
		c.Files = append([]string(nil), train.Files...)
	}
	return splitInPlace(c, classes, frac, seed, size)
}

// splitInPlace is StratifiedSplit without a copy: it reorders train's
// images in place (the training images, then the validation ones, each in
// their original order) and returns two splits that share its storage, so
// a dataset is never held twice. train must not be used afterwards.
func splitInPlace(train *Split, classes int, frac float64, seed int64, size int) (*Split, *Split, error) {
	trainIdx, valIdx, err := stratify(train, classes, frac, seed)
	if err != nil {
		return nil, nil, err
	}
	order := append(trainIdx, valIdx...)
	permute(train, order, size)
	n, k := train.Len(), len(trainIdx)
	tr := &Split{Pixels: train.Pixels[: k*size : k*size], Labels: train.Labels[:k:k]}
	va := &Split{Pixels: train.Pixels[k*size : n*size : n*size], Labels: train.Labels[k:n:n]}
	if train.Files != nil {
		tr.Files, va.Files = train.Files[:k:k], train.Files[k:n:n]
	}
	return tr, va, nil
}

// stratify draws the validation images of each class: the indices to train
// on and to validate on, each sorted.
func stratify(train *Split, classes int, frac float64, seed int64) ([]int, []int, error) {
	if frac <= 0 || frac >= 1 {
		return nil, nil, fmt.Errorf("%w: val_split %.3g: must be between 0 and 1 (0.1 keeps 10%% for validation)", ErrData, frac)
	}
	counts := make([]int, classes)
	for _, y := range train.Labels {
		counts[y]++
	}
	byClass := make([][]int, classes)
	for c, n := range counts {
		byClass[c] = make([]int, 0, n)
	}
	for i, y := range train.Labels {
		byClass[y] = append(byClass[y], i)
	}
	rng := rand.New(rand.NewSource(seed))
	valIdx := make([]int, 0, int(float64(train.Len())*frac)+classes)
	trainIdx := make([]int, 0, train.Len())
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
	return trainIdx, valIdx, nil
}

// permute reorders s in place so that its image p is the image order[p]
// was, following each cycle of the permutation with one image of spare
// room. order is a permutation of 0..s.Len()-1 and is consumed.
func permute(s *Split, order []int, size int) {
	spare := make([]uint8, size)
	for start := range order {
		if order[start] < 0 || order[start] == start {
			continue
		}
		copy(spare, s.Pixels[start*size:(start+1)*size])
		label := s.Labels[start]
		var file string
		if s.Files != nil {
			file = s.Files[start]
		}
		p := start
		for order[p] != start {
			q := order[p]
			copy(s.Pixels[p*size:(p+1)*size], s.Pixels[q*size:(q+1)*size])
			s.Labels[p] = s.Labels[q]
			if s.Files != nil {
				s.Files[p] = s.Files[q]
			}
			order[p] = -1
			p = q
		}
		copy(s.Pixels[p*size:(p+1)*size], spare)
		s.Labels[p] = label
		if s.Files != nil {
			s.Files[p] = file
		}
		order[p] = -1
	}
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
