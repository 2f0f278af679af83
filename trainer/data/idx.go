package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// maxIDX bounds what an IDX header may claim, so a corrupt header cannot
// make the reader allocate without limit.
const maxIDX = 1 << 30

// ParseIDX reads an IDX file (the MNIST format): images (magic 0x803) or
// labels (0x801). name is used in errors. Gzip is detected from the bytes.
func ParseIDX(name string, raw []byte) (dims []int, payload []byte, err error) {
	if len(raw) >= 2 && raw[0] == 0x1f && raw[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %s: not a valid gzip file: %w", ErrData, name, err)
		}
		raw, err = io.ReadAll(io.LimitReader(zr, maxIDX+16))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %s: the gzip stream is damaged or truncated (%w): download the file again", ErrData, name, err)
		}
	}
	if len(raw) < 4 {
		return nil, nil, fmt.Errorf("%w: %s: %d bytes is too short for an IDX header", ErrData, name, len(raw))
	}
	if raw[0] != 0 || raw[1] != 0 || raw[2] != 0x08 {
		return nil, nil, fmt.Errorf("%w: %s: not an IDX file of unsigned bytes (magic %x)", ErrData, name, raw[:4])
	}
	nd := int(raw[3])
	if nd < 1 || nd > 4 || len(raw) < 4+4*nd {
		return nil, nil, fmt.Errorf("%w: %s: IDX header with %d dimensions is truncated or wrong", ErrData, name, nd)
	}
	total := 1
	for i := 0; i < nd; i++ {
		d := int(binary.BigEndian.Uint32(raw[4+4*i:]))
		if d <= 0 || d > maxIDX || total > maxIDX/d {
			return nil, nil, fmt.Errorf("%w: %s: dimension %d is %d: the header is corrupt", ErrData, name, i, d)
		}
		total *= d
		dims = append(dims, d)
	}
	body := raw[4+4*nd:]
	if len(body) < total {
		return nil, nil, fmt.Errorf("%w: %s: truncated: the header promises %d bytes of data, the file holds %d: download it again", ErrData, name, total, len(body))
	}
	return dims, body[:total], nil
}

// LoadIDXPair reads an images file and its labels file into a split.
func LoadIDXPair(imagesName string, images []byte, labelsName string, labels []byte, classes int) (*Split, int, int, error) {
	idims, px, err := ParseIDX(imagesName, images)
	if err != nil {
		return nil, 0, 0, err
	}
	ldims, lb, err := ParseIDX(labelsName, labels)
	if err != nil {
		return nil, 0, 0, err
	}
	if len(idims) != 3 || len(ldims) != 1 {
		return nil, 0, 0, fmt.Errorf("%w: %s and %s: want N×H×W images and N labels, got %v and %v", ErrData, imagesName, labelsName, idims, ldims)
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
// "" for the missing ones.
func findIDX(dir string) [4]string {
	var out [4]string
	for i, n := range idxNames {
		for _, cand := range []string{n + ".gz", n, n[:len(n)-8] + "-idx" + n[len(n)-7:len(n)-6] + "-ubyte.gz"} {
			p := filepath.Join(dir, cand)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				out[i] = p
				break
			}
		}
	}
	return out
}

// loadIDXDir loads MNIST-format files from a folder.
func loadIDXDir(dir string, files [4]string) (*Dataset, error) {
	read := func(p string) ([]byte, error) {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrData, err)
		}
		return b, nil
	}
	if files[0] == "" || files[1] == "" {
		return nil, fmt.Errorf("%w: %s: found %s but not its %s file", ErrData, dir, nonEmpty(files[0], files[1]), missingName(files))
	}
	ib, err := read(files[0])
	if err != nil {
		return nil, err
	}
	lb, err := read(files[1])
	if err != nil {
		return nil, err
	}
	train, h, w, err := LoadIDXPair(files[0], ib, files[1], lb, 10)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Name: filepath.Base(dir), Format: "idx", Root: dir, Classes: mnistClasses(dir), Channels: 1, Height: h, Width: w, Train: train}
	if files[2] != "" && files[3] != "" {
		tb, err := read(files[2])
		if err != nil {
			return nil, err
		}
		tl, err := read(files[3])
		if err != nil {
			return nil, err
		}
		test, th, tw, err := LoadIDXPair(files[2], tb, files[3], tl, 10)
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
