// Package synth writes small synthetic datasets for tests: images a model
// can learn in seconds.
package synth

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
)

// LeftRight writes a 2-class image folder of 8×8 grey PNGs under root:
// class "left" is dark on the left half, "right" on the right half.
func LeftRight(root string, perClass int) error {
	for c, name := range []string{"left", "right"} {
		for i := 0; i < perClass; i++ {
			img := image.NewGray(image.Rect(0, 0, 8, 8))
			for y := 0; y < 8; y++ {
				for x := 0; x < 8; x++ {
					v := uint8(200 + (x*13+y*7+i*5)%50)
					if (c == 0) == (x < 4) {
						v = uint8((x*11 + y*3 + i*7) % 60)
					}
					img.SetGray(x, y, color.Gray{v})
				}
			}
			if err := WritePNG(filepath.Join(root, name, fmt.Sprintf("%03d.png", i)), img); err != nil {
				return err
			}
		}
	}
	return nil
}

// WritePNG writes an image, creating its folder.
func WritePNG(path string, img image.Image) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(fh, img); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
