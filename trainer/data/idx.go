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
	"slices"
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
// in all), before anything is allocated; then exactly the bytes it
// declares are read, so a gzip bomb inflates no further than its header
// allows. A gzip stream that r can rewind (a file, bytes) is inflated
// twice: once to count its bytes, so that a header that promises more
// than the stream holds costs no memory, then into the one buffer
// returned. name is used in errors.
func ReadIDX(name string, r io.Reader) (dims []int, payload []byte, err error) {
	f, err := readIDX(name, r, &idxBudget{limit: MaxDatasetBytes})
	return f.dims, f.payload, err
}

// idxFile is a read IDX file.
type idxFile struct {
	dims     []int
	payload  []byte
	trailing bool // the stream holds more than its header declares (not read)
}

// idxBudget is the memory the IDX files of a dataset may take: each file's
// bytes, and perItem for each of its items (the first dimension) on top.
type idxBudget struct {
	limit, used, perItem int64
	// labelsOf, for a labels file, is its images file and their number:
	// its bytes are counted with them, and it must have as many.
	labelsOf string
	images   int
}

// idxHeader is an IDX header: its dimensions, the bytes of data they
// declare (saturating above MaxDatasetBytes) and its own length.
type idxHeader struct {
	dims  []int
	total int64
	head  int64
}

// idxStream rewinds r when it can (rewind) and returns the stream of IDX
// bytes: r itself, or its gzip inflation.
func idxStream(name string, r io.Reader, rewind bool) (io.Reader, bool, func(), error) {
	if rewind {
		if _, err := r.(io.Seeker).Seek(0, io.SeekStart); err != nil {
			return nil, false, nil, fmt.Errorf("%w: %s: %w", ErrData, name, err)
		}
	}
	br := bufio.NewReader(r)
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, false, nil, fmt.Errorf("%w: %s: not a valid gzip file: %w", ErrData, name, err)
		}
		return zr, true, func() { zr.Close() }, nil
	}
	return br, false, func() {}, nil
}

// gzipBroken is the error for a gzip stream that ends early: truncated or
// damaged; which one, err says.
func gzipBroken(name, where string, n int64, err error) error {
	return fmt.Errorf("%w: %s: the gzip stream is truncated or damaged in the %s, after %d bytes (%w): download the file again", ErrData, name, where, n, err)
}

// readIDXHeader reads and checks the header: magic, dimensions, and at
// most MaxImagePixels an image.
func readIDXHeader(name string, src io.Reader, zipped bool) (idxHeader, error) {
	var magic [4]byte
	if n, err := io.ReadFull(src, magic[:]); err != nil {
		if zipped {
			return idxHeader{}, gzipBroken(name, "header", int64(n), err)
		}
		return idxHeader{}, fmt.Errorf("%w: %s: %d bytes is too short for an IDX header", ErrData, name, n)
	}
	if magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08 {
		return idxHeader{}, fmt.Errorf("%w: %s: not an IDX file of unsigned bytes (magic %x)", ErrData, name, magic[:])
	}
	nd := int(magic[3])
	if nd < 1 || nd > 4 {
		return idxHeader{}, fmt.Errorf("%w: %s: IDX header with %d dimensions is wrong (1 to 4)", ErrData, name, nd)
	}
	raw := make([]byte, 4*nd)
	if n, err := io.ReadFull(src, raw); err != nil {
		if zipped {
			return idxHeader{}, gzipBroken(name, "header", int64(4+n), err)
		}
		return idxHeader{}, fmt.Errorf("%w: %s: IDX header with %d dimensions is truncated", ErrData, name, nd)
	}
	h := idxHeader{total: 1, head: int64(4 + 4*nd)}
	for i := 0; i < nd; i++ {
		d := int64(binary.BigEndian.Uint32(raw[4*i:]))
		if d == 0 {
			return idxHeader{}, fmt.Errorf("%w: %s: dimension %d is 0: the header is corrupt", ErrData, name, i)
		}
		h.dims = append(h.dims, int(d))
		if h.total <= MaxDatasetBytes { // d < 2³², so this never overflows
			h.total *= d
		}
	}
	if nd == 3 && int64(h.dims[1])*int64(h.dims[2]) > MaxImagePixels {
		return idxHeader{}, fmt.Errorf("%w: %s: the header declares images of %dx%d pixels, more than the %d Mpx an image may have: the header is corrupt or this is not an MNIST-style file",
			ErrData, name, h.dims[2], h.dims[1], MaxImagePixels/1_000_000)
	}
	return h, nil
}

// charge counts a file of header h against the budget, or says how much
// the dataset would take and what fits.
func (b *idxBudget) charge(name string, h idxHeader) error {
	cost := h.total + mulSat(int64(h.dims[0]), b.perItem)
	if b.labelsOf != "" {
		if h.dims[0] != b.images {
			return fmt.Errorf("%w: %s has %d images but %s has %d labels: the files do not belong together", ErrData, b.labelsOf, b.images, name, h.dims[0])
		}
		return nil
	}
	if h.total <= MaxDatasetBytes && b.used+cost <= b.limit {
		b.used += cost
		return nil
	}
	with := "with labels and records"
	if b.used > 0 {
		with += fmt.Sprintf(" and the files read before it (%s)", bytesWords(b.used))
	}
	fit := ""
	if len(h.dims) == 3 && b.limit > b.used {
		if n := (b.limit - b.used) / (int64(h.dims[1])*int64(h.dims[2]) + b.perItem); n > 0 {
			fit = fmt.Sprintf(" (at most %d images of %dx%d fit)", n, h.dims[2], h.dims[1])
		}
	}
	need := float64(b.used) + dimsBytes(h.dims) + float64(h.dims[0])*float64(b.perItem)
	return fmt.Errorf("%w: %s: the header declares %s (%s of data): %s the dataset would take %s in memory, more than the %s a dataset may take: the header is corrupt, or train on a subset%s",
		ErrData, name, dimsString(h.dims), bigSize(h.dims), with, floatSize(need), bytesWords(b.limit), fit)
}

// readIDX is ReadIDX within a budget.
func readIDX(name string, r io.Reader, b *idxBudget) (idxFile, error) {
	size := int64(-1) // the raw bytes available, when r says
	switch v := r.(type) {
	case interface{ Len() int }:
		size = int64(v.Len())
	case interface{ Stat() (fs.FileInfo, error) }:
		if st, err := v.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
	}
	src, zipped, done, err := idxStream(name, r, false)
	if err != nil {
		return idxFile{}, err
	}
	defer func() {
		if done != nil {
			done()
		}
	}()
	h, err := readIDXHeader(name, src, zipped)
	if err != nil {
		return idxFile{}, err
	}
	if err := b.charge(name, h); err != nil {
		return idxFile{}, err
	}
	f := idxFile{dims: h.dims}
	_, rewinds := r.(io.Seeker)
	switch {
	case !zipped && size >= 0:
		if size-h.head < h.total {
			return idxFile{}, fmt.Errorf("%w: %s: truncated: the header promises %d bytes of data, the file holds %d: download it again", ErrData, name, h.total, size-h.head)
		}
		f.trailing = size-h.head > h.total
		f.payload, err = readExactly(name, src, h.total, false)
	case zipped && rewinds:
		if f.trailing, err = countInflated(name, src, h.total); err != nil {
			return idxFile{}, err
		}
		done()
		if src, _, done, err = idxStream(name, r, true); err != nil {
			return idxFile{}, err
		}
		if _, err := io.CopyN(io.Discard, src, h.head); err != nil {
			return idxFile{}, gzipBroken(name, "header", 0, err)
		}
		f.payload, err = readExactly(name, src, h.total, true)
	default: // a stream read once: grown as it comes
		f.payload, err = readGrowing(name, src, h.total, zipped)
		if err == nil {
			var one [1]byte
			n, _ := io.ReadFull(src, one[:])
			f.trailing = n > 0
		}
	}
	return f, err
}

// countInflated inflates the data of a gzip IDX file without keeping it,
// up to one byte more than the header declares: an error when the stream
// holds less; whether it holds more.
func countInflated(name string, src io.Reader, total int64) (bool, error) {
	n, err := io.CopyN(io.Discard, src, total+1)
	if n < total {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return false, gzipBroken(name, fmt.Sprintf("data (the header promises %d bytes)", total), n, err)
	}
	return n > total, nil
}

// readExactly reads the n bytes of data into one buffer.
func readExactly(name string, src io.Reader, n int64, zipped bool) ([]byte, error) {
	buf := make([]byte, n)
	got, err := io.ReadFull(src, buf)
	return buf, truncated(name, n, int64(got), err, zipped)
}

// truncated is the error for data that ended after got of n bytes.
func truncated(name string, n, got int64, err error, zipped bool) error {
	switch {
	case err == nil:
		return nil
	case zipped:
		return gzipBroken(name, fmt.Sprintf("data (the header promises %d bytes)", n), got, err)
	}
	return fmt.Errorf("%w: %s: truncated: the header promises %d bytes of data, the file holds %d: download it again", ErrData, name, n, got)
}

// readGrowing reads n bytes from a stream that cannot be read twice, into a
// buffer that grows as they come (to at most twice what arrived), so that
// a header that lies costs only what the stream really holds.
func readGrowing(name string, src io.Reader, n int64, zipped bool) ([]byte, error) {
	buf := make([]byte, 0, min(n, 1<<20))
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, int(min(n, 2*int64(cap(buf))))-len(buf))
		}
		k, err := io.ReadFull(src, buf[len(buf):min(int64(cap(buf)), n)])
		buf = buf[:len(buf)+k]
		if err != nil && int64(len(buf)) < n {
			return nil, truncated(name, n, int64(len(buf)), err, zipped)
		}
	}
	return buf, nil
}

// dimsString writes dimensions as 60000×28×28.
func dimsString(dims []int) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = strconv.Itoa(d)
	}
	return strings.Join(parts, "×")
}

// dimsBytes is the product of dims, without overflow.
func dimsBytes(dims []int) float64 {
	v := 1.0
	for _, d := range dims {
		v *= float64(d)
	}
	return v
}

// bigSize is the product of dims in bytes, in words.
func bigSize(dims []int) string { return floatSize(dimsBytes(dims)) }

// floatSize is a byte count that may not fit an int64, in words.
func floatSize(v float64) string {
	if v >= 1<<40 {
		return fmt.Sprintf("%.3g TiB", v/(1<<40))
	}
	return safefile.Size(int64(v))
}

// LoadIDXPair reads an images file and its labels file (held in memory)
// into a split.
func LoadIDXPair(imagesName string, images []byte, labelsName string, labels []byte, classes int) (*Split, int, int, error) {
	s, h, w, _, err := readIDXPair(imagesName, bytes.NewReader(images), labelsName, bytes.NewReader(labels), classes, &idxBudget{limit: MaxDatasetBytes})
	return s, h, w, err
}

// readIDXPair reads an images file and its labels file within a budget;
// it names the files that hold more than their header declares.
func readIDXPair(imagesName string, images io.Reader, labelsName string, labels io.Reader, classes int, b *idxBudget) (*Split, int, int, []string, error) {
	b.perItem = fixedImageBytes
	im, err := readIDX(imagesName, images, b)
	if err != nil {
		return nil, 0, 0, nil, err
	}
	if len(im.dims) != 3 {
		return nil, 0, 0, nil, fmt.Errorf("%w: %s: want N×H×W images, got %s", ErrData, imagesName, dimsString(im.dims))
	}
	b.perItem, b.labelsOf, b.images = 0, imagesName, im.dims[0] // the labels are counted with the images
	lb, err := readIDX(labelsName, labels, b)
	b.labelsOf = ""
	if err != nil {
		return nil, 0, 0, nil, err
	}
	if len(lb.dims) != 1 {
		return nil, 0, 0, nil, fmt.Errorf("%w: %s: want N labels, got %s", ErrData, labelsName, dimsString(lb.dims))
	}
	if im.dims[0] != lb.dims[0] {
		return nil, 0, 0, nil, fmt.Errorf("%w: %s has %d images but %s has %d labels: the files do not belong together", ErrData, imagesName, im.dims[0], labelsName, lb.dims[0])
	}
	s := &Split{Pixels: im.payload, Labels: make([]int32, len(lb.payload))}
	for i, v := range lb.payload {
		if int(v) >= classes {
			return nil, 0, 0, nil, fmt.Errorf("%w: %s: label %d of image %d is not a class 0..%d", ErrData, labelsName, v, i, classes-1)
		}
		s.Labels[i] = int32(v)
	}
	var long []string
	for _, f := range []struct {
		name string
		more bool
	}{{imagesName, im.trailing}, {labelsName, lb.trailing}} {
		if f.more {
			long = append(long, f.name)
		}
	}
	return s, im.dims[1], im.dims[2], long, nil
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

// loadIDXDir loads MNIST-format files from a folder, all within limit
// bytes of memory.
func loadIDXDir(dir string, files [4]string, limit int64) (*Dataset, error) {
	if files[0] == "" || files[1] == "" {
		return nil, fmt.Errorf("%w: %s: found %s but not its %s file", ErrData, dir, nonEmpty(files[0], files[1]), missingName(files))
	}
	if err := confine(dir, files[:]...); err != nil {
		return nil, err
	}
	b := &idxBudget{limit: limit}
	train, h, w, long, err := loadIDXFiles(files[0], files[1], b)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Name: filepath.Base(dir), Format: "idx", Root: dir, Classes: mnistClasses(dir), Channels: 1, Height: h, Width: w, Train: train, Lint: newLint("idx")}
	if files[2] != "" && files[3] != "" {
		test, th, tw, more, err := loadIDXFiles(files[2], files[3], b)
		if err != nil {
			return nil, err
		}
		if th != h || tw != w {
			return nil, fmt.Errorf("%w: %s is %dx%d but %s is %dx%d", ErrData, files[2], tw, th, files[0], w, h)
		}
		d.Test, long = test, append(long, more...)
	}
	for _, f := range long {
		d.Lint.add(Problem{Severity: LintWarning, File: f, Message: "the file holds more data than its header declares; only the declared images were read",
			Fix: "download it again: the header or the data is damaged"})
	}
	return d, nil
}

// loadIDXFiles reads an images file and its labels file: regular files
// only, streamed through readIDX.
func loadIDXFiles(images, labels string, b *idxBudget) (*Split, int, int, []string, error) {
	fi, _, err := safefile.Open(images)
	if err != nil {
		return nil, 0, 0, nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	defer fi.Close()
	fl, _, err := safefile.Open(labels)
	if err != nil {
		return nil, 0, 0, nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	defer fl.Close()
	return readIDXPair(images, fi, labels, fl, 10, b)
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
