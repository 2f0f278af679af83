package data

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gpuwizard/internal/safefile"
)

// ParseIDX reads an IDX file held in memory; see ReadIDX.
func ParseIDX(name string, raw []byte) (dims []int, payload []byte, err error) {
	return ReadIDX(name, bytes.NewReader(raw))
}

// ReadIDX reads an IDX stream (the MNIST format): images (magic 0x803) or
// labels (0x801), raw or gzip (detected from the bytes). The header is read
// and checked first (at most MaxImagePixels per image and MaxDatasetBytes
// in all); then exactly the bytes it declares are read, so a gzip bomb
// inflates no further than its header allows. name is used in errors.
func ReadIDX(name string, r io.Reader) (dims []int, payload []byte, err error) {
	size := int64(-1) // the raw bytes available, when r says
	switch v := r.(type) {
	case interface{ Len() int }:
		size = int64(v.Len())
	case interface{ Stat() (fs.FileInfo, error) }:
		if st, err := v.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
	}
	br := bufio.NewReader(r)
	src := io.Reader(br)
	zipped := false
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %s: not a valid gzip file: %w", ErrData, name, err)
		}
		defer zr.Close()
		src, zipped = zr, true
	}
	// A gzip stream that ends early is truncated or damaged; which one,
	// the error says.
	broken := func(where string, n int64, err error) error {
		return fmt.Errorf("%w: %s: the gzip stream is truncated or damaged in the %s, after %d bytes (%w): download the file again", ErrData, name, where, n, err)
	}
	var magic [4]byte
	if n, err := io.ReadFull(src, magic[:]); err != nil {
		if zipped {
			return nil, nil, broken("header", int64(n), err)
		}
		return nil, nil, fmt.Errorf("%w: %s: %d bytes is too short for an IDX header", ErrData, name, n)
	}
	if magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08 {
		return nil, nil, fmt.Errorf("%w: %s: not an IDX file of unsigned bytes (magic %x)", ErrData, name, magic[:])
	}
	nd := int(magic[3])
	if nd < 1 || nd > 4 {
		return nil, nil, fmt.Errorf("%w: %s: IDX header with %d dimensions is wrong (1 to 4)", ErrData, name, nd)
	}
	raw := make([]byte, 4*nd)
	if n, err := io.ReadFull(src, raw); err != nil {
		if zipped {
			return nil, nil, broken("header", int64(4+n), err)
		}
		return nil, nil, fmt.Errorf("%w: %s: IDX header with %d dimensions is truncated", ErrData, name, nd)
	}
	total := int64(1)
	for i := 0; i < nd; i++ {
		d := int64(binary.BigEndian.Uint32(raw[4*i:]))
		if d == 0 {
			return nil, nil, fmt.Errorf("%w: %s: dimension %d is 0: the header is corrupt", ErrData, name, i)
		}
		dims = append(dims, int(d))
		if total <= MaxDatasetBytes { // d < 2³², so this never overflows
			total *= d
		}
	}
	if nd == 3 && int64(dims[1])*int64(dims[2]) > MaxImagePixels {
		return nil, nil, fmt.Errorf("%w: %s: the header declares images of %dx%d pixels, more than the %d Mpx an image may have: the header is corrupt or this is not an MNIST-style file",
			ErrData, name, dims[2], dims[1], MaxImagePixels/1_000_000)
	}
	if total > MaxDatasetBytes {
		return nil, nil, fmt.Errorf("%w: %s: the header declares %s (%s of data), more than the %s a dataset may take in memory: the header is corrupt, or train on a subset",
			ErrData, name, dimsString(dims), bigSize(dims), safefile.Size(MaxDatasetBytes))
	}
	if head := int64(4 + 4*nd); !zipped && size >= 0 && size-head < total {
		return nil, nil, fmt.Errorf("%w: %s: truncated: the header promises %d bytes of data, the file holds %d: download it again", ErrData, name, total, size-head)
	}
	payload, n, err := readFull(src, total)
	if err != nil {
		if zipped {
			return nil, nil, broken(fmt.Sprintf("data (the header promises %d bytes)", total), n, err)
		}
		return nil, nil, fmt.Errorf("%w: %s: truncated: the header promises %d bytes of data, the file holds %d: download it again", ErrData, name, total, n)
	}
	return dims, payload, nil
}

// readFull reads exactly n bytes. Up to 64 MiB it allocates them at once;
// above, it reads 64 MiB parts and joins them once all have arrived, so a
// stream that ends early (a header that lies) never costs more memory than
// the data it really holds, times two.
func readFull(r io.Reader, n int64) ([]byte, int64, error) {
	const part = 64 << 20
	if n <= part {
		buf := make([]byte, n)
		got, err := io.ReadFull(r, buf)
		return buf, int64(got), err
	}
	var parts [][]byte
	var got int64
	for got < n {
		p := make([]byte, min(part, n-got))
		k, err := io.ReadFull(r, p)
		got += int64(k)
		if err != nil {
			return nil, got, err
		}
		parts = append(parts, p)
	}
	out := make([]byte, 0, n)
	for i, p := range parts {
		out = append(out, p...)
		parts[i] = nil
	}
	return out, got, nil
}

// dimsString writes dimensions as 60000×28×28.
func dimsString(dims []int) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = strconv.Itoa(d)
	}
	return strings.Join(parts, "×")
}

// bigSize is the product of dims in bytes, in words, without overflow.
func bigSize(dims []int) string {
	v := 1.0
	for _, d := range dims {
		v *= float64(d)
	}
	if v >= 1<<40 {
		return fmt.Sprintf("%.3g TiB", v/(1<<40))
	}
	return safefile.Size(int64(v))
}

// LoadIDXPair reads an images file and its labels file (held in memory)
// into a split.
func LoadIDXPair(imagesName string, images []byte, labelsName string, labels []byte, classes int) (*Split, int, int, error) {
	return readIDXPair(imagesName, bytes.NewReader(images), labelsName, bytes.NewReader(labels), classes)
}

func readIDXPair(imagesName string, images io.Reader, labelsName string, labels io.Reader, classes int) (*Split, int, int, error) {
	idims, px, err := ReadIDX(imagesName, images)
	if err != nil {
		return nil, 0, 0, err
	}
	if len(idims) != 3 {
		return nil, 0, 0, fmt.Errorf("%w: %s: want N×H×W images, got %s", ErrData, imagesName, dimsString(idims))
	}
	ldims, lb, err := ReadIDX(labelsName, labels)
	if err != nil {
		return nil, 0, 0, err
	}
	if len(ldims) != 1 {
		return nil, 0, 0, fmt.Errorf("%w: %s: want N labels, got %s", ErrData, labelsName, dimsString(ldims))
	}
	if idims[0] != ldims[0] {
		return nil, 0, 0, fmt.Errorf("%w: %s has %d images but %s has %d labels: the files do not belong together", ErrData, imagesName, idims[0], labelsName, ldims[0])
	}
	s := &Split{Pixels: px, Labels: make([]int32, len(lb))}
	for i, v := range lb {
		if int(v) >= classes {
			return nil, 0, 0, fmt.Errorf("%w: %s: label %d of image %d is not a class 0..%d", ErrData, labelsName, v, i, classes-1)
		}
		s.Labels[i] = int32(v)
	}
	return s, idims[1], idims[2], nil
}

// idxNames are the file names of the official MNIST / Fashion-MNIST sets.
var idxNames = [4]string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}

// findIDX returns the paths of the four files in dir (".gz" or raw), or
// "" for the missing ones. Any kind of file counts: one that is not a
// regular file is refused, with its name, when it is read.
func findIDX(dir string) [4]string {
	var out [4]string
	for i, n := range idxNames {
		for _, cand := range []string{n + ".gz", n, n[:len(n)-8] + "-idx" + n[len(n)-7:len(n)-6] + "-ubyte.gz"} {
			p := filepath.Join(dir, cand)
			if _, err := os.Lstat(p); err == nil {
				out[i] = p
				break
			}
		}
	}
	return out
}

// loadIDXDir loads MNIST-format files from a folder.
func loadIDXDir(dir string, files [4]string) (*Dataset, error) {
	if files[0] == "" || files[1] == "" {
		return nil, fmt.Errorf("%w: %s: found %s but not its %s file", ErrData, dir, nonEmpty(files[0], files[1]), missingName(files))
	}
	train, h, w, err := loadIDXFiles(files[0], files[1])
	if err != nil {
		return nil, err
	}
	d := &Dataset{Name: filepath.Base(dir), Format: "idx", Root: dir, Classes: mnistClasses(dir), Channels: 1, Height: h, Width: w, Train: train}
	if files[2] != "" && files[3] != "" {
		test, th, tw, err := loadIDXFiles(files[2], files[3])
		if err != nil {
			return nil, err
		}
		if th != h || tw != w {
			return nil, fmt.Errorf("%w: %s is %dx%d but %s is %dx%d", ErrData, files[2], tw, th, files[0], w, h)
		}
		d.Test = test
	}
	return d, nil
}

// loadIDXFiles reads an images file and its labels file: regular files
// only, streamed through ReadIDX.
func loadIDXFiles(images, labels string) (*Split, int, int, error) {
	fi, _, err := safefile.Open(images)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%w: %w", ErrData, err)
	}
	defer fi.Close()
	fl, _, err := safefile.Open(labels)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%w: %w", ErrData, err)
	}
	defer fl.Close()
	return readIDXPair(images, fi, labels, fl, 10)
}

func nonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func missingName(files [4]string) string {
	if files[0] == "" {
		return "images (train-images-idx3-ubyte[.gz])"
	}
	return "labels (train-labels-idx1-ubyte[.gz])"
}

// fashionClasses are Fashion-MNIST's class names.
var fashionClasses = []string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}

func mnistClasses(dir string) []string {
	if bytes.Contains(bytes.ToLower([]byte(dir)), []byte("fashion")) {
		return append([]string(nil), fashionClasses...)
	}
	return []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
}
