package trainer

import (
	"math/rand"

	"gpuwizard/trainer/detect"
)

// detBatcher cuts a detection split into batches: X the images (planar,
// scaled to [0, 1]), Y their targets (detect.Assign on the model's grid).
// In training each image is augmented first (detect.Augment, seeded per
// pass); a pass's last batch is filled up with its own images again, as
// the classifiers' batcher does (Valid says how many are new).
type detBatcher struct {
	s            *detect.Split
	size, ch     int // canvas side and channels
	batch        int
	g            detect.Grid
	order        []int
	pos          int
	augment      bool
	rng          *rand.Rand
	X, Y         []float32
	Idx          []int
	Valid        int
	NPos         int // positive cells of the batch
	objs         [][]detect.Object
	img          []uint8 // one augmented image
	per, targets int     // floats of an image and of its targets
}

func newDetBatcher(s *detect.Split, size, ch, batch int, g detect.Grid, augment bool) *detBatcher {
	per, tg := ch*size*size, g.H*g.W*detect.TargetFloats
	b := &detBatcher{s: s, size: size, ch: ch, batch: batch, g: g, order: make([]int, s.Len()), augment: augment,
		X: make([]float32, batch*per), Y: make([]float32, batch*tg), Idx: make([]int, batch),
		objs: make([][]detect.Object, batch), img: make([]uint8, per), per: per, targets: tg, rng: rand.New(rand.NewSource(1))}
	b.Rewind()
	return b
}

// Steps is the number of batches in one pass.
func (b *detBatcher) Steps() int { return (b.s.Len() + b.batch - 1) / b.batch }

// Shuffle starts a new pass in an order (and with augmentations) drawn
// from seed.
func (b *detBatcher) Shuffle(seed int64) {
	b.Rewind()
	b.rng = rand.New(rand.NewSource(seed))
	b.rng.Shuffle(len(b.order), func(i, j int) { b.order[i], b.order[j] = b.order[j], b.order[i] })
}

// Rewind starts a new pass in order (evaluation).
func (b *detBatcher) Rewind() {
	for i := range b.order {
		b.order[i] = i
	}
	b.pos = 0
}

// Next fills X, Y, Idx, Valid and NPos; false at the end of the pass.
func (b *detBatcher) Next() bool {
	n := b.s.Len()
	if b.pos >= n || n == 0 {
		return false
	}
	b.Valid = min(b.batch, n-b.pos)
	for k := 0; k < b.batch; k++ {
		i := b.order[b.pos+k%b.Valid]
		b.Idx[k] = i
		im := &b.s.Images[i]
		src := b.s.Pixels[im.Index*b.per : (im.Index+1)*b.per]
		px, objs := src, im.Objects
		if b.augment {
			objs = detect.Augment(b.img, im, src, b.size, b.ch, b.rng)
			px = b.img
		}
		x := b.X[k*b.per : (k+1)*b.per]
		for j, v := range px {
			x[j] = float32(v) / 255
		}
		b.objs[k] = objs
	}
	b.NPos = detect.Assign(b.Y, b.objs, b.g)
	b.pos += b.Valid
	return true
}
