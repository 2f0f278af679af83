package detect

import (
	"fmt"
	"image"
	"math"

	"golang.org/x/image/draw"
)

// Canvas sizes: the square side a detector takes, in pixels. The window
// offers MinOfferedSize to MaxSize; smaller canvases (from MinSize) are
// for tests and the built-in set. Every size is a multiple of SizeStep,
// the largest stride a detector's head may have.
const (
	DefaultSize    = 320
	MinSize        = 32
	MinOfferedSize = 128
	MaxSize        = 640
	SizeStep       = 32
	// PadValue is the grey the letterbox pads with (on 0..255).
	PadValue = 114
)

// CheckSize says whether size is a canvas side a dataset can be loaded
// at, and if not, what to choose.
func CheckSize(size int) error {
	if size < MinSize || size > MaxSize || size%SizeStep != 0 {
		return fmt.Errorf("image size %d: a detector's canvas is a multiple of %d from %d to %d pixels (%d is the default; the built-in set uses %d)",
			size, SizeStep, MinSize, MaxSize, DefaultSize, BuiltinSize)
	}
	return nil
}

// NewLetterbox is the letterbox of a w×h image on a size×size canvas:
// scaled (up or down) until its longer side fills the canvas, aspect
// kept, centred; the rest is padding.
func NewLetterbox(w, h, size int) Letterbox {
	scale := min(float64(size)/float64(w), float64(size)/float64(h))
	nw, nh := scaledSide(w, scale, size), scaledSide(h, scale, size)
	return Letterbox{Scale: float32(scale), PadX: float32((size - nw) / 2), PadY: float32((size - nh) / 2), OrigW: w, OrigH: h}
}

// scaledSide is a side of v pixels scaled, rounded, kept within 1..size.
func scaledSide(v int, scale float64, size int) int {
	return min(max(int(math.Round(float64(v)*scale)), 1), size)
}

// inner is the rectangle of the canvas the image fills.
func (l Letterbox) inner(size int) image.Rectangle {
	scale := float64(l.Scale)
	x0, y0 := int(l.PadX), int(l.PadY)
	return image.Rect(x0, y0, x0+scaledSide(l.OrigW, scale, size), y0+scaledSide(l.OrigH, scale, size))
}

// Letterboxer draws images letterboxed onto a size×size canvas; it keeps
// its scratch image between calls, so one is made per goroutine.
type Letterboxer struct {
	size, channels int
	rgba           *image.RGBA
}

// NewLetterboxer draws onto size×size canvases of channels planes (3:
// R, G, B; 1: grey, the luma 0.299 R + 0.587 G + 0.114 B).
func NewLetterboxer(size, channels int) *Letterboxer {
	return &Letterboxer{size: size, channels: channels, rgba: image.NewRGBA(image.Rect(0, 0, size, size))}
}

// Draw letterboxes img into dst (planar: channels × size × size, 8 bits)
// and says how the canvas maps back to img. The image is scaled with
// bilinear interpolation; the padding is PadValue.
func (lb *Letterboxer) Draw(dst []uint8, img image.Image) Letterbox {
	b := img.Bounds()
	l := NewLetterbox(b.Dx(), b.Dy(), lb.size)
	pix := lb.rgba.Pix
	for i := 0; i < len(pix); i += 4 {
		pix[i], pix[i+1], pix[i+2], pix[i+3] = PadValue, PadValue, PadValue, 255
	}
	draw.ApproxBiLinear.Scale(lb.rgba, l.inner(lb.size), img, b, draw.Src, nil)
	plane := lb.size * lb.size
	if lb.channels == 1 {
		for k := 0; k < plane; k++ {
			r, g, bl := int(pix[4*k]), int(pix[4*k+1]), int(pix[4*k+2])
			dst[k] = uint8((299*r + 587*g + 114*bl + 500) / 1000)
		}
		return l
	}
	for k := 0; k < plane; k++ {
		dst[k], dst[plane+k], dst[2*plane+k] = pix[4*k], pix[4*k+1], pix[4*k+2]
	}
	return l
}

// Input is what a detector is fed for img: the image letterboxed to
// size×size (Letterboxer.Draw) as float32 planes scaled to [0, 1], and the
// letterbox that maps the detector's boxes back to img's pixels
// (Letterbox.ToOriginal). Training batches are the same pixels / 255.
func Input(img image.Image, size, channels int) ([]float32, Letterbox) {
	px := make([]uint8, channels*size*size)
	l := NewLetterboxer(size, channels).Draw(px, img)
	x := make([]float32, len(px))
	for i, v := range px {
		x[i] = float32(v) * (1.0 / 255)
	}
	return x, l
}

// CanvasImage is image i of split s as an image (grey or RGB), for
// showing it: the letterboxed canvas the detector sees.
func CanvasImage(s *Split, i, size, channels int) image.Image {
	n := channels * size * size
	px := s.Pixels[s.Images[i].Index*n : (s.Images[i].Index+1)*n]
	if channels == 1 {
		g := image.NewGray(image.Rect(0, 0, size, size))
		copy(g.Pix, px)
		return g
	}
	plane := size * size
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	for k := 0; k < plane; k++ {
		img.Pix[4*k], img.Pix[4*k+1], img.Pix[4*k+2], img.Pix[4*k+3] = px[k], px[plane+k], px[2*plane+k], 255
	}
	return img
}
