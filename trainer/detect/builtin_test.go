package detect

import (
	"context"
	"testing"
)

func TestGenerateBuiltin(t *testing.T) {
	ctx := context.Background()
	const size = 64
	a, err := GenerateBuiltin(ctx, size, 40, 20, 1)
	if err != nil {
		t.Fatal(err)
	}
	if a.Train.Len() != 40 || a.Val.Len() != 20 || len(a.Classes) != 10 || a.Channels != 1 || a.Size != size || a.Format != Builtin {
		t.Fatalf("%+v", a)
	}
	if len(a.Train.Pixels) != 40*size*size {
		t.Fatalf("%d pixels", len(a.Train.Pixels))
	}
	boxes := 0
	for _, s := range []*Split{a.Train, a.Val} {
		for i, im := range s.Images {
			if im.Index != i || !im.NoFlip || len(im.Objects) > 4 || im.Letterbox.Scale != 1 || im.Letterbox.OrigW != size {
				t.Fatalf("image %d: %+v", i, im)
			}
			for k, o := range im.Objects {
				b := o.Box
				if o.Class < 0 || o.Class > 9 || b.X1 < 0 || b.Y1 < 0 || b.X2 > size || b.Y2 > size || b.X2-b.X1 < 2 || b.Y2-b.Y1 < 2 {
					t.Fatalf("image %d object %d: %+v", i, k, o)
				}
				for _, p := range im.Objects[:k] {
					if IoU(p.Box, b) != 0 {
						t.Fatalf("image %d: digits overlap: %+v %+v", i, p.Box, b)
					}
				}
				if inkMax(s, i, size, b) < inkLevel {
					t.Fatalf("image %d: no ink in box %+v", i, b)
				}
				boxes++
			}
		}
	}
	if boxes < 60*3/2 {
		t.Fatalf("%d digits on 60 canvases: want 1 to 4 each, 2.5 on average", boxes)
	}
	if n := a.Lint.Images["train"]; n != 40 || a.Lint.Counts["val"] == nil || len(a.Lint.Errors()) != 0 {
		t.Fatalf("lint %+v", a.Lint)
	}
	// The same seed repeats the set; another changes the training
	// canvases but not the validation ones.
	b, _ := GenerateBuiltin(ctx, size, 40, 20, 1)
	c, _ := GenerateBuiltin(ctx, size, 40, 20, 2)
	if string(a.Train.Pixels) != string(b.Train.Pixels) || a.Train.Images[3].Objects[0] != b.Train.Images[3].Objects[0] {
		t.Fatal("the same seed gave another set")
	}
	if string(a.Train.Pixels) == string(c.Train.Pixels) || string(a.Val.Pixels) != string(c.Val.Pixels) {
		t.Fatal("the seed should draw the training canvases only")
	}
	if _, err := GenerateBuiltin(ctx, 100, 1, 1, 1); err == nil {
		t.Fatal("size 100 (not a multiple of 32) accepted")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := GenerateBuiltin(cancelled, size, 1000, 10, 1); err == nil {
		t.Fatal("a cancelled generation went on")
	}
}

// inkMax is the brightest pixel of image i inside b.
func inkMax(s *Split, i, size int, b Box) uint8 {
	var m uint8
	px := s.Pixels[i*size*size : (i+1)*size*size]
	for y := int(b.Y1); y < int(b.Y2); y++ {
		for x := int(b.X1); x < int(b.X2); x++ {
			m = max(m, px[y*size+x])
		}
	}
	return m
}

// TestLoadBuiltin: Load names the built-in set, at its own size by
// default.
func TestLoadBuiltin(t *testing.T) {
	d, err := Load(Builtin, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.Size != BuiltinSize || d.Train.Len() != BuiltinTrain || d.Val.Len() != BuiltinVal {
		t.Fatalf("%s: %d×%d, %d + %d", d.Name, d.Size, d.Size, d.Train.Len(), d.Val.Len())
	}
}
