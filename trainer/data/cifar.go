package data

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gpuwizard/internal/safefile"
)

const cifarRecord = 1 + 3*32*32

// cifarDir returns the folder holding CIFAR-10 binary batches (the path or
// its cifar-10-batches-bin sub-folder), or "".
func cifarDir(path string) string {
	for _, d := range []string{path, filepath.Join(path, "cifar-10-batches-bin")} {
		if _, err := os.Stat(filepath.Join(d, "data_batch_1.bin")); err == nil {
			return d
		}
	}
	return ""
}

// ParseCIFAR reads CIFAR-10 binary records (label byte + 3072 pixels, planar
// RGB) into a split. name is used in errors.
func ParseCIFAR(name string, raw []byte, classes int) (*Split, error) {
	s := &Split{}
	if err := appendCIFAR(s, name, raw, classes); err != nil {
		return nil, err
	}
	return s, nil
}

// appendCIFAR appends the records of a batch to s (whose room the caller
// has made).
func appendCIFAR(s *Split, name string, raw []byte, classes int) error {
	if len(raw) == 0 || len(raw)%cifarRecord != 0 {
		return fmt.Errorf("%w: %s: %d bytes is not a whole number of %d-byte CIFAR-10 records (truncated?): download the batch again", ErrData, name, len(raw), cifarRecord)
	}
	n := len(raw) / cifarRecord
	s.Pixels = slices.Grow(s.Pixels, n*(cifarRecord-1))
	s.Labels = slices.Grow(s.Labels, n)
	for i := 0; i < n; i++ {
		rec := raw[i*cifarRecord : (i+1)*cifarRecord]
		if int(rec[0]) >= classes {
			return fmt.Errorf("%w: %s: record %d has label %d; CIFAR-10 has classes 0..%d (is this CIFAR-100?)", ErrData, name, i, rec[0], classes-1)
		}
		s.Labels = append(s.Labels, int32(rec[0]))
		s.Pixels = append(s.Pixels, rec[1:]...)
	}
	return nil
}

var cifarClasses = []string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}

// cifarBatches are the batch files of dir: data_batch_1.bin (required) up
// to the first missing one of 2..5, and test_batch.bin when there is one.
func cifarBatches(dir string) (train []string, test string) {
	for i := 1; i <= 5; i++ {
		p := filepath.Join(dir, fmt.Sprintf("data_batch_%d.bin", i))
		if _, err := os.Lstat(p); err != nil && i > 1 {
			break
		}
		train = append(train, p)
	}
	if tp := filepath.Join(dir, "test_batch.bin"); fileExists(tp) {
		test = tp
	}
	return train, test
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// loadCIFAR reads the batches of dir into one buffer per split, sized from
// the files before any is read, within limit bytes of memory: one batch's
// bytes are held besides the dataset while it is parsed.
func loadCIFAR(dir string, limit int64) (*Dataset, error) {
	classes := append([]string(nil), cifarClasses...)
	if b, err := safefile.ReadFile(filepath.Join(dir, "batches.meta.txt"), 64<<10, "batches.meta.txt"); err == nil {
		var names []string
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				names = append(names, l)
			}
		}
		if len(names) == 10 {
			classes = names
		}
	}
	train, test := cifarBatches(dir)
	if err := confine(dir, append(train, test)...); err != nil {
		return nil, err
	}
	records := func(files []string) (int64, error) {
		var n int64
		for _, p := range files {
			st, err := safefile.Check(p)
			if err != nil {
				return 0, fmt.Errorf("%w: %w", ErrData, err)
			}
			n += min(st.Size(), MaxCIFARBatch) / cifarRecord
		}
		return n, nil
	}
	nTrain, err := records(train)
	if err != nil {
		return nil, err
	}
	nTest, err := records(nonEmptyList(test))
	if err != nil {
		return nil, err
	}
	need := (nTrain+nTest)*(cifarRecord-1+fixedImageBytes) + MaxCIFARBatch
	if need > limit {
		return nil, fmt.Errorf("%w: %s: %d CIFAR-10 images would take %s in memory, more than the %s a dataset may take: train on fewer batches", ErrData, dir, nTrain+nTest, bytesWords(need), bytesWords(limit))
	}
	d := &Dataset{Name: "cifar10", Format: "cifar10", Root: dir, Classes: classes, Channels: 3, Height: 32, Width: 32,
		Train:  &Split{Pixels: make([]uint8, 0, nTrain*(cifarRecord-1)), Labels: make([]int32, 0, nTrain)},
		Credit: "CIFAR-10 (Krizhevsky, 2009)"}
	if err := readCIFARBatches(d.Train, train); err != nil {
		return nil, err
	}
	if test != "" {
		d.Test = &Split{Pixels: make([]uint8, 0, nTest*(cifarRecord-1)), Labels: make([]int32, 0, nTest)}
		if err := readCIFARBatches(d.Test, []string{test}); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func nonEmptyList(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// readCIFARBatches appends the records of files to s, one batch in memory
// at a time.
func readCIFARBatches(s *Split, files []string) error {
	for _, p := range files {
		raw, err := safefile.ReadFile(p, MaxCIFARBatch, "a CIFAR-10 batch")
		if err != nil {
			return fmt.Errorf("%w: %w", ErrData, err)
		}
		if err := appendCIFAR(s, p, raw, 10); err != nil {
			return err
		}
	}
	return nil
}
