package data

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"runtime"
	"sync"

	"gpuwizard/internal/safefile"
)

// Limits on what a dataset may make gpuwizard read and hold. Every reader
// checks them before it allocates: image headers before decoding, IDX
// headers before inflating, file sizes before reading.
const (
	// MaxImagePixels is the most pixels (width×height, from the header) one
	// image may have; a bigger one is skipped with a warning, never
	// decoded. 50 Mpx is a 8660×5773 photo, more than a 45 Mpx camera.
	MaxImagePixels = 50_000_000
	// MaxDecodingPixels is the most pixels all workers decode at the same
	// time: an image waits until the budget has room (one image of up to
	// MaxImagePixels always fits). It bounds decoding memory whatever the
	// number of cores: about 256 MiB for 8-bit RGBA.
	MaxDecodingPixels = 64_000_000
	// MaxImageFile is the largest image file read (bytes).
	MaxImageFile = 512 << 20
	// MaxDatasetBytes is the most memory a loaded dataset's 8-bit pixels
	// may take (images × channels × height × width), checked before loading.
	MaxDatasetBytes = 2 << 30
	// MaxYAMLFile caps data.yaml.
	MaxYAMLFile = 1 << 20
	// MaxCOCOFile caps a COCO JSON file (COCO 2017's instances_train2017.json
	// is 448 MiB).
	MaxCOCOFile = 512 << 20
	// MaxLabelFile caps one YOLO label file.
	MaxLabelFile = 16 << 20
	// MaxListFile caps a YOLO list file (one image path a line).
	MaxListFile = 64 << 20
	// MaxCIFARBatch caps a CIFAR-10 batch file (one holds 30,730,000 bytes).
	MaxCIFARBatch = 64 << 20
)

// ErrImageTooLarge is returned (wrapped) for an image whose header declares
// more than MaxImagePixels.
var ErrImageTooLarge = errors.New("image too large")

// checkImageHeader reads an image's header and refuses sizes that are
// empty or above maxPixels (MaxImagePixels but in fuzzing), before
// anything is decoded.
func checkImageHeader(r io.Reader, maxPixels int64) (image.Config, string, error) {
	c, format, err := image.DecodeConfig(r)
	if err != nil {
		return c, format, err
	}
	if c.Width <= 0 || c.Height <= 0 {
		return c, format, fmt.Errorf("the %s header declares %dx%d pixels", format, c.Width, c.Height)
	}
	if int64(c.Width)*int64(c.Height) > maxPixels {
		return c, format, fmt.Errorf("%w: the %s header declares %dx%d (%.0f Mpx), more than the %.0f Mpx an image may have",
			ErrImageTooLarge, format, c.Width, c.Height, float64(c.Width)*float64(c.Height)/1e6, float64(maxPixels)/1e6)
	}
	return c, format, nil
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

// largeImage is the size above which the loaders collect the decoded
// image's memory before the next image may use the budget: without it, the
// garbage of one large image and the next one are resident together.
const largeImage = 8_000_000

// decodeChecked decodes an image after checking its header against
// maxPixels, and hands it to use while it holds its share of the budget:
// src is read from its start twice (header, then image).
func decodeChecked(src imageSource, maxPixels int64, budget *pixelBudget, use func(image.Image)) (image.Config, error) {
	in, err := decoderInput(src)
	if err != nil {
		return image.Config{}, err
	}
	c, _, err := checkImageHeader(in, maxPixels)
	if err != nil {
		return c, err
	}
	if in, err = decoderInput(src); err != nil {
		return c, err
	}
	px := int64(c.Width) * int64(c.Height)
	budget.acquire(px)
	defer budget.release(px)
	if err := decodeAndUse(in, c, use); err != nil {
		return c, err
	}
	if budget != nil && px > largeImage {
		runtime.GC() // the image is garbage now: free it before the next one
	}
	return c, nil
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
	_, err = decodeChecked(f, MaxImagePixels, nil, func(i image.Image) { img = i })
	if errors.Is(err, ErrImageTooLarge) {
		return nil, fmt.Errorf("%w: %s: %w: shrink it below %d megapixels", ErrData, path, err, MaxImagePixels/1_000_000)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: not an image gpuwizard can read (jpg, png, bmp, gif, webp, tiff): %w", ErrData, path, err)
	}
	return img, nil
}

// pixelBudget lets decoders take turns so that at most total pixels are
// being decoded at once. A nil budget does not limit.
type pixelBudget struct {
	mu    sync.Mutex
	cond  *sync.Cond
	total int64
	used  int64
}

func newPixelBudget(total int64) *pixelBudget {
	b := &pixelBudget{total: total}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *pixelBudget) acquire(n int64) {
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

func (b *pixelBudget) release(n int64) {
	if b == nil {
		return
	}
	n = min(n, b.total)
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
	b.cond.Broadcast()
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
