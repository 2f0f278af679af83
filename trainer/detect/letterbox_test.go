package detect

import (
	"image"
	"image/color"
	"math"
	"testing"
)

func TestNewLetterbox(t *testing.T) {
	for _, c := range []struct {
		w, h, size int
		want       Letterbox
	}{
		{640, 320, 320, Letterbox{Scale: 0.5, PadX: 0, PadY: 80, OrigW: 640, OrigH: 320}},
		{100, 200, 64, Letterbox{Scale: 0.32, PadX: 16, PadY: 0, OrigW: 100, OrigH: 200}},
		{32, 32, 128, Letterbox{Scale: 4, OrigW: 32, OrigH: 32}}, // scaled up
	} {
		if got := NewLetterbox(c.w, c.h, c.size); got != c.want {
			t.Errorf("%dx%d on %d: %+v, want %+v", c.w, c.h, c.size, got, c.want)
		}
	}
	l := NewLetterbox(640, 320, 320)
	b := Box{X1: 100, Y1: 50, X2: 300, Y2: 250}
	c := l.ToCanvas(b)
	if c != (Box{X1: 50, Y1: 105, X2: 150, Y2: 205}) {
		t.Fatalf("to the canvas: %+v", c)
	}
	if back := l.ToOriginal(c); back != b {
		t.Fatalf("and back: %+v", back)
	}
	// A box in the padding is clipped to the image.
	if got := l.ToOriginal(Box{X1: -10, Y1: 0, X2: 400, Y2: 20}); got != (Box{X1: 0, Y1: 0, X2: 640, Y2: 0}) {
		t.Fatalf("clipped: %+v", got)
	}
}

func TestLetterboxerDraw(t *testing.T) {
	// A 4×2 image, red on the left half and blue on the right, on an
	// 8×8 canvas: 8×4 in the middle, 2 rows of padding above and below.
	img := image.NewRGBA(image.Rect(0, 0, 4, 2))
	for y := 0; y < 2; y++ {
		for x := 0; x < 4; x++ {
			c := color.RGBA{255, 0, 0, 255}
			if x >= 2 {
				c = color.RGBA{0, 0, 255, 255}
			}
			img.Set(x, y, c)
		}
	}
	dst := make([]uint8, 3*64)
	l := NewLetterboxer(8, 3).Draw(dst, img)
	if l.PadY != 2 || l.PadX != 0 || l.Scale != 2 {
		t.Fatalf("letterbox %+v", l)
	}
	at := func(c, x, y int) uint8 { return dst[c*64+y*8+x] }
	if at(0, 0, 0) != PadValue || at(1, 7, 7) != PadValue || at(2, 3, 1) != PadValue {
		t.Fatal("the padding is not PadValue grey")
	}
	if at(0, 0, 3) != 255 || at(2, 0, 3) != 0 || at(0, 7, 4) != 0 || at(2, 7, 4) != 255 {
		t.Fatalf("the image is not where the letterbox says: R %d B %d | R %d B %d", at(0, 0, 3), at(2, 0, 3), at(0, 7, 4), at(2, 7, 4))
	}
	grey := make([]uint8, 64)
	NewLetterboxer(8, 1).Draw(grey, img)
	if grey[3*8] != 76 || grey[4*8+7] != 29 || grey[0] != PadValue { // 0.299×255, 0.114×255
		t.Fatalf("grey: %d %d %d", grey[3*8], grey[4*8+7], grey[0])
	}
	x, l2 := Input(img, 8, 3)
	if len(x) != 3*64 || l2 != l || x[3*8] != 1 || math.Abs(float64(x[0])-PadValue/255.0) > 1e-6 {
		t.Fatalf("Input: %d values, %+v, %v %v", len(x), l2, x[3*8], x[0])
	}
}

// TestShowsOnImage: a box centred on the padding of a wide image's
// canvas is dropped, one centred on the image kept (even if it reaches
// into the padding), in order; a zero Letterbox keeps all.
func TestShowsOnImage(t *testing.T) {
	l := NewLetterbox(128, 64, 64) // scale 0.5: the image fills rows 16..47
	dets := []Detection{
		{Class: 0, Box: Box{X1: 10, Y1: 20, X2: 30, Y2: 40}}, // on the image
		{Class: 1, Box: Box{X1: 10, Y1: 0, X2: 30, Y2: 12}},  // on the top bar
		{Class: 2, Box: Box{X1: 10, Y1: 10, X2: 30, Y2: 30}}, // centre row 20: the image
		{Class: 3, Box: Box{X1: 40, Y1: 50, X2: 60, Y2: 64}}, // on the bottom bar
	}
	got := l.OnImage(append([]Detection(nil), dets...))
	if len(got) != 2 || got[0].Class != 0 || got[1].Class != 2 {
		t.Fatalf("kept %+v, want classes 0 and 2", got)
	}
	if !(Letterbox{}).Shows(dets[1].Box) {
		t.Fatal("a zero Letterbox must show every box")
	}
}
