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
// header check, the cost estimate, the budget and the resize must never
// panic, and a decoded image is within the limits. The limits per image
// are 1 Mpx and 32 MiB here (MaxImagePixels and MaxImageDecodeBytes in the
// loaders), so that each input decodes fast.
func FuzzDecodeImage(f *testing.F) {
	var b bytes.Buffer
	png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 5, 3)))
	f.Add(b.Bytes())
	f.Add(pngHeader(30000, 30000))
	f.Add(pngHeader(1, 1))
	f.Add([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
	f.Add([]byte("BM"))
	f.Add([]byte("\xff\xd8\xff\xc0\x00\x11\x08\x75\x30\x75\x30\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01"))
	f.Add(progressiveJPEG(64, 48, 3))
	f.Add([]byte("II*\x00\x08\x00\x00\x00"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WEBPVP8 "))
	lim := imageLimits{pixels: 1_000_000, bytes: 32 << 20}
	budget := newDecodeBudget(2 * lim.bytes)
	rs := newResizer(8)
	f.Fuzz(func(t *testing.T, raw []byte) {
		start := time.Now()
		px := make([]uint8, 3*64)
		info, err := decodeChecked(bytes.NewReader(raw), lim, budget, func(img image.Image) { rs.resize(img, px) })
		if err == nil {
			if int64(info.Width)*int64(info.Height) > lim.pixels || info.cost.bytes > lim.bytes || info.cost.bytes <= 0 {
				t.Fatalf("decoded %dx%d costing %d bytes, above the limits", info.Width, info.Height, info.cost.bytes)
			}
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("took %s on %d bytes", d, len(raw))
		}
	})
}

// progressiveJPEG is a valid progressive JPEG (SOF2) of w×h with comps
// components (1 or 3, 4:4:4) that holds only a first DC scan of zeros: a
// few bits per 8×8 block, so a small file whose decoding keeps every
// component's coefficients (4 bytes a pixel each). image/jpeg cannot write
// progressive JPEGs.
func progressiveJPEG(w, h, comps int) []byte {
	b := []byte{0xff, 0xd8}
	seg := func(marker byte, data ...byte) {
		b = append(b, 0xff, marker, byte((len(data)+2)>>8), byte(len(data)+2))
		b = append(b, data...)
	}
	dqt := make([]byte, 65)
	for i := 1; i < 65; i++ {
		dqt[i] = 1
	}
	seg(0xdb, dqt...)
	sof := []byte{8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), byte(comps)}
	sos := []byte{byte(comps)}
	for c := 1; c <= comps; c++ {
		sof = append(sof, byte(c), 0x11, 0)
		sos = append(sos, byte(c), 0x00)
	}
	seg(0xc2, sof...)
	// One DC code of one bit ("0") for category 0: a difference of 0.
	dht := append([]byte{0x00, 1}, make([]byte, 15)...)
	seg(0xc4, append(dht, 0)...)
	seg(0xda, append(sos, 0, 0, 0)...)
	blocks := ((w + 7) / 8) * ((h + 7) / 8) * comps
	b = append(b, make([]byte, (blocks+7)/8)...)
	return append(b, 0xff, 0xd9)
}
