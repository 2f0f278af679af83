package synth

import (
	"bytes"
	"image"
	_ "image/jpeg"
	"testing"

	_ "golang.org/x/image/tiff"
)

// The hostile images must be valid: a decoder reads them whole.
func TestBombsDecode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		write  func(*bytes.Buffer, int, int) error
		format string
	}{
		{"progressive jpeg", func(b *bytes.Buffer, w, h int) error { return ProgressiveJPEG(b, w, h) }, "jpeg"},
		{"deflate tiff", func(b *bytes.Buffer, w, h int) error { return DeflateTIFF(b, w, h) }, "tiff"},
	} {
		var b bytes.Buffer
		if err := tc.write(&b, 67, 45); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		img, format, err := image.Decode(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if format != tc.format || img.Bounds().Dx() != 67 || img.Bounds().Dy() != 45 {
			t.Errorf("%s: decoded as %s %v, want %s 67x45", tc.name, format, img.Bounds(), tc.format)
		}
	}
}
