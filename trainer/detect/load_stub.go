package detect

import (
	"fmt"
	"math/rand"

	"gpuwizard/trainer/data"
)

// This file stands in for the data side's dataset.go, builtin.go and
// augment.go (branch detb) until they land: delete it at the merge. It
// loads only the built-in set, made plainly (MNIST digits on cluttered
// canvases), so that this branch's trainer runs end to end.

// Builtin is the built-in detection set's name.
const Builtin = "builtin-detect"

// Load loads path's detection dataset at the model's canvas size.
func Load(path string, size int, seed int64) (*Dataset, error) {
	if path != Builtin {
		return nil, fmt.Errorf("detect: %s: only %s loads on this branch (YOLO data.yaml loading is the data side's)", path, Builtin)
	}
	return builtinStub(size, seed, 4000, 500)
}

// builtinStub makes train and val canvases of size×size grey pixels with
// 1 to 4 digits each (train digits from MNIST's training images, val ones
// from its test images) over clutter: noise, lines and digit fragments.
func builtinStub(size int, seed int64, nTrain, nVal int) (*Dataset, error) {
	mn, err := data.Load(data.Builtin, data.Options{ValSplit: 0.1, Seed: seed})
	if err != nil {
		return nil, fmt.Errorf("detect: the built-in set's digits: %w", err)
	}
	rng := rand.New(rand.NewSource(seed))
	ds := &Dataset{Name: Builtin, Root: Builtin, Format: Builtin, Size: size, Channels: 1,
		Classes: []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}}
	ds.Train = canvases(rng, mn.Train, size, nTrain)
	ds.Val = canvases(rng, mn.Test, size, nVal)
	return ds, nil
}

func canvases(rng *rand.Rand, src *data.Split, size, n int) *Split {
	sp := &Split{Pixels: make([]uint8, n*size*size)}
	for i := 0; i < n; i++ {
		px := sp.Pixels[i*size*size : (i+1)*size*size]
		for k := range px {
			px[k] = uint8(rng.Intn(48))
		}
		for k := 0; k < 3; k++ { // fragments of digits: clutter that is not an object
			d := rng.Intn(src.Len())
			paste(px, size, src.Pixels[d*784:(d+1)*784], rng.Intn(size-12), rng.Intn(size-12), 12, 10, 8, 0.6)
		}
		im := Image{Index: i, Path: fmt.Sprintf("%s/%d", Builtin, i), Letterbox: Letterbox{Scale: 1, OrigW: size, OrigH: size}}
		for k, want := 0, 1+rng.Intn(4); k < 40 && len(im.Objects) < want; k++ {
			s := 16 + rng.Intn(size/4)
			x, y := rng.Intn(size-s), rng.Intn(size-s)
			b := Box{X1: float32(x), Y1: float32(y), X2: float32(x + s), Y2: float32(y + s)}
			clash := false
			for _, o := range im.Objects {
				clash = clash || IoU(o.Box, b) > 0.05
			}
			if clash {
				continue
			}
			d := rng.Intn(src.Len())
			ink := paste(px, size, src.Pixels[d*784:(d+1)*784], x, y, s, 28, 0, 1)
			if !(ink.X2 > ink.X1 && ink.Y2 > ink.Y1) {
				continue
			}
			im.Objects = append(im.Objects, Object{Class: int(src.Labels[d]), Box: ink})
		}
		sp.Images = append(sp.Images, im)
	}
	return sp
}

// paste draws the cell×cell window at (off, off) of a 28×28 digit scaled
// to s×s at (x, y), brighter pixels winning, at intensity gain; it
// returns the box of the ink it drew.
func paste(px []uint8, size int, digit []uint8, x, y, s, cell, off int, gain float32) Box {
	b := Box{X1: float32(size), Y1: float32(size)}
	for dy := 0; dy < s; dy++ {
		for dx := 0; dx < s; dx++ {
			v := uint8(float32(digit[(off+dy*cell/s)*28+off+dx*cell/s]) * gain)
			if v < 64 {
				continue
			}
			p := &px[(y+dy)*size+x+dx]
			*p = max(*p, v)
			b.X1, b.Y1 = min(b.X1, float32(x+dx)), min(b.Y1, float32(y+dy))
			b.X2, b.Y2 = max(b.X2, float32(x+dx+1)), max(b.Y2, float32(y+dy+1))
		}
	}
	return b
}

// Augment copies src (one image of size×size, channels planes) into dst
// and returns its objects: no augmentation on this branch.
func Augment(dst []uint8, img *Image, src []uint8, size, channels int, rng *rand.Rand) []Object {
	copy(dst, src[:size*size*channels])
	return img.Objects
}
