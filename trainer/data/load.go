package data

import (
	"bytes"
	"cmp"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gpuwizard/assets"
	"gpuwizard/internal/safefile"
)

// Builtin names the embedded dataset.
const Builtin = "builtin"

// Options say how to load a dataset.
type Options struct {
	// ImageSize resizes image-folder images to ImageSize×ImageSize; 0 keeps
	// the dataset's native size (28 for IDX, 32 for CIFAR; folders keep
	// the size all their images share up to MaxAutoSize, else 32).
	ImageSize int
	// Grey converts colour images to one channel.
	Grey bool
	// ValSplit is the fraction of train kept for validation when the
	// dataset has no validation split.
	ValSplit float64
	// Seed draws that split.
	Seed int64
	// MaxImages caps how many images a folder dataset may hold (memory).
	MaxImages int

	memLimit int64 // MaxDatasetBytes when 0; tests lower it
}

// maxBytes is the memory the dataset may take.
func (o Options) maxBytes() int64 {
	if o.memLimit > 0 {
		return o.memLimit
	}
	return MaxDatasetBytes
}

// Load detects the format of path and loads it for classification:
// "builtin", an MNIST-style IDX folder, CIFAR-10 binary batches, or an image
// folder (one sub-folder per class, flat or split into train/val[/test]).
// Detection datasets (YOLO data.yaml, COCO JSON) are linted by LintDetection
// and a YOLO set is loaded by trainer/detect; Load refuses them with that
// advice.
func Load(path string, opt Options) (*Dataset, error) {
	if opt.ValSplit == 0 {
		opt.ValSplit = 0.1
	}
	var d *Dataset
	var err error
	switch {
	case path == "" || path == Builtin:
		d, err = loadBuiltin()
	default:
		d, err = loadPath(path, opt)
	}
	if err != nil {
		if d != nil && d.Lint != nil { // the loader's report on what it skipped, for lint
			d.Train, d.Val, d.Test = &Split{}, &Split{}, nil
			return d, err
		}
		return nil, err
	}
	if d.Format == "idx" || d.Format == "cifar10" {
		if d.Lint == nil {
			d.Lint = newLint(d.Format)
		}
		lintSameImages(d)
	}
	if d.Val == nil {
		size := d.ImageSize()
		d.Train, d.Val, err = splitInPlace(d.Train, len(d.Classes), opt.ValSplit, opt.Seed, size)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Root, err)
		}
	}
	if d.Lint == nil {
		d.Lint = newLint(d.Format)
	}
	d.Lint.Classes = d.Classes
	for name, s := range map[string]*Split{"train": d.Train, "val": d.Val, "test": d.Test} {
		if s == nil {
			continue
		}
		d.Lint.Images[name] = s.Len()
		counts := map[string]int{}
		for i, c := range d.Counts(s) {
			counts[d.Classes[i]] = c
		}
		d.Lint.Counts[name] = counts
	}
	if d.Lint.MaxW == 0 { // fixed-size formats: every image has the dataset's size
		d.Lint.size(d.Width, d.Height)
	}
	for _, c := range d.Classes {
		if d.Lint.Counts["train"][c] == 0 {
			d.Lint.add(Problem{Severity: LintError, File: d.Root, Message: fmt.Sprintf("class %q has no training images", c),
				Fix: "add images to it, or remove the class folder"})
		}
	}
	d.Lint.imbalance(d.Root, "train", "training images")
	if err := d.Lint.TrainingError(d.Root); err != nil {
		return d, err
	}
	d.loadedFrom, d.loadedWith = sourceName(path), opt
	return d, nil
}

// LoadedWith says whether d is what Load(path, opt) gives now: the same
// path and options, so a caller holding d (the window) can hand it to a
// run instead of the run loading a second copy. Files changed since are
// not noticed: the caller loaded it for this run.
func (d *Dataset) LoadedWith(path string, opt Options) bool {
	if opt.ValSplit == 0 {
		opt.ValSplit = 0.1 // as Load takes it
	}
	return d != nil && d.loadedFrom != "" && d.loadedFrom == sourceName(path) && d.loadedWith == opt
}

// sourceName is the name Load gives a path: "" is the built-in set.
func sourceName(path string) string {
	if path == "" {
		return Builtin
	}
	return path
}

// lintSameImages warns about identical images (the same pixels) with
// different labels in a fixed-size dataset (IDX, CIFAR-10). It sorts the
// images' hashes (16 bytes an image) instead of keeping a map of them,
// notes each image's first copy (4 bytes), and writes the first maxPerKind
// warnings of each split only.
func lintSameImages(d *Dataset) {
	size := d.ImageSize()
	parts := []struct {
		name string
		s    *Split
	}{{"train", d.Train}, {"test", d.Test}}
	type entry struct {
		hash uint64
		at   int // train images first, then test
	}
	n := d.Train.Len()
	if d.Test != nil {
		n += d.Test.Len()
	}
	es := make([]entry, 0, n)
	image := func(at int) (string, int, *Split) {
		if at < d.Train.Len() {
			return "train", at, d.Train
		}
		return "test", at - d.Train.Len(), d.Test
	}
	seed := maphash.MakeSeed()
	for _, p := range parts {
		if p.s == nil {
			continue
		}
		for i := range p.s.Labels {
			es = append(es, entry{maphash.Bytes(seed, p.s.Pixels[i*size:(i+1)*size]), len(es)})
		}
	}
	slices.SortFunc(es, func(a, b entry) int { return cmp.Or(cmp.Compare(a.hash, b.hash), cmp.Compare(a.at, b.at)) })
	// first[i] is the first image with image i's hash, when that is another.
	first := make([]int32, n)
	for i := 0; i < len(es); {
		j := i + 1
		first[es[i].at] = -1
		for ; j < len(es) && es[j].hash == es[i].hash; j++ {
			first[es[j].at] = int32(es[i].at)
		}
		i = j
	}
	for at, f := range first {
		if f < 0 {
			continue
		}
		sp, i, s := image(at)
		fp, fi, fs := image(int(f))
		y, fy := s.Labels[i], fs.Labels[fi]
		if y == fy || int(y) >= len(d.Classes) || int(fy) >= len(d.Classes) || !bytes.Equal(s.Pixels[i*size:(i+1)*size], fs.Pixels[fi*size:(fi+1)*size]) {
			continue
		}
		if kind := problemKind(LintWarning, "correct or remove one of the two"); d.Lint.full(kind) {
			d.Lint.drop(kind, 1)
			continue
		}
		d.Lint.add(Problem{Severity: LintWarning, File: d.Root, Message: fmt.Sprintf("%s image %d is the same image as %s image %d but labelled %q, not %q: one of the two labels is wrong",
			sp, i, fp, fi, d.Classes[y], d.Classes[fy]), Fix: "correct or remove one of the two"})
	}
}

func loadBuiltin() (*Dataset, error) {
	read := func(name string) ([]byte, error) {
		b, err := fs.ReadFile(assets.MNIST, "mnist/"+name)
		if err != nil {
			return nil, fmt.Errorf("%w: built-in dataset: %w", ErrData, err)
		}
		return b, nil
	}
	var raw [4][]byte
	for i, n := range idxNames {
		b, err := read(n + ".gz")
		if err != nil {
			return nil, err
		}
		raw[i] = b
	}
	train, h, w, err := LoadIDXPair("builtin/"+idxNames[0], raw[0], "builtin/"+idxNames[1], raw[1], 10)
	if err != nil {
		return nil, err
	}
	test, _, _, err := LoadIDXPair("builtin/"+idxNames[2], raw[2], "builtin/"+idxNames[3], raw[3], 10)
	if err != nil {
		return nil, err
	}
	return &Dataset{Name: "builtin", Format: "builtin", Root: "builtin", Classes: mnistClasses(""),
		Channels: 1, Height: h, Width: w, Train: train, Test: test,
		Credit: "MNIST subset (LeCun, Cortes, Burges; CC BY-SA 3.0): 6,000 training and 1,000 test digits"}, nil
}

// Detect says which format a path holds, without loading it.
func Detect(path string) (string, error) {
	if path == "" || path == Builtin {
		return "builtin", nil
	}
	st, err := safefile.Stat(path)
	if err != nil {
		return "", fmt.Errorf("%w: %w (give a dataset folder, a data.yaml, a COCO .json, or \"builtin\")", ErrData, err)
	}
	if !st.IsDir() {
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml":
			return "yolo", nil
		case ".json":
			return "coco", nil
		}
		return "", fmt.Errorf("%w: %s is a file: give the dataset's folder (or its data.yaml / COCO .json)", ErrData, path)
	}
	if f := findIDX(path); f[0] != "" || f[1] != "" {
		return "idx", nil
	}
	if cifarDir(path) != "" {
		return "cifar10", nil
	}
	for _, y := range []string{"data.yaml", "data.yml"} {
		if _, err := os.Stat(filepath.Join(path, y)); err == nil {
			return "yolo", nil
		}
	}
	return "imagefolder", nil
}

func loadPath(path string, opt Options) (*Dataset, error) {
	format, err := Detect(path)
	if err != nil {
		return nil, err
	}
	switch format {
	case "idx":
		return loadIDXDir(path, findIDX(path), opt.maxBytes())
	case "cifar10":
		return loadCIFAR(cifarDir(path), opt.maxBytes())
	case "yolo":
		return nil, fmt.Errorf("%w: %s is a YOLO detection dataset, not a classifier's: train a detector on it (model auto, det-n or det-s), or check it with gpuwizard lint %s", ErrData, path, path)
	case "coco":
		return nil, fmt.Errorf("%w: %s is a COCO detection dataset: gpuwizard checks it (gpuwizard lint %s) and trains detectors on YOLO sets: export it as YOLO (a data.yaml with images/ and labels/)", ErrData, path, path)
	}
	return loadImageFolder(path, opt)
}
