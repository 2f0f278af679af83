package data

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	if len(raw) == 0 || len(raw)%cifarRecord != 0 {
		return nil, fmt.Errorf("%w: %s: %d bytes is not a whole number of %d-byte CIFAR-10 records (truncated?): download the batch again", ErrData, name, len(raw), cifarRecord)
	}
	n := len(raw) / cifarRecord
	s := &Split{Pixels: make([]uint8, 0, n*(cifarRecord-1)), Labels: make([]int32, n)}
	for i := 0; i < n; i++ {
		rec := raw[i*cifarRecord : (i+1)*cifarRecord]
		if int(rec[0]) >= classes {
			return nil, fmt.Errorf("%w: %s: record %d has label %d; CIFAR-10 has classes 0..%d (is this CIFAR-100?)", ErrData, name, i, rec[0], classes-1)
		}
		s.Labels[i] = int32(rec[0])
		s.Pixels = append(s.Pixels, rec[1:]...)
	}
	return s, nil
}

var cifarClasses = []string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}

func loadCIFAR(dir string) (*Dataset, error) {
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
	d := &Dataset{Name: "cifar10", Format: "cifar10", Root: dir, Classes: classes, Channels: 3, Height: 32, Width: 32, Train: &Split{},
		Credit: "CIFAR-10 (Krizhevsky, 2009)"}
	for i := 1; i <= 5; i++ {
		p := filepath.Join(dir, fmt.Sprintf("data_batch_%d.bin", i))
		raw, err := safefile.ReadFile(p, MaxCIFARBatch, "a CIFAR-10 batch")
		if errors.Is(err, fs.ErrNotExist) && i > 1 {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrData, err)
		}
		s, err := ParseCIFAR(p, raw, 10)
		if err != nil {
			return nil, err
		}
		d.Train.Pixels = append(d.Train.Pixels, s.Pixels...)
		d.Train.Labels = append(d.Train.Labels, s.Labels...)
	}
	tp := filepath.Join(dir, "test_batch.bin")
	if _, err := os.Lstat(tp); err == nil {
		raw, err := safefile.ReadFile(tp, MaxCIFARBatch, "a CIFAR-10 batch")
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrData, err)
		}
		s, err := ParseCIFAR(tp, raw, 10)
		if err != nil {
			return nil, err
		}
		d.Test = s
	}
	return d, nil
}
