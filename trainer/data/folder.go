package data

import (
	"errors"
	"fmt"
	"hash/fnv"
	"image"
	_ "image/gif"  // register GIF
	_ "image/jpeg" // register JPEG
	_ "image/png"  // register PNG
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"gpuwizard/internal/safefile"

	_ "golang.org/x/image/bmp" // register BMP
	"golang.org/x/image/draw"
	_ "golang.org/x/image/tiff" // register TIFF
	_ "golang.org/x/image/webp" // register WebP
)

// ImageExts are the image files a folder dataset may hold.
var ImageExts = map[string]bool{".jpg": true, ".jpeg": true, ".png": true, ".bmp": true, ".gif": true, ".webp": true, ".tif": true, ".tiff": true}

// splitNames maps folder names to splits.
var splitNames = map[string]string{"train": "train", "training": "train", "val": "val", "valid": "val", "validation": "val", "test": "test", "testing": "test"}

type folderImage struct {
	split, class, path string
}

// loadImageFolder loads one folder per class, either directly under root
// or under train/val[/test].
func loadImageFolder(root string, opt Options) (*Dataset, error) {
	lint := newLint("imagefolder")
	ls, err := listFolder(root, lint)
	if err != nil {
		return nil, err
	}
	files, classSet, splitDirs := ls.files, ls.classes, ls.splitDirs
	if len(classSet) == 0 {
		return nil, fmt.Errorf("%w: %s has no class folders: put each class's images in a folder named after the class (ROOT/cat/1.jpg, ROOT/dog/2.jpg)", ErrData, root)
	}
	if len(classSet) < 2 {
		return nil, fmt.Errorf("%w: %s has one class folder: a classifier needs at least two classes", ErrData, root)
	}
	classes := sortedKeys(classSet)
	classIdx := map[string]int32{}
	for i, c := range classes {
		classIdx[c] = int32(i)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: %s: no images (%s) in the class folders", ErrData, root, strings.Join(sortedKeys(ImageExts), " "))
	}
	limit := opt.MaxImages
	if limit <= 0 {
		limit = 200_000
	}
	if len(files) > limit {
		return nil, fmt.Errorf("%w: %s holds %d images, more than %d: train on a subset", ErrData, root, len(files), limit)
	}
	size, sizeNote := opt.ImageSize, fmt.Sprintf("image_size %d: images resized to %dx%d", opt.ImageSize, opt.ImageSize, opt.ImageSize)
	if size == 0 {
		size, sizeNote = autoFolderSize(files)
	}
	if need := int64(len(files)) * 3 * int64(size) * int64(size); need > MaxDatasetBytes {
		return nil, fmt.Errorf("%w: %s: %d images at %dx%d take %s as 8-bit pixels, more than the %s a dataset may take in memory: lower image_size or train on a subset",
			ErrData, root, len(files), size, size, safefile.Size(need), safefile.Size(MaxDatasetBytes))
	}
	// Decode in parallel, keeping file order; the pixel budget bounds how
	// much is being decoded at once.
	out := make([]decoded, len(files))
	budget := newPixelBudget(MaxDecodingPixels)
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = decodeFile(files[i].path, size, budget)
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()

	allGrey := !opt.Grey
	for _, o := range out {
		if o.err == nil && !o.grey {
			allGrey = false
		}
	}
	channels := 3
	if opt.Grey || allGrey {
		channels = 1
	}
	plane := size * size
	splits := map[string]*Split{}
	seenHash := map[uint64]folderImage{}
	perClass := map[string]map[string]int{}
	for i, f := range files {
		o := out[i]
		out[i].px = nil // the split keeps its own copy
		if o.err != nil {
			lint.add(imageProblem(f.path, o.err))
			continue
		}
		lint.size(o.w, o.h)
		if prev, ok := seenHash[o.hash]; ok {
			if prev.class != f.class {
				lint.add(Problem{Severity: LintWarning, File: f.path, Message: fmt.Sprintf("the same image (same content) is in class %q as %s: one of the two labels is wrong", prev.class, prev.path),
					Fix: "keep the image in the class it belongs to and delete the other copy"})
			} else if prev.split != f.split {
				lint.add(Problem{Severity: LintWarning, File: f.path, Message: fmt.Sprintf("the same image is in %s as %s: validation scores will be too optimistic", prev.split, prev.path),
					Fix: "keep each image in one split only"})
			}
		} else {
			seenHash[o.hash] = f
		}
		s := splits[f.split]
		if s == nil {
			s = &Split{}
			splits[f.split] = s
		}
		if channels == 1 {
			for k := 0; k < plane; k++ {
				r, g, b := int(o.px[k]), int(o.px[plane+k]), int(o.px[2*plane+k])
				s.Pixels = append(s.Pixels, uint8((299*r+587*g+114*b+500)/1000))
			}
		} else {
			s.Pixels = append(s.Pixels, o.px...)
		}
		s.Labels = append(s.Labels, classIdx[f.class])
		s.Files = append(s.Files, f.path)
		if perClass[f.split] == nil {
			perClass[f.split] = map[string]int{}
		}
		perClass[f.split][f.class]++
	}
	for _, c := range classes {
		if n := perClass["train"][c]; n == 1 {
			lint.add(Problem{Severity: LintWarning, File: filepath.Join(root, c), Message: fmt.Sprintf("class %q has only one training image", c),
				Fix: "add more images: a class needs dozens to be learned"})
		}
	}
	if splits["train"] == nil {
		why := "the train split has no images: add images in CLASS/ folders under " + nonEmpty(splitDirs["train"], root)
		if len(lint.Problems) > 0 {
			why = "none of the training images could be read; first: " + lint.Problems[0].String()
		}
		return &Dataset{Root: root, Lint: lint}, fmt.Errorf("%w: %s: %s", ErrData, root, why)
	}
	for _, s := range sortedKeys(splitDirs) {
		if splits[s] == nil {
			lint.add(Problem{Severity: LintError, File: splitDirs[s], Message: fmt.Sprintf("the %s split has no usable images", s),
				Fix: fmt.Sprintf("add images in %s/CLASS/ folders, or remove the empty %s folder", splitDirs[s], filepath.Base(splitDirs[s]))})
		}
	}
	d := &Dataset{Name: filepath.Base(root), Format: "imagefolder", Root: root, Classes: classes, Channels: channels,
		Height: size, Width: size, Train: splits["train"], Val: splits["val"], Test: splits["test"], Lint: lint, SizeNote: sizeNote}
	return d, nil
}

// folderListing is what a folder dataset holds, before decoding.
type folderListing struct {
	files     []folderImage
	classes   map[string]bool
	splitDirs map[string]string // split → its folder, when the dataset has split folders
	root      *safefile.Root
}

// listFolder finds the class folders (under root, or under its train/val/
// test folders) and their images. Folders whose names start with "." are
// skipped with a warning (they are hidden: .ipynb_checkpoints is not a
// class); links to folders are class folders when they stay inside root,
// and skipped with a warning when they lead out of it; so are links to
// images that lead out of it, and dangling links.
func listFolder(root string, lint *Lint) (*folderListing, error) {
	r, err := safefile.NewRoot(root)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	ls := &folderListing{classes: map[string]bool{}, splitDirs: map[string]string{}, root: r}
	top, err := ls.subfolders(root, lint)
	if err != nil {
		return nil, err
	}
	var classDirs []string
	for _, name := range top {
		if s, ok := splitNames[strings.ToLower(name)]; ok {
			ls.splitDirs[s] = filepath.Join(root, name)
		} else {
			classDirs = append(classDirs, name)
		}
	}
	if len(ls.splitDirs) == 0 {
		return ls, ls.scan("train", root, classDirs, lint)
	}
	if ls.splitDirs["train"] == "" {
		return nil, fmt.Errorf("%w: %s has %s folders but no train folder: add train/CLASS/... images", ErrData, root, strings.Join(sortedKeys(ls.splitDirs), "/"))
	}
	for _, s := range []string{"train", "val", "test"} {
		if d := ls.splitDirs[s]; d != "" {
			classes, err := ls.subfolders(d, lint)
			if err != nil {
				return nil, err
			}
			if err := ls.scan(s, d, classes, lint); err != nil {
				return nil, err
			}
		}
	}
	return ls, nil
}

// subfolders lists the folders in dir a dataset may use, saying why each
// other folder is skipped.
func (ls *folderListing) subfolders(dir string, lint *Lint) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	var out []string
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			st, err := os.Stat(p)
			if err != nil || !st.IsDir() {
				continue // a link to a file (or nothing) where class folders are
			}
			if _, err := ls.root.Resolve(p); err != nil {
				lint.add(Problem{Severity: LintWarning, File: p, Message: "folder skipped: " + err.Error(),
					Fix: "move or copy the folder into the dataset (a link that stays inside the dataset is followed)"})
				continue
			}
			isDir = true
		}
		if !isDir {
			continue
		}
		if strings.HasPrefix(e.Name(), ".") {
			lint.add(Problem{Severity: LintWarning, File: p, Message: "hidden folder skipped: a name starting with \".\" is not a class",
				Fix: "rename it without the leading dot if it is a class, or leave it: it is not used"})
			continue
		}
		out = append(out, e.Name())
	}
	return out, nil
}

// scan adds the images of each class folder of dir to split.
func (ls *folderListing) scan(split, dir string, classes []string, lint *Lint) error {
	for _, c := range classes {
		ls.classes[c] = true
		imgs, err := os.ReadDir(filepath.Join(dir, c))
		if err != nil {
			return fmt.Errorf("%w: %w", ErrData, err)
		}
		for _, f := range imgs {
			if f.IsDir() || strings.HasPrefix(f.Name(), ".") || !ImageExts[strings.ToLower(filepath.Ext(f.Name()))] {
				continue
			}
			p := filepath.Join(dir, c, f.Name())
			if f.Type()&fs.ModeSymlink != 0 {
				if err := ls.root.Check(p); err != nil {
					lint.add(imageProblem(p, err))
					continue
				}
			}
			ls.files = append(ls.files, folderImage{split, c, p})
		}
	}
	return nil
}

// decoded is one image of a folder dataset, resized.
type decoded struct {
	px   []uint8 // size×size×3, planar
	grey bool
	w, h int
	hash uint64 // of the file's bytes
	err  error
}

// decodeFile reads one image: a regular file, hashed as it is read, whose
// header is checked against MaxImagePixels before it is decoded within the
// budget, then resized to size×size.
func decodeFile(path string, size int, budget *pixelBudget) decoded {
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
	c, err := decodeChecked(f, MaxImagePixels, budget, func(img image.Image) { o.px, o.grey = resizePlanar(img, size) })
	o.w, o.h = c.Width, c.Height
	o.err = err
	return o
}

// imageProblem is the lint warning for an image that was skipped.
func imageProblem(path string, err error) Problem {
	switch {
	case errors.Is(err, ErrImageTooLarge):
		return Problem{Severity: LintWarning, File: path, Message: "skipped without decoding: " + err.Error(),
			Fix: fmt.Sprintf("shrink it below %d megapixels, or delete it", MaxImagePixels/1_000_000)}
	case errors.Is(err, safefile.ErrNotRegular):
		return Problem{Severity: LintWarning, File: path, Message: "skipped: " + err.Error(),
			Fix: "put the image file itself there, or delete the entry"}
	case errors.Is(err, safefile.ErrOutside):
		return Problem{Severity: LintWarning, File: path, Message: "skipped: " + err.Error(),
			Fix: "copy the image into the dataset, or delete the link"}
	case errors.Is(err, fs.ErrNotExist):
		return Problem{Severity: LintWarning, File: path, Message: "skipped: " + err.Error(),
			Fix: "delete the dangling link, or put the image back where it points"}
	}
	return Problem{Severity: LintWarning, File: path, Message: "corrupt or unreadable image, skipped: " + err.Error(),
		Fix: "delete or replace the file"}
}

// resizePlanar scales an image to size×size RGB, planar (R plane, G, B),
// and says whether it is grey.
func resizePlanar(img image.Image, size int) ([]uint8, bool) {
	dst := image.NewRGBA(image.Rect(0, 0, size, size))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), img, img.Bounds(), draw.Src, nil)
	plane := size * size
	px := make([]uint8, 3*plane)
	grey := true
	for k := 0; k < plane; k++ {
		r, g, b := dst.Pix[4*k], dst.Pix[4*k+1], dst.Pix[4*k+2]
		px[k], px[plane+k], px[2*plane+k] = r, g, b
		if r != g || g != b {
			grey = false
		}
	}
	return px, grey
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// MaxAutoSize is the largest side that image_size 0 keeps as it is:
// folders of larger (or mixed) images are resized to DefaultFolderSize.
const (
	MaxAutoSize       = 64
	DefaultFolderSize = 32
)

// autoFolderSize is image_size 0 for a folder: the images' own size when
// they all share one square size of at most MaxAutoSize (so 28×28 folders
// stay 28×28), else DefaultFolderSize. It reads only the headers; images
// whose header cannot be read are left to the decoder to report.
func autoFolderSize(files []folderImage) (int, string) {
	side, mixed := 0, false
	for _, f := range files {
		c, ok := imageHeader(f.path)
		if !ok {
			continue
		}
		if c.Width != c.Height || (side != 0 && c.Width != side) {
			mixed = true
			break
		}
		side = c.Width
	}
	switch {
	case side == 0:
		return DefaultFolderSize, fmt.Sprintf("image_size auto: %dx%d (no image header could be read)", DefaultFolderSize, DefaultFolderSize)
	case mixed:
		return DefaultFolderSize, fmt.Sprintf("image_size auto: %dx%d, because the images differ in size or are not square", DefaultFolderSize, DefaultFolderSize)
	case side > MaxAutoSize:
		return DefaultFolderSize, fmt.Sprintf("image_size auto: %dx%d; the images are %dx%d, larger than the %d px kept as they are (set image_size to train larger)", DefaultFolderSize, DefaultFolderSize, side, side, MaxAutoSize)
	case side < 8:
		return 8, fmt.Sprintf("image_size auto: 8x8; the images are %dx%d, smaller than the models take", side, side)
	}
	return side, fmt.Sprintf("image_size auto: %dx%d, the size all the images share", side, side)
}

// imageHeader reads an image file's header (its size) without decoding
// it; an image the decoder would refuse (unreadable, empty, too large)
// does not count.
func imageHeader(path string) (image.Config, bool) {
	f, err := openImage(path)
	if err != nil {
		return image.Config{}, false
	}
	defer f.Close()
	c, _, err := checkImageHeader(io.LimitReader(f, 1<<20), MaxImagePixels)
	return c, err == nil
}
