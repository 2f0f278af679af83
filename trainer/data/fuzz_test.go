package data

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"testing"
	"time"
)

// pngHeader is a PNG that declares w×h RGBA pixels and holds none: its
// header passes image.DecodeConfig, decoding it would allocate w×h×4 bytes.
func pngHeader(w, h uint32) []byte {
	b := []byte("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
		start := len(b)
		b = append(b, typ...)
		b = append(b, data...)
		b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
	}
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 6, 0, 0, 0) // 8-bit RGBA
	chunk("IHDR", ihdr)
	chunk("IEND", nil)
	return b
}

// FuzzDecodeImage feeds bytes to the image decoding of the loaders: the
// header check, the budget and the resize must never panic, and a decoded
// image is within the pixel budget. The budget per image is 1 Mpx here
// (MaxImagePixels in the loaders), so that each input decodes fast.
func FuzzDecodeImage(f *testing.F) {
	var b bytes.Buffer
	png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 5, 3)))
	f.Add(b.Bytes())
	f.Add(pngHeader(30000, 30000))
	f.Add(pngHeader(1, 1))
	f.Add([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
	f.Add([]byte("BM"))
	f.Add([]byte("\xff\xd8\xff\xc0\x00\x11\x08\x75\x30\x75\x30\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01"))
	f.Add([]byte("II*\x00\x08\x00\x00\x00"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WEBPVP8 "))
	const maxPixels = 1_000_000
	budget := newPixelBudget(2 * maxPixels)
	f.Fuzz(func(t *testing.T, raw []byte) {
		start := time.Now()
		var px []uint8
		c, err := decodeChecked(bytes.NewReader(raw), maxPixels, budget, func(img image.Image) { px, _ = resizePlanar(img, 8) })
		if err == nil {
			if int64(c.Width)*int64(c.Height) > maxPixels {
				t.Fatalf("decoded %dx%d, above the budget", c.Width, c.Height)
			}
			if len(px) != 3*64 {
				t.Fatalf("resized to %d bytes", len(px))
			}
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("took %s on %d bytes", d, len(raw))
		}
	})
}
