package detect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io/fs"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"gpuwizard/trainer/data"
)

// Load loads a detection dataset letterboxed to size×size: a YOLO
// data.yaml (or the folder holding one), or Builtin for the built-in set.
// size 0 is DefaultSize (BuiltinSize for the built-in set). seed draws the
// built-in set's training images. See LoadContext.
func Load(path string, size int, seed int64) (*Dataset, error) {
	return LoadContext(context.Background(), path, size, seed)
}

// LoadContext is Load, stopped by ctx. A YOLO set is linted first
// (data.LintYOLO: Ultralytics layouts, list files, names as a list or a
// map): a lint with errors stops loading with data.Load's words for it
// (Lint.TrainingError), and the dataset returned beside the error holds
// the lint, with empty splits, for the report. Then each split's images
// are decoded (in parallel, within the decoding budget) and letterboxed,
// colour; their label files' boxes (and polygons, as the box around
// them) move onto the canvas. An image that cannot be decoded is skipped
// with a lint warning. The whole set must fit in data.MaxDatasetBytes.
func LoadContext(ctx context.Context, path string, size int, seed int64) (*Dataset, error) {
	if path == Builtin {
		if size == 0 {
			size = BuiltinSize
		}
		return GenerateBuiltin(ctx, size, BuiltinTrain, BuiltinVal, seed)
	}
	if size == 0 {
		size = DefaultSize
	}
	if err := CheckSize(size); err != nil {
		return nil, fmt.Errorf("%w: %w", data.ErrData, err)
	}
	cfg, lint, err := data.LintYOLO(path)
	if err != nil {
		if lint == nil {
			return nil, err
		}
		return &Dataset{Name: filepath.Base(filepath.Dir(path)), Root: path, Format: "yolo", Size: size, Channels: 3, Train: &Split{}, Val: &Split{}, Lint: lint}, err
	}
	d := &Dataset{Name: filepath.Base(cfg.Root), Root: cfg.Root, Format: "yolo", Classes: cfg.Names, Size: size, Channels: 3, Train: &Split{}, Val: &Split{}, Lint: lint}
	if err := lint.TrainingError(cfg.File); err != nil {
		return d, err
	}
	dec, err := data.NewImageDecoder(cfg.Root)
	if err != nil {
		return nil, err
	}
	recs := map[string][]pending{}
	var n labelCount
	for _, split := range []string{"train", "val"} {
		if recs[split], err = readLabels(ctx, dec, cfg.Images[split], len(cfg.Names), &n, lint); err != nil {
			return nil, err
		}
	}
	if err := checkMemory(cfg.File, n, d.Channels, size); err != nil {
		return nil, err
	}
	for _, split := range []string{"train", "val"} {
		s, err := decodeSplit(ctx, dec, recs[split], size, d.Channels, lint)
		if err != nil {
			return nil, err
		}
		if split == "train" {
			d.Train = s
		} else {
			d.Val = s
		}
	}
	for split, s := range map[string]*Split{"train": d.Train, "val": d.Val} {
		if s.Len() == 0 {
			return d, fmt.Errorf("%w: %s: no image of the %s split could be decoded (each is listed in the report): replace them with images gpuwizard can read",
				data.ErrData, cfg.File, split)
		}
	}
	return d, nil
}

// pending is an image to load: its path and its label file's boxes,
// normalised to the image's size (centre x, centre y, width, height).
type pending struct {
	path  string
	boxes []normBox
}

type normBox struct {
	class          int
	cx, cy, bw, bh float64
}

// MaxObjectsPerImage is the most boxes an image may have; more are
// ignored with a warning (crowded sets have hundreds: SKU-110K's shelves
// up to about 700).
const MaxObjectsPerImage = 1000

// labelCount counts what the label files hold, for the memory check.
type labelCount struct{ images, boxes int }

// readLabels reads the label file of each image (none: a background
// image), at most MaxObjectsPerImage boxes an image; it stops when the
// boxes alone would not fit in data.MaxDatasetBytes.
func readLabels(ctx context.Context, dec *data.ImageDecoder, images []string, nc int, n *labelCount, lint *data.Lint) ([]pending, error) {
	out := make([]pending, len(images))
	for i, img := range images {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out[i].path = img
		n.images++
		file := data.YOLOLabelPath(img)
		raw, err := dec.ReadFile(file, data.MaxLabelFile, "a YOLO label file")
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", data.ErrData, err) // the lint read it a moment ago
		}
		boxes, more := parseLabels(raw, nc)
		if more > 0 {
			lint.Add(data.Problem{Severity: data.LintWarning, File: file, Message: fmt.Sprintf("%d boxes beyond the first %d are ignored", more, MaxObjectsPerImage),
				Fix: fmt.Sprintf("keep at most %d boxes an image (split the image into tiles)", MaxObjectsPerImage)})
		}
		out[i].boxes = boxes
		if n.boxes += len(boxes); int64(n.boxes)*boxBytes > data.MaxDatasetBytes {
			return nil, fmt.Errorf("%w: %s: the label files hold more than %d boxes, more than the %s a dataset may take can keep: train on fewer images",
				data.ErrData, file, n.boxes, mib(data.MaxDatasetBytes))
		}
	}
	return out, nil
}

// parseLabels reads a YOLO label file: one object a line, "class cx cy w
// h" normalised to 0..1, or a polygon "class x1 y1 x2 y2 ..." (its box is
// the one around it). Lines the lint refuses are skipped; boxes beyond
// MaxObjectsPerImage are counted (more), not kept.
func parseLabels(raw []byte, nc int) (out []normBox, more int) {
	for len(raw) > 0 {
		var line []byte
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			line, raw = raw, nil
		}
		if len(out) == MaxObjectsPerImage {
			if len(bytes.TrimSpace(line)) > 0 {
				more++
			}
			continue
		}
		f := strings.Fields(string(line))
		if len(f) != 5 && (len(f) < 7 || len(f)%2 == 0) {
			continue
		}
		cls, err := strconv.Atoi(f[0])
		if err != nil || cls < 0 || cls >= nc {
			continue
		}
		v := make([]float64, len(f)-1)
		ok := true
		for i, s := range f[1:] {
			x, err := strconv.ParseFloat(s, 64)
			ok = ok && err == nil && x >= 0 && x <= 1
			v[i] = x
		}
		if !ok {
			continue
		}
		if len(f) == 5 {
			if v[2] > 0 && v[3] > 0 {
				out = append(out, normBox{cls, v[0], v[1], v[2], v[3]})
			}
			continue
		}
		x0, y0, x1, y1 := v[0], v[1], v[0], v[1]
		for i := 0; i+1 < len(v); i += 2 {
			x0, x1 = min(x0, v[i]), max(x1, v[i])
			y0, y1 = min(y0, v[i+1]), max(y1, v[i+1])
		}
		if x1 > x0 && y1 > y0 {
			out = append(out, normBox{cls, (x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0})
		}
	}
	return out, more
}

// objects places normalised boxes on the canvas of an image of letterbox
// l, clipped to the image.
func objects(boxes []normBox, l Letterbox) []Object {
	out := make([]Object, 0, len(boxes))
	w, h := float64(l.OrigW), float64(l.OrigH)
	for _, b := range boxes {
		px := Box{
			X1: float32(max(b.cx-b.bw/2, 0) * w), Y1: float32(max(b.cy-b.bh/2, 0) * h),
			X2: float32(min(b.cx+b.bw/2, 1) * w), Y2: float32(min(b.cy+b.bh/2, 1) * h),
		}
		if px.X2 > px.X1 && px.Y2 > px.Y1 {
			out = append(out, Object{Class: b.class, Box: l.ToCanvas(px)})
		}
	}
	return out
}

// What a set takes besides its pixels, for the memory check: an image's
// record (its Image and path), and a box (its Object, and its line's
// numbers while the set loads).
const (
	recordBytes = 256
	boxBytes    = 64
)

// checkMemory refuses a set whose images at size×size, with their
// records and boxes, would not fit in data.MaxDatasetBytes, saying which
// size (or how many images) would.
func checkMemory(file string, n labelCount, channels, size int) error {
	extra := int64(n.images)*recordBytes + int64(n.boxes)*boxBytes
	need := func(s int) int64 { return int64(n.images)*int64(channels)*int64(s)*int64(s) + extra }
	if need(size) <= data.MaxDatasetBytes {
		return nil
	}
	per := int64(channels)*int64(size)*int64(size) + extra/int64(max(n.images, 1))
	fix := fmt.Sprintf("train on at most %d of these images at %d×%d", data.MaxDatasetBytes/per, size, size)
	for s := size - SizeStep; s >= MinOfferedSize; s -= SizeStep {
		if need(s) <= data.MaxDatasetBytes {
			fix = fmt.Sprintf("use a smaller image size (%d fits), or %s", s, fix)
			break
		}
	}
	return fmt.Errorf("%w: %s: %d images at %d×%d take %s, more than the %s a dataset may take: %s",
		data.ErrData, file, n.images, size, size, mib(need(size)), mib(data.MaxDatasetBytes), fix)
}

// mib writes a byte count in MiB or GiB.
func mib(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}

// decoded is what decoding one image gave.
type decoded struct {
	lb  Letterbox
	err error
}

// decodeSplit decodes and letterboxes the images of a split in parallel
// into one pixel array, image i at i×channels×size², then closes the
// gaps that images which failed to decode left (each with a lint
// warning).
func decodeSplit(ctx context.Context, dec *data.ImageDecoder, recs []pending, size, channels int, lint *data.Lint) (*Split, error) {
	per := channels * size * size
	px := make([]uint8, len(recs)*per)
	out := make([]decoded, len(recs))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lb := NewLetterboxer(size, channels)
			for i := range next {
				out[i].err = dec.Decode(recs[i].path, func(img image.Image) { out[i].lb = lb.Draw(px[i*per:(i+1)*per], img) })
			}
		}()
	}
	for i := range recs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Split{Images: make([]Image, 0, len(recs))}
	for i, r := range recs {
		if out[i].err != nil {
			lint.Add(data.ImageProblem(r.path, out[i].err))
			continue
		}
		k := len(s.Images)
		copy(px[k*per:(k+1)*per], px[i*per:(i+1)*per])
		s.Images = append(s.Images, Image{Path: r.path, Index: k, Objects: objects(r.boxes, out[i].lb), Letterbox: out[i].lb})
	}
	s.Pixels = px[: len(s.Images)*per : len(s.Images)*per]
	return s, nil
}
