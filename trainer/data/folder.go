package data

import (
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // register GIF
	_ "image/jpeg" // register JPEG
	_ "image/png"  // register PNG
	"io"
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
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	lint := newLint("imagefolder")
	splitDirs := map[string]string{}
	var classDirs []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if s, ok := splitNames[strings.ToLower(e.Name())]; ok {
			splitDirs[s] = filepath.Join(root, e.Name())
		} else {
			classDirs = append(classDirs, e.Name())
		}
	}
	var files []folderImage
	classSet := map[string]bool{}
	scan := func(split, dir string) error {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrData, err)
		}
		for _, c := range ents {
			if !c.IsDir() || strings.HasPrefix(c.Name(), ".") {
				continue
			}
			classSet[c.Name()] = true
			imgs, err := os.ReadDir(filepath.Join(dir, c.Name()))
			if err != nil {
				return fmt.Errorf("%w: %w", ErrData, err)
			}
			for _, f := range imgs {
				if f.IsDir() || strings.HasPrefix(f.Name(), ".") || !ImageExts[strings.ToLower(filepath.Ext(f.Name()))] {
					continue
				}
				files = append(files, folderImage{split, c.Name(), filepath.Join(dir, c.Name(), f.Name())})
			}
		}
		return nil
	}
	if len(splitDirs) > 0 {
		if splitDirs["train"] == "" {
			return nil, fmt.Errorf("%w: %s has %s folders but no train folder: add train/CLASS/... images", ErrData, root, strings.Join(sortedKeys(splitDirs), "/"))
		}
		for _, s := range []string{"train", "val", "test"} {
			if d := splitDirs[s]; d != "" {
				if err := scan(s, d); err != nil {
					return nil, err
				}
			}
		}
	} else {
		if err := scan("train", root); err != nil {
			return nil, err
		}
	}
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

// imageProblem is the lint warning for an image that was skipped.
func imageProblem(path string, err error) Problem {
	switch {
	case errors.Is(err, ErrImageTooLarge):
		return Problem{Severity: LintWarning, File: path, Message: "skipped without decoding: " + err.Error(), Fix: tooLargeFix(err)}
	case errors.Is(err, safefile.ErrNotRegular):
		return Problem{Severity: LintWarning, File: path, Message: "skipped: " + err.Error(),
			Fix: "put the image file itself there, or delete the entry"}
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
