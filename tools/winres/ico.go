package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/png"

	"golang.org/x/image/draw"
)

// iconSizes are the sizes Windows draws the application icon at (taskbar,
// title bar, Explorer's views, Alt+Tab).
var iconSizes = []int{16, 24, 32, 48, 64, 128, 256}

// makeICO scales the PNG src to each size and writes an ICO file whose
// entries are PNG images (as Windows Vista and later read them).
func makeICO(src []byte, sizes []int) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	if b := img.Bounds(); b.Dx() != b.Dy() {
		return nil, fmt.Errorf("the icon is %dx%d: it must be square", b.Dx(), b.Dy())
	}
	var entries [][]byte
	for _, s := range sizes {
		dst := image.NewNRGBA(image.Rect(0, 0, s, s))
		draw.CatmullRom.Scale(dst, dst.Bounds(), img, img.Bounds(), draw.Src, nil)
		var b bytes.Buffer
		if err := png.Encode(&b, dst); err != nil {
			return nil, err
		}
		entries = append(entries, b.Bytes())
	}
	var out bytes.Buffer
	le := binary.LittleEndian
	binary.Write(&out, le, [3]uint16{0, 1, uint16(len(sizes))}) // reserved, type 1 (icon), count
	offset := 6 + 16*len(sizes)
	for i, s := range sizes {
		dim := byte(s)
		if s >= 256 {
			dim = 0 // 0 means 256
		}
		out.Write([]byte{dim, dim, 0, 0})               // width, height, palette, reserved
		binary.Write(&out, le, [2]uint16{1, 32})        // planes, bits per pixel
		binary.Write(&out, le, uint32(len(entries[i]))) // bytes
		binary.Write(&out, le, uint32(offset))          // where
		offset += len(entries[i])
	}
	for _, e := range entries {
		out.Write(e)
	}
	return out.Bytes(), nil
}
