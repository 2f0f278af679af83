package data

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"io"
	"math"
	"os"
	"runtime"
	"sync"

	"gpuwizard/internal/safefile"
)

// Limits on what a dataset may make gpuwizard read and hold. Every reader
// checks them before it allocates: image headers before decoding, IDX
// headers before inflating, file sizes before reading. They bound what is
// really allocated, not what a header declares: a dataset's memory counts
// every copy made of it, an image's the decoder's own buffers.
const (
	// MaxImagePixels is the most pixels (width×height, from the header) one
	// image may have; a bigger one is skipped with a warning, never
	// decoded. 50 Mpx is a 8660×5773 photo, more than a 45 Mpx camera.
	MaxImagePixels = 50_000_000
	// MaxImageDecodeBytes is the most memory decoding one image may take,
	// estimated from its header (imageCost): the decoded image in the type
	// the decoder returns and the decoder's own buffers (a progressive
	// JPEG's coefficients, an interlaced PNG's passes, TIFF strips). A
	// bigger one is skipped with a warning naming the cost and the fix,
	// never decoded. A 50 Mpx 8-bit PNG takes 191 MiB, a baseline JPEG
	// 72 to 143 MiB, a 24 Mpx progressive JPEG (4:2:0) about 170 MiB.
	MaxImageDecodeBytes = 384 << 20
	// MaxDecodingBytes is the most memory all workers' decoders take at the
	// same time, by the same estimates: an image waits until the budget has
	// room (one image of up to MaxImageDecodeBytes always fits). It bounds
	// decoding memory whatever the number of cores.
	MaxDecodingBytes = 256 << 20
	// MaxImageFile is the largest image file read (bytes).
	MaxImageFile = 512 << 20
	// MaxDatasetBytes is the most memory a dataset may take, checked before
	// it is loaded, with everything counted (memoryNeed): its 8-bit pixels
	// (held once: the splits share them), each image's label, path and
	// records, and what loading takes on top (the decoding budget, resize
	// buffers); while training, the float32 batches take the decoders'
	// place (CheckBatch).
	MaxDatasetBytes = 2 << 30
	// MaxYAMLFile caps data.yaml.
	MaxYAMLFile = 1 << 20
	// MaxCOCOFile caps a COCO JSON file (COCO 2017's instances_train2017.json
	// is 448 MiB).
	MaxCOCOFile = 512 << 20
	// MaxCOCOImages and MaxCOCOAnnotations cap the lists of a COCO file,
	// counted while it is read: COCO 2017 train has 118,287 images and
	// 860,001 annotations, Objects365 1.7 million images.
	MaxCOCOImages      = 2_000_000
	MaxCOCOAnnotations = 8_000_000
	// MaxLabelFile caps one YOLO label file.
	MaxLabelFile = 16 << 20
	// MaxListFile caps a YOLO list file (one image path a line).
	MaxListFile = 64 << 20
	// MaxCIFARBatch caps a CIFAR-10 batch file (one holds 30,730,000 bytes).
	MaxCIFARBatch = 64 << 20
)

// ErrImageTooLarge is returned (wrapped) for an image whose header declares
// more than MaxImagePixels, or whose decoding would take more than
// MaxImageDecodeBytes.
var ErrImageTooLarge = errors.New("image too large")

// tooLargeError is ErrImageTooLarge with the fix that suits the image.
type tooLargeError struct {
	msg, fix string
}

func (e *tooLargeError) Error() string { return ErrImageTooLarge.Error() + ": " + e.msg }
func (e *tooLargeError) Unwrap() error { return ErrImageTooLarge }

// tooLargeFix is the fix for an image refused by the limits.
func tooLargeFix(err error) string {
	var e *tooLargeError
	if errors.As(err, &e) {
		return e.fix
	}
	return fmt.Sprintf("shrink it below %d megapixels, or delete it", MaxImagePixels/1_000_000)
}

// imageLimits are what one image may take: pixels (from its header) and
// memory to decode it (estimated from its header).
type imageLimits struct {
	pixels, bytes int64
}

// defaultImageLimits are MaxImagePixels and MaxImageDecodeBytes.
func defaultImageLimits() imageLimits {
	return imageLimits{MaxImagePixels, MaxImageDecodeBytes}
}

// checkImageHeader reads an image's header and refuses sizes that are
// empty or above maxPixels (MaxImagePixels but in fuzzing), before
// anything is decoded; see checkHeader.
func checkImageHeader(r io.Reader, maxPixels int64) (image.Config, string, error) {
	return checkHeader(r, imageLimits{maxPixels, MaxImageDecodeBytes})
}

// checkHeader is checkImageHeader. When r is a decoderInput, a TIFF's IFD
// is costed before image.DecodeConfig reads it: x/image/tiff allocates 8
// bytes for every value of its arrays, so a small file can declare arrays
// that cost gigabytes.
func checkHeader(r io.Reader, lim imageLimits) (image.Config, string, error) {
	if in, ok := r.(peekReaderAt); ok {
		if m, _ := in.Peek(4); string(m) == "II*\x00" || string(m) == "MM\x00*" {
			t, err := readTIFFHeader(in.ReaderAt, math.MaxInt64)
			if err != nil {
				return image.Config{}, "tiff", err
			}
			if t.header > lim.bytes {
				return image.Config{}, "tiff", &tooLargeError{fmt.Sprintf("reading this TIFF's header would take about %s of memory (its strip, tile or colour tables are that long), more than the %s one image may take",
					bytesWords(t.header), bytesWords(lim.bytes)), fixTIFF}
			}
		}
	}
	c, format, err := image.DecodeConfig(r)
	if err != nil {
		return c, format, err
	}
	if c.Width <= 0 || c.Height <= 0 {
		return c, format, fmt.Errorf("the %s header declares %dx%d pixels", format, c.Width, c.Height)
	}
	if int64(c.Width)*int64(c.Height) > lim.pixels {
		return c, format, &tooLargeError{fmt.Sprintf("the %s header declares %dx%d (%.0f Mpx), more than the %.0f Mpx an image may have",
			format, c.Width, c.Height, float64(c.Width)*float64(c.Height)/1e6, float64(lim.pixels)/1e6),
			fmt.Sprintf("shrink it below %.0f megapixels, or delete it", float64(lim.pixels)/1e6)}
	}
	return c, format, nil
}

// imageInfo is what an image's header says: its size and format, and what
// decoding it takes.
type imageInfo struct {
	image.Config
	format string
	cost   decodeCost
}

// inspectImage reads src's header without decoding it: its size is checked
// against lim.pixels (checkHeader), then the decoder's memory, estimated
// from the header (imageCost, tiffCost), against lim.bytes.
func inspectImage(src imageSource, lim imageLimits) (imageInfo, error) {
	var info imageInfo
	in, err := decoderInput(src)
	if err != nil {
		return info, err
	}
	if info.Config, info.format, err = checkHeader(in, lim); err != nil {
		return info, err
	}
	size, err := src.Seek(0, io.SeekEnd)
	if err != nil {
		return info, err
	}
	if info.format == "tiff" {
		info.cost, err = tiffCost(src, size, lim.pixels)
	} else if in, err = decoderInput(src); err == nil {
		info.cost, err = imageCost(in.Reader, info.format, info.Config, size)
	}
	if err != nil {
		return info, err
	}
	return info, checkCost(info.cost, info.Width, info.Height, lim)
}

// checkCost refuses an image whose decoding would take more than
// lim.bytes.
func checkCost(c decodeCost, w, h int, lim imageLimits) error {
	if c.bytes <= lim.bytes {
		return nil
	}
	return &tooLargeError{fmt.Sprintf("decoding it (%s of %dx%d, %.1f Mpx) would take about %s of memory, more than the %s one image may take",
		c.kind, w, h, float64(w)*float64(h)/1e6, bytesWords(c.bytes), bytesWords(lim.bytes)), c.fix}
}

// imageSource is an image file, or its bytes.
type imageSource interface {
	io.ReadSeeker
	io.ReaderAt
}

// peekReaderAt is how the decoders get a file: Peek to sniff the format,
// and ReadAt so that TIFF reads at the offsets the file names. Without
// ReadAt, x/image/tiff buffers everything up to an offset, and a 16-byte
// file naming offset 2³² costs 4 GiB.
type peekReaderAt struct {
	*bufio.Reader
	io.ReaderAt
}

// decoderInput rewinds src and wraps it for image.Decode/DecodeConfig.
func decoderInput(src imageSource) (peekReaderAt, error) {
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return peekReaderAt{}, err
	}
	return peekReaderAt{bufio.NewReader(src), src}, nil
}

// decodeChecked decodes an image after checking its header against lim
// (inspectImage), and hands it to use while it holds its share of the
// decoding budget: src is read from its start more than once (header,
// cost, image).
func decodeChecked(src imageSource, lim imageLimits, budget *decodeBudget, use func(image.Image)) (imageInfo, error) {
	info, err := inspectImage(src, lim)
	if err != nil {
		return info, err
	}
	in, err := decoderInput(src)
	if err != nil {
		return info, err
	}
	budget.acquire(info.cost.bytes)
	defer budget.release(info.cost.bytes)
	return info, decodeAndUse(in, info.Config, use)
}

func decodeAndUse(in io.Reader, c image.Config, use func(image.Image)) error {
	img, _, err := image.Decode(in)
	if err != nil {
		return err
	}
	if b := img.Bounds(); b.Dx() > c.Width || b.Dy() > c.Height || b.Empty() {
		return fmt.Errorf("the image is %dx%d but its header says %dx%d", b.Dx(), b.Dy(), c.Width, c.Height)
	}
	use(img)
	return nil
}

// DecodeImageFile decodes one image file for prediction: a regular file of
// at most MaxImageFile bytes whose header declares at most MaxImagePixels.
// Errors name the file and say why.
func DecodeImageFile(path string) (image.Image, error) {
	f, st, err := safefile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	defer f.Close()
	if st.Size() > MaxImageFile {
		return nil, fmt.Errorf("%w: %s is %s, more than the %s an image file may have", ErrData, path, safefile.Size(st.Size()), safefile.Size(MaxImageFile))
	}
	var img image.Image
	_, err = decodeChecked(f, defaultImageLimits(), nil, func(i image.Image) { img = i })
	if errors.Is(err, ErrImageTooLarge) {
		return nil, fmt.Errorf("%w: %s: %w: %s", ErrData, path, err, tooLargeFix(err))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: not an image gpuwizard can read (jpg, png, bmp, gif, webp, tiff): %w", ErrData, path, err)
	}
	return img, nil
}

// gcEvery is how much decoding (by the estimates) the loaders let become
// garbage before they collect it: the Go runtime would wait until the
// garbage matches the live heap, which holds the whole dataset.
const gcEvery = 64 << 20

// decodeBudget lets decoders take turns so that at most total bytes (by
// the estimates of imageCost) are being decoded at once, and collects the
// garbage every gcEvery bytes. A nil budget does neither.
type decodeBudget struct {
	mu      sync.Mutex
	cond    *sync.Cond
	total   int64
	used    int64
	sinceGC int64
}

func newDecodeBudget(total int64) *decodeBudget {
	b := &decodeBudget{total: total}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *decodeBudget) acquire(n int64) {
	if b == nil {
		return
	}
	n = min(n, b.total) // one image alone always fits
	b.mu.Lock()
	for b.used+n > b.total {
		b.cond.Wait()
	}
	b.used += n
	b.mu.Unlock()
}

func (b *decodeBudget) release(n int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.sinceGC += n
	collect := b.sinceGC >= gcEvery
	if collect {
		b.sinceGC = 0
	}
	b.mu.Unlock()
	if collect {
		runtime.GC() // the decoded images are garbage now: free them before the next ones take their room
	}
	b.mu.Lock()
	b.used -= min(n, b.total)
	b.mu.Unlock()
	b.cond.Broadcast()
}

// confine refuses a dataset whose files (empty names are skipped) lead,
// through links, out of its folder dir, or are not regular files: the one
// rule of safefile.Root, checked before anything is read.
func confine(dir string, files ...string) error {
	root, err := safefile.NewRoot(dir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrData, err)
	}
	for _, f := range files {
		if f == "" {
			continue
		}
		if err := root.Check(f); err != nil {
			return fmt.Errorf("%w: %w", ErrData, err)
		}
	}
	return nil
}

// openImage opens an image file of a dataset: a regular file of at most
// MaxImageFile bytes.
func openImage(path string) (*os.File, error) {
	return openImageIn(nil, path)
}

// openImageIn opens an image file of the dataset in root (nil: anywhere):
// a regular file inside it of at most MaxImageFile bytes.
func openImageIn(root *safefile.Root, path string) (*os.File, error) {
	open := safefile.Open
	if root != nil {
		open = root.Open
	}
	f, st, err := open(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > MaxImageFile {
		f.Close()
		return nil, fmt.Errorf("%s is %s, more than the %s an image file may have", path, safefile.Size(st.Size()), safefile.Size(MaxImageFile))
	}
	return f, nil
}
