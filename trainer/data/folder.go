package data

import (
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // register GIF
	_ "image/jpeg" // register JPEG
	_ "image/png"  // register PNG
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gpuwizard/internal/safefile"

	_ "golang.org/x/image/bmp"  // register BMP
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
	ls, err := listClassFolders(root, lint)
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
	channels := 3
	if opt.Grey {
		channels = 1
	}
	need := folderNeed(files, channels, size, opt.maxBytes())
	if !need.fits() {
		return nil, folderTooBig(root, files, channels, size, need)
	}
	px := make([]uint8, len(files)*channels*size*size)
	out := decodeFolder(files, size, channels, px)
	if channels == 3 && allGrey(out) {
		channels = 1
	}
	splits, perClass := assembleFolder(files, out, px, folderLayout{size, channels, need}, classIdx, lint)
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

// listClassFolders finds the class folders (under root, or under its train/val/
// test folders) and their images. Folders whose names start with "." are
// skipped with a warning (they are hidden: .ipynb_checkpoints is not a
// class); links to folders are class folders when they stay inside root,
// and skipped with a warning when they lead out of it; so are links to
// images that lead out of it, and dangling links.
func listClassFolders(root string, lint *Lint) (*folderListing, error) {
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

// imageProblem is the lint warning for an image that was skipped.
func imageProblem(path string, err error) Problem {
	switch {
	case errors.Is(err, ErrImageTooLarge):
		return Problem{Severity: LintWarning, File: path, Message: "skipped without decoding: " + err.Error(), Fix: tooLargeFix(err)}
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
