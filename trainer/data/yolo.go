package data

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"gpuwizard/internal/safefile"
)

// MaxClasses is the most classes a dataset may name (names: or nc:).
// The largest public detection vocabularies have some 20,000 (ImageNet-21k
// tags, LVIS has 1,203); 100,000 leaves room and bounds what nc: can make
// gpuwizard allocate.
const MaxClasses = 100_000

// YOLOConfig is a parsed data.yaml.
type YOLOConfig struct {
	File   string              // the data.yaml
	Root   string              // path: resolved against the YAML's folder
	Splits map[string][]string // split → image folders, list files or images, resolved
	Names  []string
	// Images are each split's images whose header the lint could read,
	// each once, in the order it found them (folders walked in name
	// order, list files line by line); filled by the lint (LintYOLO).
	Images map[string][]string
}

var knownYAMLKeys = map[string]bool{"path": true, "train": true, "val": true, "test": true, "names": true, "nc": true,
	"download": true, "roboflow": true, "yaml_file": true, "kpt_shape": true, "flip_idx": true, "channels": true}

// yamlBad is a data.yaml error naming the file, the line and what the key
// must be.
func yamlBad(file string, n *yaml.Node, key, want string) error {
	return fmt.Errorf("%w: %s:%d: %s must be %s", ErrData, file, n.Line, key, want)
}

// ParseDataYAML reads an Ultralytics / Roboflow data.yaml. Wrong types and
// missing keys are errors naming the line; unknown keys are warnings.
func ParseDataYAML(file string, raw []byte) (*YOLOConfig, *Lint, error) {
	lint := newLint("yolo")
	fields, err := yamlFields(file, raw, lint)
	if err != nil {
		return nil, lint, err
	}
	cfg := &YOLOConfig{File: file, Splits: map[string][]string{}}
	if cfg.Root, err = yamlRoot(file, fields["path"]); err != nil {
		return nil, lint, err
	}
	if cfg.Names, err = yamlNames(file, fields["names"], fields["nc"]); err != nil {
		return nil, lint, err
	}
	for _, split := range []string{"train", "val", "test"} {
		if cfg.Splits[split], err = yamlSplit(cfg, split, fields[split], lint); err != nil {
			return nil, lint, err
		}
	}
	lint.Classes = cfg.Names
	return cfg, lint, nil
}

// yamlFields parses the document into its known top-level keys; unknown
// keys are lint warnings.
func yamlFields(file string, raw []byte, lint *Lint) (map[string]*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%w: %s: not valid YAML: %s%s", ErrData, file, strings.TrimPrefix(err.Error(), "yaml: "), yamlQuoteHint(err.Error()))
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%w: %s: expected keys like path, train, val, names", ErrData, file)
	}
	m := doc.Content[0]
	fields := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if !knownYAMLKeys[k.Value] {
			lint.add(Problem{Severity: LintWarning, File: file, Line: k.Line, Message: fmt.Sprintf("unknown key %q is ignored", k.Value),
				Fix: "remove it, or check its spelling (path, train, val, test, names, nc)"})
			continue
		}
		fields[k.Value] = v
	}
	return fields, nil
}

// yamlRoot is path: resolved against the YAML's folder, which it must not
// leave.
func yamlRoot(file string, n *yaml.Node) (string, error) {
	base := filepath.Dir(file)
	if n == nil || n.Value == "" {
		return base, nil
	}
	if n.Kind != yaml.ScalarNode {
		return "", yamlBad(file, n, "path", "a folder")
	}
	if foreignAbs(n.Value) {
		return "", foreignAbsError(file, n.Line, "path", n.Value)
	}
	root := hostPath(base, n.Value)
	if !filepath.IsAbs(root) {
		root = filepath.Join(base, root)
	}
	if !within(base, root) {
		return "", fmt.Errorf("%w: %s:%d: path: %s points outside the dataset's folder %s: gpuwizard reads only the dataset beside its data.yaml; put data.yaml in the dataset's folder and write path: . (or remove path:)",
			ErrData, file, n.Line, n.Value, base)
	}
	return root, nil
}

// yamlNames reads names: (a list, or a map of index → name) and checks nc:
// against it; nc: alone names the classes 0, 1, 2, ...
func yamlNames(file string, names, ncNode *yaml.Node) ([]string, error) {
	var out []string
	if names != nil {
		var err error
		if out, err = nameList(file, names); err != nil {
			return nil, err
		}
	}
	if ncNode != nil {
		nc, err := strconv.Atoi(ncNode.Value)
		if ncNode.Kind != yaml.ScalarNode || err != nil || nc < 1 || nc > MaxClasses {
			return nil, yamlBad(file, ncNode, "nc", fmt.Sprintf("a whole number of classes from 1 to %d", MaxClasses))
		}
		if out == nil {
			for i := 0; i < nc; i++ {
				out = append(out, strconv.Itoa(i))
			}
		} else if nc != len(out) {
			return nil, yamlBad(file, ncNode, "nc", fmt.Sprintf("the number of names (nc: %d, but %d names)", nc, len(out)))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s: no names: add names: [class0, class1, ...]", ErrData, file)
	}
	return out, nil
}

func nameList(file string, n *yaml.Node) ([]string, error) {
	var out []string
	switch n.Kind {
	case yaml.SequenceNode:
		if len(n.Content) > MaxClasses {
			return nil, yamlBad(file, n, "names", fmt.Sprintf("at most %d class names (it has %d)", MaxClasses, len(n.Content)))
		}
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, yamlBad(file, c, "each name", "a string")
			}
			out = append(out, c.Value)
		}
	case yaml.MappingNode:
		byIdx := map[int]string{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			idx, err := strconv.Atoi(n.Content[i].Value)
			if err != nil || idx < 0 || idx >= MaxClasses {
				return nil, yamlBad(file, n.Content[i], "a names key", "a class index 0, 1, 2, ...")
			}
			byIdx[idx] = n.Content[i+1].Value
		}
		for i := 0; i < len(byIdx); i++ {
			name, ok := byIdx[i]
			if !ok {
				return nil, yamlBad(file, n, "names", fmt.Sprintf("numbered 0..%d without gaps (%d is missing)", len(byIdx)-1, i))
			}
			out = append(out, name)
		}
	default:
		return nil, yamlBad(file, n, "names", "a list of class names or a map 0: name")
	}
	return out, nil
}

// yamlSplit resolves a split's folders, list files or images: inside the
// dataset, each once (a repeat is a warning, not a second copy).
func yamlSplit(cfg *YOLOConfig, split string, n *yaml.Node, lint *Lint) ([]string, error) {
	file := cfg.File
	if n == nil || (n.Kind == yaml.ScalarNode && n.Value == "") {
		if split != "test" {
			return nil, fmt.Errorf("%w: %s: no %s: key: add %s: images/%s", ErrData, file, split, split, split)
		}
		return nil, nil
	}
	var items []string
	switch n.Kind {
	case yaml.ScalarNode:
		items = []string{n.Value}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			items = append(items, c.Value)
		}
	default:
		return nil, yamlBad(file, n, split, "a folder, a list file or a list of them")
	}
	var out []string
	seen := map[string]int{}
	for _, it := range items {
		if seen[it]++; seen[it] > 1 {
			continue
		}
		p, err := splitPath(cfg, split, it, n.Line)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	for _, it := range items {
		if c := seen[it]; c > 1 {
			lint.add(Problem{Severity: LintWarning, File: file, Line: n.Line, Message: fmt.Sprintf("%s: %s is listed %d times; its images are counted once", split, it, c),
				Fix: "list each folder or list file once"})
			seen[it] = 0
		}
	}
	return out, nil
}

// splitPath resolves one entry of a split.
func splitPath(cfg *YOLOConfig, split, it string, line int) (string, error) {
	if foreignAbs(it) {
		return "", foreignAbsError(cfg.File, line, split, it)
	}
	p := hostPath(cfg.Root, it)
	if !filepath.IsAbs(p) {
		p = filepath.Join(cfg.Root, p)
	}
	if _, err := os.Stat(p); err != nil {
		// Roboflow exports write ../train/images for folders that sit
		// beside data.yaml; Ultralytics drops the ../ then, and so do we.
		alt := filepath.Join(cfg.Root, strings.TrimPrefix(filepath.ToSlash(hostPath(cfg.Root, it)), "../"))
		if _, err2 := os.Stat(alt); err2 != nil || !strings.HasPrefix(filepath.ToSlash(hostPath(cfg.Root, it)), "../") {
			return "", fmt.Errorf("%w: %s:%d: %s folder %s does not exist", ErrData, cfg.File, line, split, p)
		}
		p = alt
	}
	if !within(cfg.Root, p) {
		return "", fmt.Errorf("%w: %s:%d: %s: %s points outside the dataset's folder %s: write a path inside it (images/%s)", ErrData, cfg.File, line, split, it, cfg.Root, split)
	}
	return p, nil
}

// within says whether p is root or inside it, after resolving symlinks
// (of the parts that exist).
func within(root, p string) bool {
	resolve := func(x string) string {
		if abs, err := filepath.Abs(x); err == nil {
			x = abs
		}
		if r, err := filepath.EvalSymlinks(x); err == nil {
			return r
		}
		return filepath.Clean(x)
	}
	rel, err := filepath.Rel(resolve(root), resolve(p))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// labelPath maps .../images/x.jpg to .../labels/x.txt (the YOLO convention:
// the last folder named images becomes labels). Relative paths stay
// relative and a Windows volume (C:, \\server\share) stays in front.
func labelPath(img string) string {
	dir, file := filepath.Split(img)
	vol := filepath.VolumeName(dir)
	parts := strings.Split(filepath.Clean(dir[len(vol):]), string(filepath.Separator))
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i] == "images" {
			parts[i] = "labels"
			break
		}
	}
	return filepath.Join(vol+strings.Join(parts, string(filepath.Separator)), strings.TrimSuffix(file, filepath.Ext(file))+".txt")
}

// yoloLint is one lint of a YOLO dataset in progress.
type yoloLint struct {
	cfg  *YOLOConfig
	lint *Lint
	root *safefile.Root // cfg.Root: no image, list or label is read from outside it
	seen map[uint64]seenImage
	// linted are the label files already checked (an image in two splits
	// has its label errors reported once).
	linted map[string]bool
}

// seenImage is where an image's content was first seen.
type seenImage struct{ split, path string }

func lintYOLO(cfg *YOLOConfig, lint *Lint) {
	root, err := safefile.NewRoot(cfg.Root)
	if err != nil {
		lint.add(Problem{Severity: LintError, File: cfg.File, Message: "the dataset's folder cannot be read: " + err.Error(), Fix: "check that path: names an existing folder you may read"})
		return
	}
	y := &yoloLint{cfg: cfg, lint: lint, root: root, seen: map[uint64]seenImage{}, linted: map[string]bool{}}
	readable := 0
	for _, split := range []string{"train", "val", "test"} {
		readable += y.split(split)
	}
	for _, n := range cfg.Names {
		if lint.Counts["train"][n] == 0 && lint.Images["train"] > 0 {
			lint.add(Problem{Severity: LintWarning, File: cfg.File, Message: fmt.Sprintf("class %q has no boxes in train", n), Fix: "label some, or remove the class from names"})
		}
	}
	lint.imbalance(cfg.File, "train", "boxes")
	y.emptySplits(readable)
}

// split lints one split's images and labels and returns how many of its
// images could be read.
func (y *yoloLint) split(split string) int {
	var images []string
	listed := map[string]bool{}
	for _, src := range y.cfg.Splits[split] {
		for _, img := range y.listImages(src) {
			if !listed[img] {
				listed[img] = true
				images = append(images, img)
			}
		}
	}
	y.lint.Images[split] = len(images)
	if y.lint.Counts[split] == nil && len(images) > 0 {
		y.lint.Counts[split] = map[string]int{}
	}
	labelled := map[string]bool{}
	var readable []string
	for _, img := range images {
		if y.image(split, img, labelled) {
			readable = append(readable, img)
		}
	}
	if y.cfg.Images == nil {
		y.cfg.Images = map[string][]string{}
	}
	y.cfg.Images[split] = readable
	y.orphanLabels(split, labelled)
	if len(images) > 0 && len(readable) == 0 {
		y.lint.add(Problem{Severity: LintError, File: y.cfg.File, Message: fmt.Sprintf("none of the %d images of the %s split can be read (each is listed above)", len(images), split),
			Fix: fmt.Sprintf("replace the %s images with images gpuwizard can read (%s)", split, strings.Join(sortedKeys(ImageExts), " "))})
	}
	return len(readable)
}

// image lints one image and its label file; false when the image cannot
// be read.
func (y *yoloLint) image(split, img string, labelled map[string]bool) bool {
	sum, err := y.yoloImage(img)
	if err != nil {
		y.lint.add(imageProblem(img, err))
		return false
	}
	if prev, ok := y.seen[sum]; ok && prev.split != split {
		msg := fmt.Sprintf("the same image is also in the %s split, as %s", prev.split, prev.path)
		if prev.path == img {
			msg = fmt.Sprintf("the image is in both the %s and the %s split", prev.split, split)
		}
		y.lint.add(Problem{Severity: LintWarning, File: img, Message: msg, Fix: "keep each image in one split only"})
	}
	y.seen[sum] = seenImage{split, img}
	lp := labelPath(img)
	labelled[lp] = true
	lraw, err := y.root.ReadFile(lp, MaxLabelFile, "a YOLO label file")
	if errors.Is(err, fs.ErrNotExist) {
		y.lint.add(Problem{Severity: LintWarning, File: img, Message: "image without a label file " + lp,
			Fix: "label it, or keep it knowingly as a background image (an empty .txt says so)"})
		return true
	}
	if err != nil {
		y.lint.add(Problem{Severity: LintError, File: lp, Message: "unreadable label file: " + err.Error(), Fix: "replace it with the image's labels, one box a line"})
		return true
	}
	if !y.linted[lp] {
		y.linted[lp] = true
		for _, p := range LintYOLOLabels(lp, lraw, len(y.cfg.Names)) {
			y.lint.add(p)
		}
	}
	for _, cls := range labelClasses(lraw, len(y.cfg.Names)) {
		y.lint.count(split, y.cfg.Names[cls])
	}
	return true
}

// orphanLabels warns of label files without an image beside the split's
// image folders.
func (y *yoloLint) orphanLabels(split string, labelled map[string]bool) {
	for _, src := range y.cfg.Splits[split] {
		lblDir := filepath.Dir(labelPath(filepath.Join(src, "x.jpg")))
		ents, err := os.ReadDir(lblDir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			p := filepath.Join(lblDir, e.Name())
			if strings.HasSuffix(e.Name(), ".txt") && !labelled[p] && e.Name() != "classes.txt" {
				y.lint.add(Problem{Severity: LintWarning, File: p, Message: "label file without an image", Fix: "add its image, or delete the label"})
			}
		}
	}
}

// emptySplits reports a dataset, or a split, with no images at all, and
// a dataset none of whose images can be read.
func (y *yoloLint) emptySplits(readable int) {
	cfg, lint := y.cfg, y.lint
	total := 0
	for _, split := range []string{"train", "val", "test"} {
		total += lint.Images[split]
	}
	if total == 0 {
		lint.add(Problem{Severity: LintError, File: cfg.File, Message: "the dataset has no images: train, val and test hold none (" + strings.Join(sortedKeys(ImageExts), " ") + ")",
			Fix: "point train: and val: at the folders (or list files) that hold the images, relative to path:"})
		return
	}
	for _, split := range []string{"train", "val", "test"} {
		if len(cfg.Splits[split]) > 0 && lint.Images[split] == 0 {
			lint.add(Problem{Severity: LintError, File: cfg.File, Message: fmt.Sprintf("the %s split (%s) has no images", split, strings.Join(cfg.Splits[split], ", ")),
				Fix: fmt.Sprintf("put the %s images there, or point %s: at the folder that holds them", split, split)})
		}
	}
}

// yoloImage reads one image of a detection dataset without decoding it:
// a regular file inside the dataset whose header is checked against
// MaxImagePixels first, then hashed (to find the same image twice).
func (y *yoloLint) yoloImage(path string) (uint64, error) {
	f, err := openImageIn(y.root, path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	in, err := decoderInput(f)
	if err != nil {
		return 0, err
	}
	c, _, err := checkImageHeader(in, MaxImagePixels)
	if err != nil {
		return 0, err
	}
	y.lint.size(c.Width, c.Height)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	h := fnv.New64a()
	if _, err := io.Copy(h, f); err != nil {
		return 0, err
	}
	return h.Sum64(), nil
}

// listImages gives the images of one split entry: a folder (walked, links
// to folders not followed), a list file (one image a line, relative to
// the list file; entries outside the dataset are errors) or one image.
func (y *yoloLint) listImages(src string) []string {
	st, err := os.Stat(src)
	if err != nil {
		return nil
	}
	if st.IsDir() {
		var out []string
		filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && ImageExts[strings.ToLower(filepath.Ext(p))] {
				out = append(out, p)
			}
			return nil
		})
		sort.Strings(out)
		return out
	}
	if !strings.HasSuffix(src, ".txt") {
		return []string{src}
	}
	return y.listFile(src)
}

// listFile reads a YOLO list file: each entry once, inside the dataset.
func (y *yoloLint) listFile(src string) []string {
	raw, err := y.root.ReadFile(src, MaxListFile, "a YOLO list file")
	if err != nil {
		y.lint.add(Problem{Severity: LintError, File: src, Message: "unreadable list file: " + err.Error(), Fix: "list one image path a line in a regular file"})
		return nil
	}
	var out []string
	seen := map[string]bool{}
	repeats := 0
	for i, l := range strings.Split(string(raw), "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if foreignAbs(l) {
			y.lint.add(Problem{Severity: LintError, File: src, Line: i + 1, Message: l + " is a Windows path, which this system cannot open",
				Fix: "list the images relative to the list file (./images/train/a.jpg), which works on every system"})
			continue
		}
		if l = hostPath(filepath.Dir(src), l); !filepath.IsAbs(l) {
			l = filepath.Join(filepath.Dir(src), l)
		}
		if seen[l] {
			repeats++
			continue
		}
		seen[l] = true
		if _, err := safefile.Check(l); errors.Is(err, safefile.ErrNotRegular) {
			out = append(out, l) // a device or a pipe: refused as such when read
			continue
		}
		if !within(y.root.Dir(), l) {
			y.lint.add(Problem{Severity: LintError, File: src, Line: i + 1, Message: fmt.Sprintf("%s is outside the dataset's folder %s", l, y.root.Dir()),
				Fix: "list only images inside the dataset (relative to the list file), or copy the image in"})
			continue
		}
		out = append(out, l)
	}
	if repeats > 0 {
		y.lint.add(Problem{Severity: LintWarning, File: src, Message: fmt.Sprintf("%d %s the same image as an earlier line; each image is counted once", repeats, map[bool]string{true: "line names", false: "lines name"}[repeats == 1]),
			Fix: "list each image once"})
	}
	return out
}

// LintYOLOLabels checks one label file: "class cx cy w h" per line (or a
// polygon "class x1 y1 x2 y2 ..."), normalised to 0..1, class < nc.
func LintYOLOLabels(file string, raw []byte, nc int) []Problem {
	var out []Problem
	for i, line := range strings.Split(string(raw), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		at := func(msg, fix string) {
			if len(out) < maxPerKind {
				out = append(out, Problem{Severity: LintError, File: file, Line: i + 1, Message: msg, Fix: fix})
			}
		}
		if msg, fix := labelLineProblem(fields, nc); msg != "" {
			at(msg, fix)
		}
	}
	return out
}

// labelLineProblem says what is wrong with one label line's fields, if
// anything.
func labelLineProblem(fields []string, nc int) (msg, fix string) {
	cls, err := strconv.Atoi(fields[0])
	if err != nil || cls < 0 {
		return fmt.Sprintf("class %q is not a class index", fields[0]), "the first number of a line is the class index 0..nc-1"
	}
	if cls >= nc {
		return fmt.Sprintf("class id %d ≥ nc (%d)", cls, nc), fmt.Sprintf("use class ids 0..%d, or add the class to names in data.yaml", nc-1)
	}
	if len(fields) != 5 && (len(fields) < 7 || len(fields)%2 == 0) {
		return fmt.Sprintf("%d numbers: a box line is \"class cx cy w h\"", len(fields)), "write 5 numbers per box (or class + x y pairs for a polygon)"
	}
	v := make([]float64, 0, len(fields)-1)
	for _, f := range fields[1:] {
		x, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return fmt.Sprintf("%q is not a number", f), "coordinates are decimal numbers between 0 and 1"
		}
		if !(x >= 0 && x <= 1) {
			return "coordinates outside 0..1", "YOLO boxes are normalised by the image size: divide pixels by width and height"
		}
		v = append(v, x)
	}
	if len(fields) == 5 {
		cx, cy, w, h := v[0], v[1], v[2], v[3]
		if w <= 0 || h <= 0 {
			return "a box with zero width or height", "remove the line or fix the box"
		}
		if cx-w/2 < -1e-3 || cx+w/2 > 1+1e-3 || cy-h/2 < -1e-3 || cy+h/2 > 1+1e-3 {
			return "the box reaches outside the image", "clip the box to the image"
		}
	}
	return "", ""
}

func labelClasses(raw []byte, nc int) []int {
	var out []int
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 5 && (len(f) < 7 || len(f)%2 == 0) {
			continue // malformed: reported by LintYOLOLabels, not counted
		}
		if c, err := strconv.Atoi(f[0]); err == nil && c >= 0 && c < nc {
			out = append(out, c)
		}
	}
	return out
}
