package data

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"
)

// decodeCost is the memory that decoding one image takes, estimated from
// its header before anything is decoded: the decoded image in the type
// the decoder returns (not width×height×4: a 16-bit PNG decodes to 8
// bytes a pixel), plus what the decoder holds on the way (a progressive
// JPEG's coefficients, an interlaced PNG's passes, TIFF strip buffers).
type decodeCost struct {
	bytes int64
	kind  string // what the image is, for messages: "a progressive JPEG"
	fix   string // how to make it cheaper, for messages
}

// decoderSlack is what every decoder holds besides the image: readers,
// Huffman or LZW tables, zlib's window.
const decoderSlack = 256 << 10

// Fixes for images that cost too much to decode.
const (
	fixShrink      = "shrink it, or delete it"
	fixBaselineJPG = "re-save it as a baseline (non-progressive) JPEG, or shrink it, or delete it"
	fix8BitPNG     = "re-save it as an 8-bit, non-interlaced PNG, or shrink it, or delete it"
	fixTIFF        = "re-save it as an 8-bit PNG or a JPEG (or as a tiled TIFF), or shrink it, or delete it"
)

// errCostHeader is returned (wrapped) when a header that
// image.DecodeConfig accepted is too short or odd for the cost estimate.
var errCostHeader = errors.New("header")

// imageCost estimates what decoding an image of format and config c
// takes (a TIFF: tiffCost). r is a fresh reader at the file's start; size
// is the file's size.
func imageCost(r *bufio.Reader, format string, c image.Config, size int64) (decodeCost, error) {
	px := int64(c.Width) * int64(c.Height)
	switch format {
	case "jpeg":
		return jpegCost(r, c.Width, c.Height)
	case "png":
		return pngCost(r, c.Width, c.Height)
	case "gif":
		// The first frame (1 byte a pixel, within the screen) and, when it
		// is interlaced, its reordered copy.
		return decodeCost{bytes: 2*px + decoderSlack, kind: "a GIF", fix: fixShrink}, nil
	case "bmp":
		per := int64(4) // 24 and 32 bits: RGBA
		if _, ok := c.ColorModel.(color.Palette); ok {
			per = 1
		}
		return decodeCost{bytes: per*px + 4*int64(c.Width) + decoderSlack, kind: "a BMP", fix: fixShrink}, nil
	case "webp":
		return webpCost(r, c.Width, c.Height, size)
	}
	// A format registered elsewhere: the widest Go image, twice.
	return decodeCost{bytes: 16*px + decoderSlack, kind: "a " + format + " image", fix: fixShrink}, nil
}

// jpegComponent is one component of a JPEG frame: its sampling factors.
type jpegComponent struct{ h, v int }

// jpegCost reads a JPEG's markers up to its first scan: the frame (SOF0,
// SOF1 or SOF2 for progressive) and the APP0/APP14 markers that decide
// whether image/jpeg converts to RGBA. image/jpeg allocates the YCbCr (or
// Gray) image at the size of whole MCUs, a black plane and an RGBA or CMYK
// image for 4 components, an RGBA image for RGB JPEGs, and for progressive
// JPEGs every component's coefficients at once: 64 int32 (256 bytes) per
// 8×8 block, 4 bytes a pixel per full-resolution component.
func jpegCost(r *bufio.Reader, w, h int) (decodeCost, error) {
	var soi [2]byte
	if _, err := io.ReadFull(r, soi[:]); err != nil || soi != [2]byte{0xff, 0xd8} {
		return decodeCost{}, fmt.Errorf("%w: no JPEG start marker", errCostHeader)
	}
	var comps []jpegComponent
	var ids []byte
	progressive, jfif, adobe, adobeTransform := false, false, false, byte(0)
	for {
		marker, err := jpegMarker(r)
		if err != nil {
			return decodeCost{}, err
		}
		if marker == 0xd8 || marker == 0x01 || (marker >= 0xd0 && marker <= 0xd7) {
			continue // no length
		}
		if marker == 0xd9 || marker == 0xda { // EOI, SOS: the header is over
			break
		}
		var lb [2]byte
		if _, err := io.ReadFull(r, lb[:]); err != nil {
			return decodeCost{}, fmt.Errorf("%w: JPEG marker %x: %w", errCostHeader, marker, err)
		}
		n := int(binary.BigEndian.Uint16(lb[:])) - 2
		if n < 0 {
			return decodeCost{}, fmt.Errorf("%w: JPEG marker %x has a negative length", errCostHeader, marker)
		}
		switch marker {
		case 0xc0, 0xc1, 0xc2:
			progressive = marker == 0xc2
			if comps, ids, err = jpegFrame(r, n); err != nil {
				return decodeCost{}, err
			}
		case 0xe0, 0xee:
			seg, err := peekSegment(r, n, 12)
			if err != nil {
				return decodeCost{}, err
			}
			if marker == 0xe0 && len(seg) >= 5 && string(seg[:5]) == "JFIF\x00" {
				jfif = true
			}
			if marker == 0xee && len(seg) >= 12 && string(seg[:5]) == "Adobe" {
				adobe, adobeTransform = true, seg[11]
			}
		default:
			if _, err := r.Discard(n); err != nil {
				return decodeCost{}, fmt.Errorf("%w: JPEG marker %x: %w", errCostHeader, marker, err)
			}
		}
	}
	if len(comps) == 0 {
		return decodeCost{}, fmt.Errorf("%w: no JPEG frame before the first scan", errCostHeader)
	}
	rgb := len(comps) == 3 && !jfif && ((adobe && adobeTransform == 0) || string(ids) == "RGB")
	return jpegBytes(comps, w, h, progressive, rgb), nil
}

// jpegBytes is image/jpeg's allocation for a frame (see jpegCost).
func jpegBytes(comps []jpegComponent, w, h int, progressive, rgb bool) decodeCost {
	if len(comps) == 1 {
		comps[0] = jpegComponent{1, 1} // image/jpeg ignores a lone component's factors
	}
	h0, v0 := int64(max(comps[0].h, 1)), int64(max(comps[0].v, 1))
	mxx := (int64(w) + 8*h0 - 1) / (8 * h0)
	myy := (int64(h) + 8*v0 - 1) / (8 * v0)
	luma := 64 * h0 * v0 * mxx * myy
	px := int64(w) * int64(h)
	b := luma
	if len(comps) >= 3 {
		hr, vr := h0/int64(max(comps[1].h, 1)), v0/int64(max(comps[1].v, 1))
		b += 2 * luma / max(hr*vr, 1)
	}
	if len(comps) == 4 {
		b += 64*int64(comps[3].h)*int64(comps[3].v)*mxx*myy + 4*px
	}
	if rgb {
		b += 4 * px
	}
	c := decodeCost{kind: "a JPEG", fix: fixShrink}
	if progressive {
		for _, cp := range comps {
			b += 256 * mxx * myy * int64(cp.h) * int64(cp.v)
		}
		c.kind, c.fix = "a progressive JPEG", fixBaselineJPG
	}
	c.bytes = b + decoderSlack
	return c
}

// jpegMarker reads the next marker, skipping fill bytes (and, as
// image/jpeg does, stray bytes before them).
func jpegMarker(r *bufio.Reader) (byte, error) {
	for {
		b, err := r.ReadByte()
		if err != nil {
			return 0, fmt.Errorf("%w: JPEG ends before its first scan: %w", errCostHeader, err)
		}
		if b != 0xff {
			continue
		}
		for b == 0xff {
			if b, err = r.ReadByte(); err != nil {
				return 0, fmt.Errorf("%w: JPEG ends before its first scan: %w", errCostHeader, err)
			}
		}
		if b != 0 {
			return b, nil
		}
	}
}

// jpegFrame reads a SOF segment of n bytes: the components' ids and
// sampling factors.
func jpegFrame(r *bufio.Reader, n int) ([]jpegComponent, []byte, error) {
	seg, err := peekSegment(r, n, n)
	if err != nil {
		return nil, nil, err
	}
	if len(seg) < 6 || len(seg) < 6+3*int(seg[5]) || seg[5] == 0 || seg[5] > 4 {
		return nil, nil, fmt.Errorf("%w: JPEG frame header of %d bytes is malformed", errCostHeader, n)
	}
	nc := int(seg[5])
	comps := make([]jpegComponent, nc)
	ids := make([]byte, nc)
	for i := range comps {
		c := seg[6+3*i:]
		ids[i] = c[0]
		comps[i] = jpegComponent{int(c[1] >> 4), int(c[1] & 0x0f)}
	}
	return comps, ids, nil
}

// peekSegment returns the first min(n, keep) bytes of a segment of n
// bytes and moves past all n.
func peekSegment(r *bufio.Reader, n, keep int) ([]byte, error) {
	seg := make([]byte, min(n, keep))
	if _, err := io.ReadFull(r, seg); err != nil {
		return nil, fmt.Errorf("%w: segment of %d bytes: %w", errCostHeader, n, err)
	}
	if _, err := r.Discard(n - len(seg)); err != nil {
		return nil, fmt.Errorf("%w: segment of %d bytes: %w", errCostHeader, n, err)
	}
	return seg, nil
}

// pngCost reads IHDR and the chunks before the first IDAT (for tRNS).
// image/png decodes to Gray, Gray16, Paletted, RGBA/NRGBA (4 bytes a
// pixel) or RGBA64/NRGBA64 (8 bytes, any 16-bit colour or 16-bit grey
// with transparency); an interlaced PNG allocates each of its 7 passes as
// an image of that type, then the whole one.
func pngCost(r *bufio.Reader, w, h int) (decodeCost, error) {
	var head [33]byte // signature, IHDR's length, type, 13 bytes, CRC
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return decodeCost{}, fmt.Errorf("%w: PNG header: %w", errCostHeader, err)
	}
	depth, ct, interlaced := int64(head[24]), head[25], head[28] == 1
	trns, err := pngHasTRNS(r)
	if err != nil {
		return decodeCost{}, err
	}
	channels := int64(4) // colour type 6, and any other (image/png refuses them)
	switch ct {
	case 0, 3:
		channels = 1
	case 2:
		channels = 3
	case 4:
		channels = 2
	}
	per := int64(4)
	switch {
	case ct == 3 || (ct == 0 && depth <= 8 && !trns):
		per = 1
	case ct == 0 && depth == 16 && !trns:
		per = 2
	case depth == 16:
		per = 8
	}
	px := int64(w) * int64(h)
	row := 1 + (int64(w)*channels*depth+7)/8
	c := decodeCost{bytes: per*px + 2*row + decoderSlack, kind: "a PNG", fix: fixShrink}
	if depth == 16 {
		c.kind, c.fix = "a 16-bit PNG", fix8BitPNG
	}
	if interlaced {
		c.bytes += per*px + 2*row
		c.kind, c.fix = "an interlaced PNG", fix8BitPNG
		if depth == 16 {
			c.kind = "an interlaced 16-bit PNG"
		}
	}
	return c, nil
}

// pngHasTRNS reads the chunks after IHDR up to the first IDAT and says
// whether one is tRNS (which turns grey and RGB into NRGBA).
func pngHasTRNS(r *bufio.Reader) (bool, error) {
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			return false, fmt.Errorf("%w: PNG ends before its image data: %w", errCostHeader, err)
		}
		switch string(ch[4:]) {
		case "IDAT", "IEND":
			return false, nil
		case "tRNS":
			return true, nil
		}
		if _, err := r.Discard(int(binary.BigEndian.Uint32(ch[:4])) + 4); err != nil {
			return false, fmt.Errorf("%w: PNG chunk %q: %w", errCostHeader, ch[4:], err)
		}
	}
}

// maxVP8Partitions is the most x/image/vp8 reads into memory before it
// decodes: 7 partitions whose lengths are 24-bit numbers, and the last.
const maxVP8Partitions = 8 << 24

// webpCost reads the RIFF chunks up to the image data. x/image/webp
// decodes lossy VP8 to 4:2:0 YCbCr at the size of whole macroblocks after
// reading the chunk (its declared length, up to 128 MiB) into memory;
// lossless VP8L to NRGBA, with a second NRGBA for the colour-indexing
// transform; an alpha plane through VP8L too, then copied. The Huffman
// tables of a VP8L stream depend on the stream and are not counted.
func webpCost(r *bufio.Reader, w, h int, size int64) (decodeCost, error) {
	var head [12]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return decodeCost{}, fmt.Errorf("%w: WebP header: %w", errCostHeader, err)
	}
	px := int64(w) * int64(h)
	mb := (int64(w) + 15) / 16 * 16 * ((int64(h) + 15) / 16 * 16)
	var total int64
	for {
		var ch [8]byte
		if _, err := io.ReadFull(r, ch[:]); err != nil {
			break // image/webp has read what it needs: count what was seen
		}
		n := int64(binary.LittleEndian.Uint32(ch[4:]))
		switch string(ch[:4]) {
		case "VP8 ":
			return decodeCost{bytes: total + mb*3/2 + min(n, maxVP8Partitions, size) + decoderSlack, kind: "a WebP", fix: fixShrink}, nil
		case "VP8L":
			return decodeCost{bytes: total + 8*px + decoderSlack, kind: "a lossless WebP", fix: fixShrink}, nil
		case "ALPH":
			total += 9 * px // the alpha image through VP8L (NRGBA, twice), then its plane
		}
		if _, err := r.Discard(int(min(n+n&1, size))); err != nil {
			break
		}
	}
	return decodeCost{bytes: total + 8*px + mb*3/2 + decoderSlack, kind: "a WebP", fix: fixShrink}, nil
}
