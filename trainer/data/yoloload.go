package data

import (
	"fmt"
	"image"
	"os"
	"path/filepath"

	"gpuwizard/internal/plural"
	"gpuwizard/internal/safefile"
)

// This file is what a loader outside this package (trainer/detect) needs
// to train on a YOLO dataset: the lint with each split's images, the
// label file of an image, and a decoder held to the same limits as the
// classification loaders.

// LintYOLO reads, parses and lints a YOLO dataset (a data.yaml, or a
// folder holding data.yaml or data.yml) as LintDetection does, and returns
// its configuration with each split's images (YOLOConfig.Images). A
// data.yaml that cannot be read is an error without a lint; one that
// cannot be parsed, an error with the lint so far. Problems found by the
// lint are in the Lint, not the error: TrainingError says whether they
// stop training.
func LintYOLO(path string) (*YOLOConfig, *Lint, error) {
	y := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		y = filepath.Join(path, "data.yaml")
		if _, err := os.Stat(y); err != nil {
			y = filepath.Join(path, "data.yml")
		}
	}
	raw, err := safefile.ReadFile(y, MaxYAMLFile, "a data.yaml")
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	cfg, lint, err := ParseDataYAML(y, raw)
	if err != nil {
		return nil, lint, err
	}
	lintYOLO(cfg, lint)
	return cfg, lint, nil
}

// TrainingError is the error that stops training on a dataset whose lint
// found errors (nil when it found none): how many, and the first, with
// its file, line and fix. root names the dataset.
func (l *Lint) TrainingError(root string) error {
	errs := l.Errors()
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s cannot be trained on (%s; the first: %s)", ErrData, root, plural.Count(len(errs), "problem"), errs[0])
}

// YOLOLabelPath is the label file of a YOLO image: the last folder named
// images becomes labels and the extension .txt (images/train/a.jpg →
// labels/train/a.txt).
func YOLOLabelPath(img string) string { return labelPath(img) }

// ImageDecoder reads the files of one dataset folder for a loader outside
// this package: images and label files, each a regular file inside the
// folder (links may not lead out). An image is at most MaxImageFile
// bytes; its header is checked against MaxImagePixels and its decoding
// cost against MaxImageDecodeBytes before it is decoded, and all the
// decodes under way take at most MaxDecodingBytes together (a decode
// waits for room). It is safe for use by several goroutines.
type ImageDecoder struct {
	root   *safefile.Root
	budget *decodeBudget
}

// NewImageDecoder reads the dataset in dir.
func NewImageDecoder(dir string) (*ImageDecoder, error) {
	root, err := safefile.NewRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	return &ImageDecoder{root: root, budget: newDecodeBudget(MaxDecodingBytes)}, nil
}

// Decode decodes the image at path and hands it to use, which must not
// keep it: its memory goes back to the budget when use returns. The
// error says why the image was not decoded (not a regular file, outside
// the folder, too large, corrupt); the lint's words for it are
// ImageProblem's.
func (d *ImageDecoder) Decode(path string, use func(image.Image)) error {
	f, err := openImageIn(d.root, path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = decodeChecked(f, defaultImageLimits(), d.budget, use)
	return err
}

// ReadFile reads a regular file inside the folder of at most limit bytes;
// what names its role in the error ("a YOLO label file").
func (d *ImageDecoder) ReadFile(path string, limit int64, what string) ([]byte, error) {
	return d.root.ReadFile(path, limit, what)
}

// ImageProblem is the lint's warning for an image that was skipped
// because of err (what Decode returned).
func ImageProblem(path string, err error) Problem { return imageProblem(path, err) }

// Add adds a problem to the lint (at most MaxPerKind of a kind are
// listed; the rest are counted).
func (l *Lint) Add(p Problem) { l.add(p) }

// NewLint is an empty lint of a dataset of format.
func NewLint(format string) *Lint { return newLint(format) }
