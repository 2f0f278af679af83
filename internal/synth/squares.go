package synth

import (
	"fmt"
	"image"
	"image/color"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
)

// SquareBox is one square of a Squares image, in that image's pixels.
type SquareBox struct {
	Class          int // 0 solid, 1 ring
	X1, Y1, X2, Y2 int
}

// SquaresSet is a YOLO set written by Squares: its data.yaml, and per
// validation image its path and its squares.
type SquaresSet struct {
	YAML     string
	ValPaths []string
	ValSizes []image.Point
	ValBoxes [][]SquareBox
}

// Squares writes a small YOLO detection set under root in Ultralytics'
// layout (images/train and labels/train; the validation images, in
// images/val, listed in val.txt; names as a map: 0 solid, 1 ring) that a detector learns in
// seconds at a 64-pixel canvas: grey images of 64×64 or 96×64 pixels
// (the wide ones letterboxed) with faint noise and one or two squares of
// 12 to 22 pixels, filled (solid) or outlined (ring).
func Squares(root string, nTrain, nVal int, seed int64) (*SquaresSet, error) {
	rng := rand.New(rand.NewSource(seed))
	set := &SquaresSet{YAML: filepath.Join(root, "data.yaml")}
	var list strings.Builder
	for i := 0; i < nTrain+nVal; i++ {
		split := "train"
		if i >= nTrain {
			split = "val"
		}
		name := fmt.Sprintf("%03d", i)
		img, boxes := squaresImage(rng)
		path := filepath.Join(root, "images", split, name+".png")
		if err := WritePNG(path, img); err != nil {
			return nil, err
		}
		if err := writeYOLOLabels(filepath.Join(root, "labels", split, name+".txt"), boxes, img.Bounds().Size()); err != nil {
			return nil, err
		}
		if split == "val" {
			set.ValPaths = append(set.ValPaths, path)
			set.ValSizes = append(set.ValSizes, img.Bounds().Size())
			set.ValBoxes = append(set.ValBoxes, boxes)
			list.WriteString("images/val/" + name + ".png\n")
		}
	}
	if err := os.WriteFile(filepath.Join(root, "val.txt"), []byte(list.String()), 0o644); err != nil {
		return nil, err
	}
	yaml := "path: .\ntrain: images/train\nval: val.txt\nnames:\n  0: solid\n  1: ring\n"
	if err := os.WriteFile(set.YAML, []byte(yaml), 0o644); err != nil {
		return nil, err
	}
	return set, nil
}

// squaresImage draws one image of Squares.
func squaresImage(rng *rand.Rand) (*image.Gray, []SquareBox) {
	w, h := 64+32*rng.Intn(2), 64
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.Intn(40))
	}
	var boxes []SquareBox
	for want := 1 + rng.Intn(2); len(boxes) < want; {
		s := 12 + rng.Intn(11)
		x, y := rng.Intn(w-s), rng.Intn(h-s)
		b := SquareBox{Class: rng.Intn(2), X1: x, Y1: y, X2: x + s, Y2: y + s}
		if len(boxes) == 1 && overlap(boxes[0], b) {
			continue
		}
		for dy := 0; dy < s; dy++ {
			for dx := 0; dx < s; dx++ {
				edge := dx < 2 || dy < 2 || dx >= s-2 || dy >= s-2
				if b.Class == 0 || edge {
					img.SetGray(x+dx, y+dy, color.Gray{Y: 230})
				}
			}
		}
		boxes = append(boxes, b)
	}
	return img, boxes
}

func overlap(a, b SquareBox) bool {
	return a.X1 < b.X2+2 && b.X1 < a.X2+2 && a.Y1 < b.Y2+2 && b.Y1 < a.Y2+2
}

// writeYOLOLabels writes boxes as a YOLO label file: "class cx cy w h",
// normalised by the image's size.
func writeYOLOLabels(path string, boxes []SquareBox, size image.Point) error {
	var b strings.Builder
	W, H := float64(size.X), float64(size.Y)
	for _, s := range boxes {
		fmt.Fprintf(&b, "%d %.6f %.6f %.6f %.6f\n", s.Class,
			float64(s.X1+s.X2)/2/W, float64(s.Y1+s.Y2)/2/H, float64(s.X2-s.X1)/W, float64(s.Y2-s.Y1)/H)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
