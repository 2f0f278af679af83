package data

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"flag"
	"hash/crc32"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

// hostileOut keeps the hostile inputs that TestHostileImagesAreRefused
// builds in a folder, to run the real binary on them:
//
//	go test -tags migrated_fynedo -run TestHostileImagesAreRefused ./trainer/data/ -args -hostile-out DIR
var hostileOut = flag.String("hostile-out", "", "write the hostile images of TestHostileImagesAreRefused into this folder as well")

// pngChunk appends a PNG chunk to b.
func pngChunk(b []byte, typ string, data []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	start := len(b)
	b = append(b, typ...)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
}

// adam7 is the PNG interlacing: each pass's first column and row, and its
// steps.
var adam7 = [7][4]int{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}

// zeroPNG is a valid PNG of w×h zero pixels, 8 or 16 bits per channel of
// colour type ct, interlaced or not; its rows are compressed as they are
// made, so a large one costs little to build.
func zeroPNG(w, h, depth int, ct byte, interlaced bool) []byte {
	b := []byte("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	il := byte(0)
	if interlaced {
		il = 1
	}
	b = pngChunk(b, "IHDR", append(ihdr, byte(depth), ct, 0, 0, il))
	channels := map[byte]int{0: 1, 2: 3, 4: 2, 6: 4}[ct]
	var idat bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&idat, zlib.BestSpeed)
	passes := [][4]int{{0, 0, 1, 1}}
	if interlaced {
		passes = adam7[:]
	}
	for _, p := range passes {
		pw, ph := (w-p[0]+p[2]-1)/p[2], (h-p[1]+p[3]-1)/p[3]
		if pw <= 0 || ph <= 0 {
			continue
		}
		row := make([]byte, 1+pw*channels*depth/8)
		for y := 0; y < ph; y++ {
			zw.Write(row)
		}
	}
	zw.Close()
	for raw := idat.Bytes(); len(raw) > 0; {
		n := min(len(raw), 1<<20)
		b = pngChunk(b, "IDAT", raw[:n])
		raw = raw[n:]
	}
	return pngChunk(b, "IEND", nil)
}

// zeroTIFF is a TIFF of w×h zero pixels in one strip: RGB with 8 or 16
// bits per sample, Deflate-compressed (or not); built as it is
// compressed.
func zeroTIFF(w, h, bps int, deflate bool) []byte {
	var strip bytes.Buffer
	row := make([]byte, w*3*bps/8)
	var zw io.WriteCloser = nopCloser{&strip}
	comp := uint16(1)
	if deflate {
		zw, _ = zlib.NewWriterLevel(&strip, zlib.BestSpeed)
		comp = 8
	}
	for y := 0; y < h; y++ {
		zw.Write(row)
	}
	zw.Close()
	le := binary.LittleEndian
	b := []byte("II*\x00")
	b = le.AppendUint32(b, 8)
	entries := []struct {
		tag, typ uint16
		count    uint32
		value    uint32
	}{
		{256, 4, 1, uint32(w)}, {257, 4, 1, uint32(h)}, {258, 3, 3, 0 /* offset below */}, {259, 3, 1, uint32(comp)},
		{262, 3, 1, 2}, {273, 4, 1, 0 /* offset below */}, {277, 3, 1, 3}, {278, 4, 1, uint32(h)}, {279, 4, 1, uint32(strip.Len())},
	}
	ifdEnd := 8 + 2 + 12*len(entries) + 4
	entries[2].value = uint32(ifdEnd)     // BitsPerSample: 3 shorts
	entries[5].value = uint32(ifdEnd + 6) // the strip
	b = le.AppendUint16(b, uint16(len(entries)))
	for _, e := range entries {
		b = le.AppendUint16(b, e.tag)
		b = le.AppendUint16(b, e.typ)
		b = le.AppendUint32(b, e.count)
		b = le.AppendUint32(b, e.value)
	}
	b = le.AppendUint32(b, 0)
	for i := 0; i < 3; i++ {
		b = le.AppendUint16(b, uint16(bps))
	}
	return append(b, strip.Bytes()...)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// losslessWebP is a VP8L WebP of w×h (up to 16384 each) whose five prefix
// codes each have a single symbol: its pixels take no bits, so any size
// fits in 30 bytes, and decoding it takes 4 to 8 bytes a pixel.
func losslessWebP(w, h int) []byte {
	var bits []bool
	put := func(v, n int) {
		for i := 0; i < n; i++ {
			bits = append(bits, v>>i&1 == 1)
		}
	}
	put(w-1, 14)
	put(h-1, 14)
	put(0, 1) // alpha is not used
	put(0, 3) // version
	put(0, 1) // no transform
	put(0, 1) // no colour cache
	put(0, 1) // no meta prefix codes
	for code := 0; code < 5; code++ {
		put(1, 1) // a simple code
		put(0, 1) // of one symbol
		if code == 3 {
			put(1, 1)   // of 8 bits:
			put(255, 8) // alpha 255
		} else {
			put(0, 1) // of 1 bit: 0
			put(0, 1)
		}
	}
	data := []byte{0x2f}
	for i := 0; i < len(bits); i += 8 {
		var v byte
		for j := 0; j < 8 && i+j < len(bits); j++ {
			if bits[i+j] {
				v |= 1 << j
			}
		}
		data = append(data, v)
	}
	if len(data)%2 == 1 {
		data = append(data, 0)
	}
	b := []byte("RIFF")
	b = binary.LittleEndian.AppendUint32(b, uint32(4+8+len(data)))
	b = append(b, "WEBPVP8L"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// encoded encodes img with enc.
func encoded(t *testing.T, img image.Image, enc func(io.Writer, image.Image) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := enc(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// noisy is a w×h image of type m with varied pixels, so that compressed
// formats hold real data.
func noisy(m image.Image) image.Image {
	b := m.Bounds()
	set, ok := m.(interface{ Set(x, y int, c color.Color) })
	if !ok {
		return m
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			v := uint8(x*7 + y*13 + x*y)
			set.Set(x, y, color.RGBA{v, v / 2, 255 - v, 255})
		}
	}
	return m
}

// TestDecodeCostBoundsAllocation checks the estimate of each decoder
// against what it really allocates: never less (it is a bound), and not
// far more for ordinary images.
func TestDecodeCostBoundsAllocation(t *testing.T) {
	const w, h = 640, 480
	r := image.Rect(0, 0, w, h)
	jpg := func(img image.Image) []byte {
		return encoded(t, noisy(img), func(o io.Writer, m image.Image) error { return jpeg.Encode(o, m, nil) })
	}
	tif := func(img image.Image, c tiff.CompressionType) []byte {
		return encoded(t, noisy(img), func(o io.Writer, m image.Image) error { return tiff.Encode(o, m, &tiff.Options{Compression: c}) })
	}
	cases := []struct {
		name  string
		raw   []byte
		slack float64 // the estimate may be this many times the allocation
	}{
		{"baseline JPEG 4:2:0", jpg(image.NewRGBA(r)), 1.5},
		{"grey JPEG", jpg(image.NewGray(r)), 1.8},
		{"progressive JPEG, 3 components", progressiveJPEG(w, h, 3), 1.3},
		{"progressive JPEG, grey", progressiveJPEG(w, h, 1), 1.5},
		{"PNG RGBA", encoded(t, noisy(image.NewNRGBA(r)), png.Encode), 1.5},
		{"PNG grey", encoded(t, noisy(image.NewGray(r)), png.Encode), 2.5},
		{"PNG 16-bit", encoded(t, noisy(image.NewRGBA64(r)), png.Encode), 1.3},
		{"PNG paletted", encoded(t, noisy(image.NewPaletted(r, palette.Plan9)), png.Encode), 2.5},
		{"PNG interlaced 16-bit", zeroPNG(w, h, 16, 6, true), 1.3},
		{"PNG interlaced grey", zeroPNG(w, h, 8, 0, true), 2.5},
		{"GIF", encoded(t, noisy(image.NewPaletted(r, palette.Plan9)), func(o io.Writer, m image.Image) error { return gif.Encode(o, m, nil) }), 2.5},
		{"BMP 24-bit", encoded(t, noisy(image.NewRGBA(r)), bmp.Encode), 1.5},
		{"BMP paletted", encoded(t, noisy(image.NewPaletted(r, palette.Plan9)), bmp.Encode), 2.5},
		{"WebP lossless", losslessWebP(w, h), 2.5},
		{"TIFF RGB uncompressed", tif(image.NewRGBA(r), tiff.Uncompressed), 1.6},
		{"TIFF RGB deflate", tif(image.NewRGBA(r), tiff.Deflate), 3},
		{"TIFF 16-bit deflate", zeroTIFF(w, h, 16, true), 2.5},
		{"TIFF grey deflate", tif(image.NewGray(r), tiff.Deflate), 4},
	}
	for _, c := range cases {
		src := bytes.NewReader(c.raw)
		info, err := inspectImage(src, defaultImageLimits())
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		in, _ := decoderInput(src)
		var derr error
		got := allocatedBy(func() { derr = decodeAndUse(in, info.Config, func(image.Image) {}) })
		if derr != nil {
			t.Errorf("%s: %v", c.name, derr)
			continue
		}
		t.Logf("%-32s estimate %9d, allocated %9d (%.2f)", c.name, info.cost.bytes, got, float64(info.cost.bytes)/float64(got))
		if info.cost.bytes < got {
			t.Errorf("%s: estimated %d bytes, the decoder allocated %d", c.name, info.cost.bytes, got)
		}
		if float64(info.cost.bytes) > c.slack*float64(got)+float64(decoderSlack) {
			t.Errorf("%s: estimated %d bytes, more than %.1f× the %d allocated", c.name, info.cost.bytes, c.slack, got)
		}
	}
}

// TestHostileImagesAreRefused builds small files that decode to a lot (a
// 290 KB progressive JPEG, a 380 KB 16-bit TIFF, an interlaced 16-bit PNG)
// and checks that the loaders skip them before decoding, naming the file,
// the cost and the fix, while images of the same size that decode cheaply
// pass.
func TestHostileImagesAreRefused(t *testing.T) {
	root := t.TempDir()
	if *hostileOut != "" {
		root = *hostileOut
	}
	for i := 0; i < 4; i++ {
		writePNG(t, filepath.Join(root, "a", string(rune('a'+i))+".png"), 0, i, false)
		writePNG(t, filepath.Join(root, "b", string(rune('a'+i))+".png"), 1, i, false)
	}
	hostile := map[string]struct {
		raw  []byte
		want string
	}{
		"progressive.jpg": {progressiveJPEG(7000, 7000, 3), "decoding it (a progressive JPEG of 7000x7000, 49.0 Mpx) would take about 701.2 MiB of memory, more than the 384 MiB one image may take (fix: re-save it as a baseline (non-progressive) JPEG"},
		"deep.tiff":       {zeroTIFF(7000, 7000, 16, true), "decoding it (a 16-bit TIFF of 7000x7000, 49.0 Mpx) would take about 1.5 GiB of memory, more than the 384 MiB one image may take (fix: re-save it as an 8-bit PNG or a JPEG"},
		"interlaced.png":  {zeroPNG(7000, 7000, 16, 6, true), "decoding it (an interlaced 16-bit PNG of 7000x7000, 49.0 Mpx) would take about 748.1 MiB of memory, more than the 384 MiB one image may take (fix: re-save it as an 8-bit, non-interlaced PNG"},
	}
	for name, h := range hostile {
		if err := os.WriteFile(filepath.Join(root, "a", name), h.raw, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes", name, len(h.raw))
	}
	var d *Dataset
	var err error
	if got := allocatedBy(func() { d, err = Load(root, Options{ImageSize: 8}) }); got > 64<<20 {
		t.Errorf("loading the folder allocated %d MiB: a hostile image was decoded", got>>20)
	}
	if err != nil {
		t.Fatal(err)
	}
	sum := d.Lint.Summary()
	for name, h := range hostile {
		if want := filepath.Join(root, "a", name) + ": skipped without decoding: image too large: " + h.want; !strings.Contains(sum, want) {
			t.Errorf("lint lacks\n%s\n in:\n%s", want, sum)
		}
		_, err := DecodeImageFile(filepath.Join(root, "a", name))
		if err == nil || !strings.Contains(err.Error(), "one image may take: re-save it") {
			t.Errorf("predict on %s: %v", name, err)
		}
	}
	if n := d.Train.Len() + d.Val.Len(); n != 8 {
		t.Errorf("%d images kept, want the 8 good ones", n)
	}
	// The same sizes, cheap to decode, pass the estimate.
	for name, raw := range map[string][]byte{"baseline 7000x7000 JPEG": jpegHeader(7000, 7000), "8-bit 7000x7000 PNG": zeroPNG(7000, 7000, 8, 2, false)} {
		if _, err := inspectImage(bytes.NewReader(raw), defaultImageLimits()); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// jpegHeader is a baseline JPEG header (4:2:0) of w×h without data: enough
// for the estimate.
func jpegHeader(w, h int) []byte {
	b := []byte{0xff, 0xd8, 0xff, 0xc0, 0, 17, 8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), 3, 1, 0x22, 0, 2, 0x11, 0, 3, 0x11, 0}
	return append(b, 0xff, 0xda, 0, 12, 3, 1, 0, 2, 0x11, 3, 0x11, 0, 63, 0, 0xff, 0xd9)
}

// tableTIFF is a TIFF of 1000 bytes of data whose StripOffsets,
// StripByteCounts and TileByteCounts are each n BYTE values at the same
// place: x/image/tiff reads each into 8 bytes a value.
func tableTIFF(n int) []byte {
	le := binary.LittleEndian
	b := []byte("II*\x00")
	b = le.AppendUint32(b, 8)
	entries := [][3]uint32{{256, 4, 1}, {257, 4, 1}, {258, 3, 1}, {262, 3, 1}, {273, 1, uint32(n)}, {279, 1, uint32(n)}, {325, 1, uint32(n)}}
	values := []uint32{1000, 1, 8, 1, 0, 0, 0}
	data := uint32(8 + 2 + 12*len(entries) + 4)
	b = le.AppendUint16(b, uint16(len(entries)))
	for i, e := range entries {
		b = le.AppendUint16(b, uint16(e[0]))
		b = le.AppendUint16(b, uint16(e[1]))
		b = le.AppendUint32(b, e[2])
		if e[2] > 4 {
			values[i] = data
		}
		b = le.AppendUint32(b, values[i])
	}
	b = le.AppendUint32(b, 0)
	return append(b, make([]byte, n)...)
}

func TestTIFFTablesAreCostedBeforeTheyAreRead(t *testing.T) {
	// 1 MiB of tables that x/image/tiff reads as 3 × 9 MiB.
	raw := tableTIFF(1 << 20)
	var head *tiffHeader
	var err error
	mine := allocatedBy(func() { head, err = readTIFFHeader(bytes.NewReader(raw), int64(len(raw))) })
	if err != nil {
		t.Fatal(err)
	}
	theirs := allocatedBy(func() { tiff.DecodeConfig(bytes.NewReader(raw)) })
	if head.header < theirs || head.header > 2*theirs || mine > 64<<10 {
		t.Errorf("estimated %d bytes for x/image/tiff's %d (reading the estimate took %d)", head.header, theirs, mine)
	}
	lim := imageLimits{pixels: MaxImagePixels, bytes: 16 << 20}
	in, _ := decoderInput(bytes.NewReader(raw))
	got := allocatedBy(func() { _, _, err = checkHeader(in, lim) })
	if err == nil || !strings.Contains(err.Error(), "reading this TIFF's header would take about 27 MiB of memory (its strip, tile or colour tables are that long), more than the 16 MiB one image may take") ||
		tooLargeFix(err) != fixTIFF || got > 1<<20 {
		t.Errorf("tables over the limit: %v (allocated %d)", err, got)
	}
}
