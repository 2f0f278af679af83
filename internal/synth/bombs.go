package synth

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"io"
)

// ProgressiveJPEG writes a valid progressive (SOF2) 3-component JPEG of
// width×height holding one DC scan of zeros: about 3 bits per 8×8 block, so
// 7000×7000 takes some 290 KB, while a decoder that keeps every
// coefficient block for the later scans (Go's image/jpeg does) allocates
// about 4 bytes per pixel per component, plus the image.
func ProgressiveJPEG(w io.Writer, width, height int) error {
	bw := bufio.NewWriter(w)
	seg := func(marker byte, body ...byte) {
		bw.Write([]byte{0xFF, marker})
		binary.Write(bw, binary.BigEndian, uint16(len(body)+2))
		bw.Write(body)
	}
	bw.Write([]byte{0xFF, 0xD8}) // SOI
	seg(0xDB, append([]byte{0}, bytes.Repeat([]byte{1}, 64)...)...)
	sof := []byte{8, byte(height >> 8), byte(height), byte(width >> 8), byte(width), 3}
	for c := byte(1); c <= 3; c++ {
		sof = append(sof, c, 0x11, 0)
	}
	seg(0xC2, sof...) // progressive DCT
	// DC table 0: one code, "0", for category 0 (a zero difference).
	dht := append([]byte{0x00, 1}, make([]byte, 15)...)
	seg(0xC4, append(dht, 0)...)
	seg(0xDA, 3, 1, 0x00, 2, 0x00, 3, 0x00, 0, 0, 0) // DC first scan of all three
	blocks := int64((width+7)/8) * int64((height+7)/8)
	zero := make([]byte, 64<<10)
	for left := (blocks*3 + 7) / 8; left > 0; left -= int64(len(zero)) {
		bw.Write(zero[:min(int64(len(zero)), left)])
	}
	bw.Write([]byte{0xFF, 0xD9}) // EOI
	return bw.Flush()
}

// DeflateTIFF writes a valid little-endian TIFF of width×height 16-bit RGB
// zeros in one Deflate strip: some 300 KB for 7000×7000, while a decoder
// that inflates the strip whole and then fills a 16-bit RGBA image holds
// about 14 bytes per pixel.
func DeflateTIFF(w io.Writer, width, height int) error {
	var strip bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&strip, zlib.BestCompression)
	row := make([]byte, 6*width)
	for y := 0; y < height; y++ {
		if _, err := zw.Write(row); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	type entry struct {
		tag, typ uint16
		count    uint32
		value    uint32
	}
	const short, long = 3, 4
	const nEntries = 10
	ifdAt := uint32(8)
	bpsAt := ifdAt + 2 + nEntries*12 + 4
	stripAt := bpsAt + 6
	entries := []entry{
		{256, long, 1, uint32(width)},
		{257, long, 1, uint32(height)},
		{258, short, 3, bpsAt}, // 16,16,16 stored below
		{259, short, 1, 8},     // Deflate
		{262, short, 1, 2},     // RGB
		{273, long, 1, stripAt},
		{277, short, 1, 3},
		{278, long, 1, uint32(height)},
		{279, long, 1, uint32(strip.Len())},
		{284, short, 1, 1}, // chunky
	}
	bw := bufio.NewWriter(w)
	le := binary.LittleEndian
	bw.WriteString("II*\x00")
	binary.Write(bw, le, ifdAt)
	binary.Write(bw, le, uint16(nEntries))
	for _, e := range entries {
		binary.Write(bw, le, e.tag)
		binary.Write(bw, le, e.typ)
		binary.Write(bw, le, e.count)
		binary.Write(bw, le, e.value) // a SHORT sits in the low bytes (little-endian)
	}
	binary.Write(bw, le, uint32(0)) // no next IFD
	binary.Write(bw, le, [3]uint16{16, 16, 16})
	bw.Write(strip.Bytes())
	return bw.Flush()
}
