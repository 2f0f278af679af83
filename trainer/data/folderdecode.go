package data

import (
	"fmt"
	"hash/fnv"
	"image"
	"io"
	"math"
	"runtime"
	"sync"

	"golang.org/x/image/draw"
)

// folderNeed is what loading files at size×size with channels takes: the
// pixels, each image's records and path, and the decoding budget, the
// garbage let through between collections and each worker's resize
// buffers (an RGBA image and three planes).
func folderNeed(files []folderImage, channels, size int, limit int64) memoryNeed {
	var paths int64
	for _, f := range files {
		paths += int64(len(f.path))
	}
	n, plane := int64(len(files)), int64(size)*int64(size)
	return memoryNeed{
		pixels:  n * int64(channels) * plane,
		records: n*folderImageBytes + paths,
		working: folderWorking(plane),
		limit:   limit,
	}
}

func folderWorking(plane int64) int64 {
	return MaxDecodingBytes + gcEvery + int64(runtime.GOMAXPROCS(0))*7*plane
}

// folderTooBig is the error for a folder whose dataset would not fit: how
// big it would be, and the image size and the number of images that fit.
func folderTooBig(root string, files []folderImage, channels, size int, need memoryNeed) error {
	n, plane := int64(len(files)), int64(size)*int64(size)
	workers := int64(runtime.GOMAXPROCS(0))
	fix := "train on a subset"
	// The largest side s with n images of channels×s² (and the workers'
	// buffers) within the limit.
	room := float64(need.limit - need.records - MaxDecodingBytes - gcEvery)
	if s := int(math.Sqrt(room / float64(n*int64(channels)+workers*7))); room > 0 && s >= 8 && s < size {
		fix = fmt.Sprintf("use a smaller image size (image_size, --image-size: %d or less fits)", s)
	}
	// The most images of this size that fit.
	if fitN := (need.limit - folderWorking(plane)) / (int64(channels)*plane + need.records/max(n, 1)); fitN > 0 {
		fix += fmt.Sprintf(", or train on at most %d of these images at %dx%d", fitN, size, size)
	}
	return fmt.Errorf("%w: %s: %d images at %dx%d would take %s, more than the %s a dataset may take: %s",
		ErrData, root, n, size, size, need, bytesWords(need.limit), fix)
}

// decoded is one image of a folder dataset, resized into its place.
type decoded struct {
	grey bool
	w, h int
	hash uint64 // of the file's bytes
	err  error
}

// decodeFolder decodes files in parallel into px, image i at
// i×channels×size², keeping file order; the decoding budget bounds how
// much memory the decoders take at once.
func decodeFolder(files []folderImage, size, channels int, px []uint8) []decoded {
	out := make([]decoded, len(files))
	budget := newDecodeBudget(MaxDecodingBytes)
	per := channels * size * size
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs := newResizer(size)
			for i := range next {
				out[i] = decodeFile(files[i].path, rs, px[i*per:(i+1)*per], budget)
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// allGrey says whether every image that was read is grey (and one was).
func allGrey(out []decoded) bool {
	some := false
	for _, o := range out {
		if o.err == nil {
			if !o.grey {
				return false
			}
			some = true
		}
	}
	return some
}

// folderLayout is how a folder's images lie in its pixel buffer.
type folderLayout struct {
	size, channels int // channels kept: 1 when the images, decoded in 3, are all grey
	need           memoryNeed
}

// assembleFolder lints the decoded images in file order and moves the
// good ones together in px (in place: each moves towards the start, and
// grey ones keep one plane), so that the splits share px. files are
// grouped by split.
func assembleFolder(files []folderImage, out []decoded, px []uint8, l folderLayout, classIdx map[string]int32, lint *Lint) (map[string]*Split, map[string]map[string]int) {
	plane := l.size * l.size
	src, dst := len(px)/max(len(files), 1), l.channels*plane
	labels := make([]int32, 0, len(files))
	paths := make([]string, 0, len(files))
	splitOf := make([]string, 0, len(files))
	seenHash := map[uint64]folderImage{}
	perClass := map[string]map[string]int{}
	for i, f := range files {
		o := out[i]
		if o.err != nil {
			lint.add(imageProblem(f.path, o.err))
			continue
		}
		lint.size(o.w, o.h)
		lintSameFile(seenHash, f, o.hash, lint)
		k := len(labels)
		copy(px[k*dst:(k+1)*dst], px[i*src:i*src+dst]) // grey: the R plane, which is the grey one
		labels = append(labels, classIdx[f.class])
		paths = append(paths, f.path)
		splitOf = append(splitOf, f.split)
		if perClass[f.split] == nil {
			perClass[f.split] = map[string]int{}
		}
		perClass[f.split][f.class]++
	}
	kept := px[:len(labels)*dst]
	if dst < src && l.need.total()+int64(len(kept)) <= l.need.limit {
		kept = append([]uint8(nil), kept...) // give back the unused planes
	}
	splits := map[string]*Split{}
	for a := 0; a < len(labels); {
		b := a
		for b < len(labels) && splitOf[b] == splitOf[a] {
			b++
		}
		splits[splitOf[a]] = &Split{Pixels: kept[a*dst : b*dst : b*dst], Labels: labels[a:b:b], Files: paths[a:b:b]}
		a = b
	}
	return splits, perClass
}

// lintSameFile warns about an image whose bytes were seen before, in
// another class or split.
func lintSameFile(seen map[uint64]folderImage, f folderImage, hash uint64, lint *Lint) {
	prev, ok := seen[hash]
	if !ok {
		seen[hash] = f
		return
	}
	if prev.class != f.class {
		lint.add(Problem{Severity: LintWarning, File: f.path, Message: fmt.Sprintf("the same image (same content) is in class %q as %s: one of the two labels is wrong", prev.class, prev.path),
			Fix: "keep the image in the class it belongs to and delete the other copy"})
	} else if prev.split != f.split {
		lint.add(Problem{Severity: LintWarning, File: f.path, Message: fmt.Sprintf("the same image is in %s as %s: validation scores will be too optimistic", prev.split, prev.path),
			Fix: "keep each image in one split only"})
	}
}

// decodeFile reads one image into dst (3 planes, or 1 grey plane): a
// regular file, hashed as it is read, whose header is checked against the
// limits before it is decoded within the budget, then resized.
func decodeFile(path string, rs *resizer, dst []uint8, budget *decodeBudget) decoded {
	var o decoded
	f, err := openImage(path)
	if err != nil {
		o.err = err
		return o
	}
	defer f.Close()
	h := fnv.New64a()
	if _, err := io.Copy(h, f); err != nil {
		o.err = err
		return o
	}
	o.hash = h.Sum64()
	info, err := decodeChecked(f, defaultImageLimits(), budget, func(img image.Image) { o.grey = rs.resize(img, dst) })
	o.w, o.h = info.Width, info.Height
	o.err = err
	return o
}

// resizer scales images to size×size, reusing its RGBA buffer; one per
// worker.
type resizer struct {
	size int
	rgba *image.RGBA
	rgb  []uint8 // three planes, when the destination is grey
}

func newResizer(size int) *resizer {
	return &resizer{size: size, rgba: image.NewRGBA(image.Rect(0, 0, size, size))}
}

// resize scales img into dst: RGB planar (R plane, G, B) when dst holds 3
// planes, grey when it holds one; it says whether the image is grey.
func (r *resizer) resize(img image.Image, dst []uint8) bool {
	draw.ApproxBiLinear.Scale(r.rgba, r.rgba.Bounds(), img, img.Bounds(), draw.Src, nil)
	plane := r.size * r.size
	rgb := dst
	if len(dst) < 3*plane {
		if r.rgb == nil {
			r.rgb = make([]uint8, 3*plane)
		}
		rgb = r.rgb
	}
	grey := true
	pix := r.rgba.Pix
	for k := 0; k < plane; k++ {
		red, g, b := pix[4*k], pix[4*k+1], pix[4*k+2]
		rgb[k], rgb[plane+k], rgb[2*plane+k] = red, g, b
		if red != g || g != b {
			grey = false
		}
	}
	if len(dst) < 3*plane {
		for k := 0; k < plane; k++ {
			r, g, b := int(rgb[k]), int(rgb[plane+k]), int(rgb[2*plane+k])
			dst[k] = uint8((299*r + 587*g + 114*b + 500) / 1000)
		}
	}
	return grey
}
