package app

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"strconv"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"gpuwizard/trainer/detect"
)

// boxPalette colours boxes by class (class k takes colour k modulo its
// length): saturated hues that stand out on photos and on grey.
var boxPalette = []color.RGBA{
	{0xff, 0x38, 0x38, 0xff}, {0x1f, 0xa2, 0xff, 0xff}, {0x48, 0xf9, 0x0a, 0xff}, {0xff, 0xb2, 0x1d, 0xff},
	{0xcf, 0x4b, 0xff, 0xff}, {0x00, 0xd4, 0xbb, 0xff}, {0xff, 0x70, 0x1f, 0xff}, {0x92, 0xcc, 0x17, 0xff},
	{0xff, 0x37, 0xc7, 0xff}, {0x3d, 0xdb, 0x86, 0xff},
}

// classColour is the colour of class k's boxes.
func classColour(k int) color.RGBA {
	if k < 0 {
		k = -k
	}
	return boxPalette[k%len(boxPalette)]
}

// truthColour draws the true boxes beside predicted ones.
var truthColour = color.RGBA{0xff, 0xff, 0xff, 0xff}

// drawnBox is a box to draw: where, in what colour, how thick, and its
// label ("" for none), drawn in a chip above its top-left corner.
type drawnBox struct {
	box    detect.Box
	colour color.RGBA
	width  int
	dashed bool
	label  string
}

// drawBoxes draws the boxes (their coordinates in img's pixels, from its
// top-left corner) on a copy of img sized for the screen: a small image
// enlarged by whole pixels (nearest: it stays sharp) while it fits in
// side, a big one scaled down to side.
func drawBoxes(img image.Image, side int, boxes []drawnBox) *image.RGBA {
	out, f := displayCopy(img, side)
	for _, d := range boxes {
		r := image.Rect(int(math.Round(float64(d.box.X1*f))), int(math.Round(float64(d.box.Y1*f))),
			int(math.Round(float64(d.box.X2*f))), int(math.Round(float64(d.box.Y2*f))))
		outline(out, r.Intersect(out.Rect), d.colour, max(d.width, 1), d.dashed)
		if d.label != "" {
			chip(out, r.Min, d.label, d.colour)
		}
	}
	return out
}

// displayCopy is img as drawBoxes shows it, and the factor from img's
// pixels to the copy's.
func displayCopy(img image.Image, side int) (*image.RGBA, float32) {
	b := img.Bounds()
	long := max(b.Dx(), b.Dy())
	if long > side {
		f := float32(side) / float32(long)
		out := image.NewRGBA(image.Rect(0, 0, max(1, int(float32(b.Dx())*f)), max(1, int(float32(b.Dy())*f))))
		xdraw.ApproxBiLinear.Scale(out, out.Rect, img, b, xdraw.Src, nil)
		return out, f
	}
	k := max(1, side/long)
	out := image.NewRGBA(image.Rect(0, 0, b.Dx()*k, b.Dy()*k))
	for y := 0; y < out.Rect.Dy(); y++ {
		for x := 0; x < out.Rect.Dx(); x++ {
			out.Set(x, y, img.At(b.Min.X+x/k, b.Min.Y+y/k))
		}
	}
	return out, float32(k)
}

// outline draws the border of r, width pixels thick, inward.
func outline(img *image.RGBA, r image.Rectangle, c color.RGBA, width int, dashed bool) {
	if r.Empty() {
		return
	}
	on := func(i int) bool { return !dashed || (i/4)%2 == 0 }
	for w := 0; w < width && r.Dx() > 2*w && r.Dy() > 2*w; w++ {
		for x := r.Min.X + w; x < r.Max.X-w; x++ {
			if on(x) {
				img.SetRGBA(x, r.Min.Y+w, c)
				img.SetRGBA(x, r.Max.Y-1-w, c)
			}
		}
		for y := r.Min.Y + w; y < r.Max.Y-w; y++ {
			if on(y) {
				img.SetRGBA(r.Min.X+w, y, c)
				img.SetRGBA(r.Max.X-1-w, y, c)
			}
		}
	}
}

// chip writes label in black on a chip of colour c above at (inside the
// image: below the top edge when there is no room above).
func chip(img *image.RGBA, at image.Point, label string, c color.RGBA) {
	face := basicfont.Face7x13
	w := font.MeasureString(face, label).Ceil() + 4
	h := 13
	top := at.Y - h
	if top < 0 {
		top = at.Y
	}
	left := min(max(at.X, 0), max(img.Rect.Dx()-w, 0))
	r := image.Rect(left, top, left+w, top+h).Intersect(img.Rect)
	draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Src)
	d := font.Drawer{Dst: img, Src: image.NewUniform(color.Black), Face: face, Dot: fixed.P(left+2, top+10)}
	d.DrawString(label)
}

// truthBoxes are an image's true objects as dashed white boxes, labelled
// when label says so.
func truthBoxes(objs []detect.Object, classes []string, label bool) []drawnBox {
	out := make([]drawnBox, 0, len(objs))
	for _, o := range objs {
		d := drawnBox{box: o.Box, colour: truthColour, width: 1, dashed: true}
		if label {
			d.colour, d.width, d.dashed, d.label = classColour(o.Class), 2, false, nameOf(classes, o.Class)
		}
		out = append(out, d)
	}
	return out
}

// predictedBoxes are detections as solid boxes in their class's colour,
// labelled with the class and score.
func predictedBoxes(dets []detect.Detection, classes []string) []drawnBox {
	out := make([]drawnBox, 0, len(dets))
	for _, d := range dets {
		out = append(out, drawnBox{box: d.Box, colour: classColour(d.Class), width: 2,
			label: fmt.Sprintf("%s %.2f", nameOf(classes, d.Class), d.Score)})
	}
	return out
}

// nameOf is class k's name, or its number.
func nameOf(classes []string, k int) string {
	if k >= 0 && k < len(classes) {
		return classes[k]
	}
	return strconv.Itoa(k)
}
