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

// LintDetection loads, lints and summarises a detection dataset: a YOLO
// data.yaml (or the folder holding it) or a COCO JSON file. Training on
// detection datasets comes later; the lint is complete now.
func LintDetection(path string) (*Lint, error) {
	format, err := Detect(path)
	if err != nil {
		return nil, err
	}
	switch format {
	case "yolo":
		y := path
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			y = filepath.Join(path, "data.yaml")
			if _, err := os.Stat(y); err != nil {
				y = filepath.Join(path, "data.yml")
			}
		}
		raw, err := safefile.ReadFile(y, MaxYAMLFile, "a data.yaml")
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrData, err)
		}
		cfg, lint, err := ParseDataYAML(y, raw)
		if err != nil {
			return lint, err
		}
		lintYOLO(cfg, lint)
		return lint, nil
	case "coco":
		return lintCOCOFile(path)
	}
	return nil, fmt.Errorf("%w: %s is a %s dataset, not a detection dataset", ErrData, path, format)
}

// YOLOConfig is a parsed data.yaml.
type YOLOConfig struct {
	File   string              // the data.yaml
	Root   string              // path: resolved against the YAML's folder
	Splits map[string][]string // split → image folders, list files or images, resolved
	Names  []string
}

var knownYAMLKeys = map[string]bool{"path": true, "train": true, "val": true, "test": true, "names": true, "nc": true,
	"download": true, "roboflow": true, "yaml_file": true, "kpt_shape": true, "flip_idx": true, "channels": true}

// ParseDataYAML reads an Ultralytics / Roboflow data.yaml. Wrong types and
// missing keys are errors naming the line; unknown keys are warnings.
func ParseDataYAML(file string, raw []byte) (*YOLOConfig, *Lint, error) {
	lint := newLint("yolo")
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, lint, fmt.Errorf("%w: %s: not valid YAML: %s", ErrData, file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, lint, fmt.Errorf("%w: %s: expected keys like path, train, val, names", ErrData, file)
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
	bad := func(n *yaml.Node, key, want string) error {
		return fmt.Errorf("%w: %s:%d: %s must be %s", ErrData, file, n.Line, key, want)
	}
	cfg := &YOLOConfig{File: file, Splits: map[string][]string{}}
	base := filepath.Dir(file)
	cfg.Root = base
	if n := fields["path"]; n != nil && n.Value != "" {
		if n.Kind != yaml.ScalarNode {
			return nil, lint, bad(n, "path", "a folder")
		}
		cfg.Root = n.Value
		if !filepath.IsAbs(cfg.Root) {
			cfg.Root = filepath.Join(base, cfg.Root)
		}
		if !within(base, cfg.Root) {
			return nil, lint, fmt.Errorf("%w: %s:%d: path: %s points outside the dataset's folder %s: gpuwizard reads only the dataset beside its data.yaml; put data.yaml in the dataset's folder and write path: . (or remove path:)",
				ErrData, file, n.Line, n.Value, base)
		}
	}
	// names: a list, or a map of index → name.
	if n := fields["names"]; n != nil {
		switch n.Kind {
		case yaml.SequenceNode:
			for _, c := range n.Content {
				if c.Kind != yaml.ScalarNode {
					return nil, lint, bad(c, "each name", "a string")
				}
				cfg.Names = append(cfg.Names, c.Value)
			}
		case yaml.MappingNode:
			byIdx := map[int]string{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				idx, err := strconv.Atoi(n.Content[i].Value)
				if err != nil || idx < 0 || idx > 100000 {
					return nil, lint, bad(n.Content[i], "a names key", "a class index 0, 1, 2, ...")
				}
				byIdx[idx] = n.Content[i+1].Value
			}
			for i := 0; i < len(byIdx); i++ {
				name, ok := byIdx[i]
				if !ok {
					return nil, lint, bad(n, "names", fmt.Sprintf("numbered 0..%d without gaps (%d is missing)", len(byIdx)-1, i))
				}
				cfg.Names = append(cfg.Names, name)
			}
		default:
			return nil, lint, bad(n, "names", "a list of class names or a map 0: name")
		}
	}
	if n := fields["nc"]; n != nil {
		nc, err := strconv.Atoi(n.Value)
		if n.Kind != yaml.ScalarNode || err != nil || nc < 1 {
			return nil, lint, bad(n, "nc", "a whole number of classes")
		}
		if cfg.Names == nil {
			for i := 0; i < nc; i++ {
				cfg.Names = append(cfg.Names, strconv.Itoa(i))
			}
		} else if nc != len(cfg.Names) {
			return nil, lint, bad(n, "nc", fmt.Sprintf("the number of names (nc: %d, but %d names)", nc, len(cfg.Names)))
		}
	}
	if len(cfg.Names) == 0 {
		return nil, lint, fmt.Errorf("%w: %s: no names: add names: [class0, class1, ...]", ErrData, file)
	}
	for _, split := range []string{"train", "val", "test"} {
		n := fields[split]
		if n == nil || (n.Kind == yaml.ScalarNode && n.Value == "") {
			if split != "test" {
				return nil, lint, fmt.Errorf("%w: %s: no %s: key: add %s: images/%s", ErrData, file, split, split, split)
			}
			continue
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
			return nil, lint, bad(n, split, "a folder, a list file or a list of them")
		}
		for _, it := range items {
			p := it
			if !filepath.IsAbs(p) {
				p = filepath.Join(cfg.Root, p)
			}
			if _, err := os.Stat(p); err != nil {
				// Roboflow exports write ../train/images for folders that sit
				// beside data.yaml; Ultralytics drops the ../ then, and so do we.
				alt := filepath.Join(cfg.Root, strings.TrimPrefix(filepath.ToSlash(it), "../"))
				if _, err2 := os.Stat(alt); err2 == nil && strings.HasPrefix(filepath.ToSlash(it), "../") {
					p = alt
				} else {
					return nil, lint, fmt.Errorf("%w: %s:%d: %s folder %s does not exist", ErrData, file, n.Line, split, p)
				}
			}
			if !within(cfg.Root, p) {
				return nil, lint, fmt.Errorf("%w: %s:%d: %s: %s points outside the dataset's folder %s: write a path inside it (images/%s)", ErrData, file, n.Line, split, it, cfg.Root, split)
			}
			cfg.Splits[split] = append(cfg.Splits[split], p)
		}
	}
	lint.Classes = cfg.Names
	return cfg, lint, nil
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

// labelPath maps .../images/x.jpg to .../labels/x.txt (the YOLO convention).
func labelPath(img string) string {
	dir, file := filepath.Split(img)
	parts := strings.Split(filepath.Clean(dir), string(filepath.Separator))
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i] == "images" {
			parts[i] = "labels"
			break
		}
	}
	return filepath.Join(string(filepath.Separator)+filepath.Join(parts...), strings.TrimSuffix(file, filepath.Ext(file))+".txt")
}

func lintYOLO(cfg *YOLOConfig, lint *Lint) {
	seen := map[uint64]string{}
	for _, split := range []string{"train", "val", "test"} {
		var images []string
		for _, src := range cfg.Splits[split] {
			images = append(images, listImages(src, lint)...)
		}
		lint.Images[split] = len(images)
		if lint.Counts[split] == nil && len(images) > 0 {
			lint.Counts[split] = map[string]int{}
		}
		labelled := map[string]bool{}
		for _, img := range images {
			sum, err := yoloImage(img, lint)
			if err != nil {
				lint.add(imageProblem(img, err))
				continue
			}
			if prev, ok := seen[sum]; ok && !strings.HasPrefix(prev, split+":") {
				lint.add(Problem{Severity: LintWarning, File: img, Message: "the same image is also in " + prev, Fix: "keep each image in one split only"})
			}
			seen[sum] = split + ":" + img
			lp := labelPath(img)
			labelled[lp] = true
			lraw, err := safefile.ReadFile(lp, MaxLabelFile, "a YOLO label file")
			if errors.Is(err, fs.ErrNotExist) {
				lint.add(Problem{Severity: LintWarning, File: img, Message: "image without a label file " + lp,
					Fix: "label it, or keep it knowingly as a background image (an empty .txt says so)"})
				continue
			}
			if err != nil {
				lint.add(Problem{Severity: LintError, File: lp, Message: "unreadable label file: " + err.Error(), Fix: "replace it with the image's labels, one box a line"})
				continue
			}
			for _, p := range LintYOLOLabels(lp, lraw, len(cfg.Names)) {
				lint.add(p)
			}
			for _, cls := range labelClasses(lraw, len(cfg.Names)) {
				lint.count(split, cfg.Names[cls])
			}
		}
		// Labels without images.
		for _, src := range cfg.Splits[split] {
			lblDir := labelPath(filepath.Join(src, "x.jpg"))
			ents, err := os.ReadDir(filepath.Dir(lblDir))
			if err != nil {
				continue
			}
			for _, e := range ents {
				p := filepath.Join(filepath.Dir(lblDir), e.Name())
				if strings.HasSuffix(e.Name(), ".txt") && !labelled[p] && e.Name() != "classes.txt" {
					lint.add(Problem{Severity: LintWarning, File: p, Message: "label file without an image", Fix: "add its image, or delete the label"})
				}
			}
		}
	}
	for _, split := range []string{"train"} {
		for _, n := range cfg.Names {
			if lint.Counts[split][n] == 0 && lint.Images[split] > 0 {
				lint.add(Problem{Severity: LintWarning, File: cfg.File, Message: fmt.Sprintf("class %q has no boxes in %s", n, split), Fix: "label some, or remove the class from names"})
			}
		}
	}
	lint.imbalance(cfg.File, "train", "boxes")
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
// a regular file, hashed as it is read, whose header is checked against
// MaxImagePixels.
func yoloImage(path string, lint *Lint) (uint64, error) {
	f, err := openImage(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	h := fnv.New64a()
	if _, err := io.Copy(h, f); err != nil {
		return 0, err
	}
	in, err := decoderInput(f)
	if err != nil {
		return 0, err
	}
	c, _, err := checkImageHeader(in, MaxImagePixels)
	if err != nil {
		return 0, err
	}
	lint.size(c.Width, c.Height)
	return h.Sum64(), nil
}

func listImages(src string, lint *Lint) []string {
	st, err := os.Stat(src)
	if err != nil {
		return nil
	}
	var out []string
	if !st.IsDir() {
		if strings.HasSuffix(src, ".txt") { // a list file
			raw, err := safefile.ReadFile(src, MaxListFile, "a YOLO list file")
			if err != nil {
				lint.add(Problem{Severity: LintError, File: src, Message: "unreadable list file: " + err.Error(), Fix: "list one image path a line in a regular file"})
				return nil
			}
			for _, l := range strings.Split(string(raw), "\n") {
				if l = strings.TrimSpace(l); l != "" {
					if !filepath.IsAbs(l) {
						l = filepath.Join(filepath.Dir(src), l)
					}
					out = append(out, l)
				}
			}
			return out
		}
		return []string{src}
	}
	filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && ImageExts[strings.ToLower(filepath.Ext(p))] {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
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
		cls, err := strconv.Atoi(fields[0])
		if err != nil || cls < 0 {
			at(fmt.Sprintf("class %q is not a class index", fields[0]), "the first number of a line is the class index 0..nc-1")
			continue
		}
		if cls >= nc {
			at(fmt.Sprintf("class id %d ≥ nc (%d)", cls, nc), fmt.Sprintf("use class ids 0..%d, or add the class to names in data.yaml", nc-1))
		}
		if len(fields) != 5 && (len(fields) < 7 || len(fields)%2 == 0) {
			at(fmt.Sprintf("%d numbers: a box line is \"class cx cy w h\"", len(fields)), "write 5 numbers per box (or class + x y pairs for a polygon)")
			continue
		}
		var v []float64
		ok := true
		for _, f := range fields[1:] {
			x, err := strconv.ParseFloat(f, 64)
			if err != nil {
				at(fmt.Sprintf("%q is not a number", f), "coordinates are decimal numbers between 0 and 1")
				ok = false
				break
			}
			v = append(v, x)
		}
		if !ok {
			continue
		}
		out0 := false
		for _, x := range v {
			if !(x >= 0 && x <= 1) {
				out0 = true
			}
		}
		if out0 {
			at("coordinates outside 0..1", "YOLO boxes are normalised by the image size: divide pixels by width and height")
			continue
		}
		if len(fields) == 5 {
			cx, cy, w, h := v[0], v[1], v[2], v[3]
			if w <= 0 || h <= 0 {
				at("a box with zero width or height", "remove the line or fix the box")
			} else if cx-w/2 < -1e-3 || cx+w/2 > 1+1e-3 || cy-h/2 < -1e-3 || cy+h/2 > 1+1e-3 {
				at("the box reaches outside the image", "clip the box to the image")
			}
		}
	}
	return out
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
