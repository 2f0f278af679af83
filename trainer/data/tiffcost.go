package data

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"

	"golang.org/x/image/tiff/lzw"
)

// TIFF tags (TIFF 6.0, section 8).
const (
	tiffWidth           = 256
	tiffLength          = 257
	tiffBitsPerSample   = 258
	tiffCompression     = 259
	tiffPhotometric     = 262
	tiffStripOffsets    = 273
	tiffRowsPerStrip    = 278
	tiffStripByteCounts = 279
	tiffTileWidth       = 322
	tiffTileLength      = 323
	tiffTileOffsets     = 324
	tiffTileByteCounts  = 325
)

// tiffReadTag says whether x/image/tiff reads a tag's values into memory
// (its parseIFD): each costs the raw values and 8 bytes per value.
func tiffReadTag(tag uint16) bool {
	switch tag {
	case tiffWidth, tiffLength, tiffBitsPerSample, tiffCompression, tiffPhotometric, tiffStripOffsets,
		tiffRowsPerStrip, tiffStripByteCounts, tiffTileWidth, tiffTileLength, tiffTileOffsets, tiffTileByteCounts,
		266 /* FillOrder */, 292 /* T4Options */, 293 /* T6Options */, 317 /* Predictor */, 320, /* ColorMap */
		338 /* ExtraSamples */, 339 /* SampleFormat */ :
		return true
	}
	return false
}

// tiffTypeSize is the size of one value of each IFD field type that
// x/image/tiff accepts (BYTE, ASCII, SHORT, LONG, RATIONAL).
func tiffTypeSize(typ uint16) int64 {
	return [...]int64{0, 1, 1, 2, 4, 8, 0}[min(typ, 6)]
}

// tiffEntry is one IFD entry: its type, count, and the 4 bytes that hold
// the values or their offset.
type tiffEntry struct {
	typ   uint16
	count uint32
	field [4]byte
}

// tiffHeader is a TIFF's first IFD, read without allocating more than its
// entries, and what reading it costs x/image/tiff.
type tiffHeader struct {
	ra     io.ReaderAt
	size   int64
	order  binary.ByteOrder
	tags   map[uint16]tiffEntry
	header int64 // bytes x/image/tiff allocates to read the IFD
}

// safeReadCost is what x/image/tiff's safeReadAt allocates for n bytes at
// off: n at once below 10 MiB; above, a 10 MiB chunk and an append-grown
// slice of the bytes the file really holds.
func safeReadCost(n, off, size int64) int64 {
	const chunk = 10 << 20
	if n < chunk {
		return n
	}
	return chunk + 3*max(0, min(n, size-off))
}

// readTIFFHeader reads the first IFD of a TIFF of size bytes.
func readTIFFHeader(ra io.ReaderAt, size int64) (*tiffHeader, error) {
	var p [8]byte
	if _, err := ra.ReadAt(p[:], 0); err != nil {
		return nil, fmt.Errorf("%w: TIFF header: %w", errCostHeader, err)
	}
	t := &tiffHeader{ra: ra, size: size, order: binary.LittleEndian, tags: map[uint16]tiffEntry{}}
	if p[0] == 'M' {
		t.order = binary.BigEndian
	}
	off := int64(t.order.Uint32(p[4:]))
	if _, err := ra.ReadAt(p[:2], off); err != nil {
		return nil, fmt.Errorf("%w: TIFF IFD at %d: %w", errCostHeader, off, err)
	}
	n := int64(t.order.Uint16(p[:2]))
	entries := make([]byte, 12*n)
	t.header = 12*n + 4<<10 // the entries, and the decoder's own records
	if _, err := ra.ReadAt(entries, off+2); err != nil {
		return nil, fmt.Errorf("%w: TIFF IFD entries at %d: %w", errCostHeader, off+2, err)
	}
	for i := int64(0); i < n; i++ {
		e := entries[12*i : 12*i+12]
		tag := t.order.Uint16(e)
		ent := tiffEntry{typ: t.order.Uint16(e[2:]), count: t.order.Uint32(e[4:]), field: [4]byte(e[8:12])}
		t.tags[tag] = ent
		if !tiffReadTag(tag) {
			continue
		}
		datalen := tiffTypeSize(ent.typ) * int64(ent.count)
		if datalen > 4 {
			at := int64(t.order.Uint32(ent.field[:]))
			t.header += safeReadCost(datalen, at, size)
			if at+datalen > size {
				break // x/image/tiff stops here with an error
			}
		}
		t.header += 8 * int64(ent.count)
	}
	return t, nil
}

// tiffValues reads the values of one tag (BYTE, SHORT or LONG) in small
// parts.
type tiffValues struct {
	br    *bufio.Reader
	size  int64
	left  uint32
	order binary.ByteOrder
}

// values reads tag's values; a tag that is absent or of another type has
// none.
func (t *tiffHeader) values(tag uint16) *tiffValues {
	e, ok := t.tags[tag]
	size := tiffTypeSize(e.typ)
	if !ok || size == 0 || size > 4 || e.typ == 2 {
		return &tiffValues{}
	}
	var r io.Reader
	if n := size * int64(e.count); n <= 4 {
		r = bytes.NewReader(e.field[:n])
	} else {
		r = io.NewSectionReader(t.ra, int64(t.order.Uint32(e.field[:])), n)
	}
	return &tiffValues{br: bufio.NewReaderSize(r, 4096), size: size, left: e.count, order: t.order}
}

// next is the next value; false when there is none (or the file ends).
func (v *tiffValues) next() (int64, bool) {
	if v.left == 0 {
		return 0, false
	}
	v.left--
	var b [4]byte
	if _, err := io.ReadFull(v.br, b[:v.size]); err != nil {
		v.left = 0
		return 0, false
	}
	switch v.size {
	case 2:
		return int64(v.order.Uint16(b[:])), true
	case 4:
		return int64(v.order.Uint32(b[:])), true
	}
	return int64(b[0]), true
}

// first is tag's first value, or def when it has none.
func (t *tiffHeader) first(tag uint16, def int64) int64 {
	if v, ok := t.values(tag).next(); ok {
		return v
	}
	return def
}

// tiffCost estimates what x/image/tiff allocates for a TIFF: the header's
// arrays (8 bytes a value, plus the
// raw values), the image (1 byte a pixel for grey or a palette, 2 for
// 16-bit grey, 4 for RGB(A), 8 for 16-bit RGB(A)), and the strip or tile
// buffers: each uncompressed block is read into a new slice; each
// compressed one is inflated into a reused buffer that grows to the
// block's real size (counted here by inflating it without keeping it,
// up to x/image/tiff's own cap of 8 bytes a pixel). When the pixels are
// above maxPixels it counts the header alone.
func tiffCost(ra io.ReaderAt, size, maxPixels int64) (decodeCost, error) {
	t, err := readTIFFHeader(ra, size)
	if err != nil {
		return decodeCost{}, err
	}
	c := decodeCost{bytes: t.header + decoderSlack, kind: "a TIFF", fix: fixTIFF}
	w, h := t.first(tiffWidth, 0), t.first(tiffLength, 0)
	if w <= 0 || h <= 0 || float64(w)*float64(h) > float64(maxPixels) {
		return c, nil
	}
	bps := t.first(tiffBitsPerSample, 1)
	per := int64(1) // grey, palette
	switch t.first(tiffPhotometric, -1) {
	case 0, 1:
		if bps == 16 {
			per = 2
		}
	case 2:
		per = 4
		if bps == 16 {
			per = 8
		}
	}
	if bps == 16 {
		c.kind = "a 16-bit TIFF"
	}
	c.bytes += per * w * h
	c.bytes += t.blockCost(w, h)
	return c, nil
}

// tiffBlocks is the strip or tile layout of a TIFF.
type tiffBlocks struct {
	w, h, n    int64 // a block's size, and how many
	offs, lens uint16
}

func (t *tiffHeader) layout(w, h int64) tiffBlocks {
	if tw := t.first(tiffTileWidth, 0); tw != 0 {
		th := max(t.first(tiffTileLength, 0), 1)
		return tiffBlocks{tw, th, (w + tw - 1) / tw * ((h + th - 1) / th), tiffTileOffsets, tiffTileByteCounts}
	}
	rows := t.first(tiffRowsPerStrip, 0)
	if rows <= 0 || rows > h {
		rows = h
	}
	return tiffBlocks{w, rows, (h + rows - 1) / rows, tiffStripOffsets, tiffStripByteCounts}
}

// blockCost is what reading the strips or tiles takes (see tiffCost).
func (t *tiffHeader) blockCost(w, h int64) int64 {
	b := t.layout(w, h)
	lim := int64(min(float64(b.w)*float64(b.h)*8, 1<<50)) // x/image/tiff's cap on an inflated block
	comp := t.first(tiffCompression, 1)
	offs, lens := t.values(b.offs), t.values(b.lens)
	var sum, biggest int64
	var in inflater
	defer in.close()
	for i := int64(0); i < b.n; i++ {
		off, ok1 := offs.next()
		n, ok2 := lens.next()
		if !ok1 || !ok2 {
			break // x/image/tiff refuses the file: too few blocks
		}
		switch comp {
		case 0, 1:
			sum += safeReadCost(n, off, t.size)
		case 5, 8, 32946:
			biggest = max(biggest, in.size(io.NewSectionReader(t.ra, off, n), comp, lim))
		case 32773:
			sum += 3 * packBitsSize(io.NewSectionReader(t.ra, off, n))
		default: // CCITT: up to the cap
			biggest = lim
		}
	}
	// A growing buffer holds up to twice a block, and leaves garbage.
	return sum + 4*biggest
}

// inflater counts the bytes of LZW or Deflate blocks, reusing its zlib
// reader from block to block (a TIFF may have a million tiles).
type inflater struct {
	zr io.ReadCloser
}

// size inflates a block and counts its bytes, up to lim; a damaged stream
// counts what it gave.
func (f *inflater) size(r io.Reader, comp, lim int64) int64 {
	var zr io.Reader
	switch {
	case comp == 5:
		lr := lzw.NewReader(r, lzw.MSB, 8)
		defer lr.Close()
		zr = lr
	case f.zr == nil:
		var err error
		if f.zr, err = zlib.NewReader(r); err != nil {
			f.zr = nil
			return 0
		}
		zr = f.zr
	default:
		if f.zr.(zlib.Resetter).Reset(r, nil) != nil {
			return 0
		}
		zr = f.zr
	}
	n, _ := io.Copy(io.Discard, io.LimitReader(zr, lim))
	return n
}

func (f *inflater) close() {
	if f.zr != nil {
		f.zr.Close()
	}
}

// packBitsSize is the size of a PackBits block once unpacked (TIFF 6.0,
// section 9), counted without unpacking it.
func packBitsSize(r io.Reader) int64 {
	br := bufio.NewReaderSize(r, 4096)
	var n int64
	for {
		b, err := br.ReadByte()
		if err != nil {
			return n
		}
		switch code := int64(int8(b)); {
		case code >= 0:
			k, _ := br.Discard(int(code + 1))
			n += int64(k)
		case code != -128:
			br.ReadByte()
			n += 1 - code
		}
	}
}
