package detect

import (
	"math/rand"
	"testing"
)

// testImage is a size×size colour canvas with one object and a bright
// column at x = 1 (a left-right flip moves it to size-2).
func testImage(size int) ([]uint8, *Image) {
	px := make([]uint8, 3*size*size)
	for c := 0; c < 3; c++ {
		for y := 0; y < size; y++ {
			for x := 0; x < size; x++ {
				px[c*size*size+y*size+x] = uint8(40 + 20*c)
			}
			px[c*size*size+y*size+1] = 200
		}
	}
	return px, &Image{Objects: []Object{{Class: 2, Box: Box{X1: 2, Y1: 3, X2: 6, Y2: 9}}}}
}

func TestAugmentFlips(t *testing.T) {
	const size = 16
	src, img := testImage(size)
	dst := make([]uint8, len(src))
	flips := 0
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		objs := Augment(dst, img, src, size, 3, rng)
		if len(objs) != 1 || objs[0].Class != 2 {
			t.Fatalf("objects %+v", objs)
		}
		switch objs[0].Box {
		case Box{X1: 2, Y1: 3, X2: 6, Y2: 9}:
			if dst[1] <= dst[size-2] {
				t.Fatal("the box stayed but the pixels were flipped")
			}
		case Box{X1: 10, Y1: 3, X2: 14, Y2: 9}:
			flips++
			if dst[size-2] <= dst[1] {
				t.Fatal("the box was flipped but the pixels were not")
			}
		default:
			t.Fatalf("box %+v", objs[0].Box)
		}
	}
	if flips < 70 || flips > 130 {
		t.Fatalf("%d flips of 200, want about half", flips)
	}
	if img.Objects[0].Box.X1 != 2 {
		t.Fatal("Augment changed the image's own objects")
	}
	img.NoFlip = true
	for i := 0; i < 50; i++ {
		if objs := Augment(dst, img, src, size, 3, rng); objs[0].Box.X1 != 2 {
			t.Fatal("an image marked NoFlip was flipped")
		}
	}
}

// TestAugmentJitter: colours change within the documented range, the
// same seed gives the same image, and grey images change brightness only.
func TestAugmentJitter(t *testing.T) {
	const size = 8
	src, img := testImage(size)
	img.NoFlip = true
	a, b := make([]uint8, len(src)), make([]uint8, len(src))
	Augment(a, img, src, size, 3, rand.New(rand.NewSource(7)))
	Augment(b, img, src, size, 3, rand.New(rand.NewSource(7)))
	if string(a) != string(b) {
		t.Fatal("the same seed gave two images")
	}
	changed := false
	for i := 0; i < 100; i++ {
		Augment(a, img, src, size, 3, rand.New(rand.NewSource(int64(i))))
		for k := range a {
			lo, hi := float64(src[k])*(1-ValJitter)*0.2, float64(src[k])*(1+ValJitter)*(1+SatJitter)+60
			if float64(a[k]) < lo || float64(a[k]) > hi {
				t.Fatalf("pixel %d: %d from %d, outside %.0f..%.0f", k, a[k], src[k], lo, hi)
			}
			changed = changed || a[k] != src[k]
		}
	}
	if !changed {
		t.Fatal("no jitter at all")
	}
	grey := src[:size*size]
	g := make([]uint8, len(grey))
	Augment(g, img, grey, size, 1, rand.New(rand.NewSource(3)))
	gain := float64(g[0]) / float64(grey[0])
	if gain < 1-ValJitter-0.02 || gain > 1+ValJitter+0.02 {
		t.Fatalf("grey gain %.2f", gain)
	}
	for k := range g {
		if want := float64(grey[k]) * gain; float64(g[k]) < want-2 || float64(g[k]) > want+2 {
			t.Fatalf("grey pixel %d: %d, want about %.0f (one gain for the image)", k, g[k], want)
		}
	}
}

// TestJitterNeutral: with no change drawn, the colour map is the
// identity (the YIQ round trip is exact).
func TestJitterNeutral(t *testing.T) {
	src := []uint8{0, 255, 17, 200, 3, 90, 128, 64, 250}
	dst := make([]uint8, len(src))
	// v = 1, sat = 1, hue = 0: a source whose three draws are 0.5.
	colourJitter(dst, src, 3, jitterMatrix(3, rand.New(halfSource{})))
	for k := range src {
		if dst[k] != src[k] {
			t.Fatalf("pixel %d: %d became %d", k, src[k], dst[k])
		}
	}
}

// halfSource makes rand.Float64 return 0.5.
type halfSource struct{}

func (halfSource) Int63() int64 { return 1 << 62 }
func (halfSource) Seed(int64)   {}
