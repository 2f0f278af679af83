// Command hostile writes the hostile inputs of bench/hostile-data.sh into a
// folder: a small image dataset to train on, a real PNG bomb (3.5 MB that
// decodes to 3.6 GB), a PNG just within the pixel limit, and gzip IDX bombs. The pipes, device links and YAML
// files are made by the script.
//
//	go run ./bench/hostile -out DIR
package main

import (
	"bufio"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"gpuwizard/internal/synth"
)

func main() {
	out := flag.String("out", "", "folder to write into")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "usage: hostile -out DIR")
		os.Exit(2)
	}
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	if err := synth.LeftRight(filepath.Join(out, "good"), 40); err != nil {
		return err
	}
	// 30000×30000 RGBA, all zero: 3.6 GB of pixels in about 3.5 MB.
	if err := pngBomb(filepath.Join(out, "bomb.png"), 30000, 30000); err != nil {
		return err
	}
	// 7000×7000 (49 Mpx): just within the limit, so it is decoded.
	if err := pngBomb(filepath.Join(out, "big.png"), 7000, 7000); err != nil {
		return err
	}
	// MNIST-sized header (60000×28×28), then zeros up to 2.7 GB.
	labels := make([]byte, 60000)
	for i := range labels {
		labels[i] = byte(i % 10)
	}
	dir := filepath.Join(out, "idx-bomb")
	if err := idxGz(filepath.Join(dir, "train-images-idx3-ubyte.gz"), []uint32{60000, 28, 28}, 2_700_000_000); err != nil {
		return err
	}
	if err := idxGzData(filepath.Join(dir, "train-labels-idx1-ubyte.gz"), []uint32{60000}, labels); err != nil {
		return err
	}
	// A valid header with huge dimensions (3,000,000 images of 1000×1000).
	dir = filepath.Join(out, "idx-huge")
	if err := idxGz(filepath.Join(dir, "train-images-idx3-ubyte.gz"), []uint32{3_000_000, 1000, 1000}, 1_000_000_000); err != nil {
		return err
	}
	if err := idxGzData(filepath.Join(dir, "train-labels-idx1-ubyte.gz"), []uint32{60000}, labels); err != nil {
		return err
	}
	return roundTwo(out)
}

// chunkWriter writes PNG chunks of one type from a stream.
type chunkWriter struct {
	w   io.Writer
	typ string
}

func (c chunkWriter) Write(p []byte) (int, error) {
	for off := 0; off < len(p); off += 1 << 20 {
		if err := chunk(c.w, c.typ, p[off:min(off+1<<20, len(p))]); err != nil {
			return off, err
		}
	}
	return len(p), nil
}

func chunk(w io.Writer, typ string, data []byte) error {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	b = append(b, typ...)
	b = append(b, data...)
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
	_, err := w.Write(b)
	return err
}

// pngBomb writes a valid w×h 8-bit RGBA PNG of zeros, streamed.
func pngBomb(path string, w, h uint32) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	bw.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	chunk(bw, "IHDR", append(ihdr, 8, 6, 0, 0, 0))
	idat := bufio.NewWriterSize(chunkWriter{bw, "IDAT"}, 1<<20)
	zw, _ := zlib.NewWriterLevel(idat, zlib.BestCompression)
	row := make([]byte, 1+4*int(w)) // filter byte 0, then the pixels
	for y := uint32(0); y < h; y++ {
		if _, err := zw.Write(row); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	idat.Flush()
	chunk(bw, "IEND", nil)
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}

func idxHeader(dims []uint32) []byte {
	b := []byte{0, 0, 8, byte(len(dims))}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, d)
	}
	return b
}

// idxGz writes an IDX header and zeros up to total bytes, gzip-compressed.
func idxGz(path string, dims []uint32, total int64) error {
	os.MkdirAll(filepath.Dir(path), 0o755)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	head := idxHeader(dims)
	zw.Write(head)
	zero := make([]byte, 1<<20)
	for left := total - int64(len(head)); left > 0; left -= int64(len(zero)) {
		if _, err := zw.Write(zero[:min(int64(len(zero)), left)]); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// idxGzData writes an IDX header and data, gzip-compressed.
func idxGzData(path string, dims []uint32, data []byte) error {
	os.MkdirAll(filepath.Dir(path), 0o755)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(f)
	zw.Write(idxHeader(dims))
	zw.Write(data)
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}
