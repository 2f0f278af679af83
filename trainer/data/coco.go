package data

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"

	"gpuwizard/internal/safefile"
)

// MaxCOCOCategories caps the categories of a COCO file, and the different
// category ids its annotations may name (COCO has 80, LVIS 1,203).
const MaxCOCOCategories = 100_000

// One element of each list of a COCO file, decoded one at a time.
type (
	cocoImage struct {
		ID       int64  `json:"id"`
		FileName string `json:"file_name"`
		Width    int    `json:"width"`
		Height   int    `json:"height"`
	}
	cocoAnnotation struct {
		ID         int64     `json:"id"`
		ImageID    int64     `json:"image_id"`
		CategoryID int64     `json:"category_id"`
		BBox       []float64 `json:"bbox"`
	}
	cocoCategory struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
)

// noID marks an id the JSON does not give.
const noID = math.MinInt64

// cocoSource is a COCO file, read from its start as often as needed.
type cocoSource interface {
	io.ReadSeeker
	io.ReaderAt
}

// cocoLimits cap the lists of a COCO file (MaxCOCOImages, ...).
type cocoLimits struct {
	images, annotations, categories int
}

// LintCOCO checks a COCO JSON file held in memory (see lintCOCO).
func LintCOCO(file string, raw []byte, checkFiles bool) (*Lint, error) {
	return lintCOCO(file, bytes.NewReader(raw), checkFiles, cocoLimits{MaxCOCOImages, MaxCOCOAnnotations, MaxCOCOCategories})
}

// lintCOCOFile lints a COCO file of at most MaxCOCOFile bytes, streamed.
func lintCOCOFile(path string) (*Lint, error) {
	f, st, err := safefile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	defer f.Close()
	if st.Size() > MaxCOCOFile {
		return nil, fmt.Errorf("%w: %s is %s, more than the %s a COCO JSON file may have: %w; check that it is the right file",
			ErrData, path, safefile.Size(st.Size()), safefile.Size(MaxCOCOFile), safefile.ErrTooLarge)
	}
	return lintCOCO(path, f, true, cocoLimits{MaxCOCOImages, MaxCOCOAnnotations, MaxCOCOCategories})
}

// cocoImageInfo is what the lint keeps of an image.
type cocoImageInfo struct {
	w, h      int32
	annotated bool
}

// annotationRef is an annotation whose category is checked once the
// categories are read.
type annotationRef struct {
	index   int
	id, cat int64
}

// cocoLint is the state of a COCO lint: what it keeps per image is its id,
// size and a flag (about 40 bytes); annotations are counted, not kept.
type cocoLint struct {
	file       string
	src        cocoSource
	lint       *Lint
	lim        cocoLimits
	checkFiles bool
	files      *fileIndex

	ids      map[int64]int32 // image id → index
	images   []cocoImageInfo
	cats     map[int64]string
	seenCats bool
	seenImgs bool
	boxes    map[int64]int             // category id → boxes
	refs     map[int64][]annotationRef // category id → its first annotations, while the categories are unknown
	names    map[int]string            // the file names wanted by the last pass (images without annotations)
}

// cocoPass is what a pass over the file reads.
type cocoPass int

const (
	passAll         cocoPass = iota // images, categories, and annotations after the images
	passAnnotations                 // the annotations (that came before the images)
	passNames                       // the file names of the images in names
)

// lintCOCO checks a COCO JSON file: image and category ids, boxes inside
// their image, images present on disk (when checkFiles), images without
// annotations. It streams the file: each list element is decoded on its
// own and counted, each list capped by lim; per image it keeps an id, a
// size and the file name, and annotations are only counted. The
// categories may come after the annotations (as in COCO's own files);
// annotations that come before the images are read in a second pass.
func lintCOCO(file string, src cocoSource, checkFiles bool, lim cocoLimits) (*Lint, error) {
	c := &cocoLint{file: file, src: src, lint: newLint("coco"), lim: lim, checkFiles: checkFiles, files: newFileIndex(filepath.Dir(file)),
		ids: map[int64]int32{}, cats: map[int64]string{}, boxes: map[int64]int{}, refs: map[int64][]annotationRef{}}
	again, err := c.pass(passAll)
	if err == nil && again {
		_, err = c.pass(passAnnotations)
	}
	if err != nil {
		return c.lint, err
	}
	if len(c.images) == 0 || len(c.cats) == 0 {
		return c.lint, fmt.Errorf("%w: %s: a COCO file needs \"images\" and \"categories\" lists", ErrData, file)
	}
	return c.lint, c.finish()
}

// pass reads the top-level object once (see cocoPass). It says whether
// the annotations came before the images and need a pass of their own.
func (c *cocoLint) pass(what cocoPass) (bool, error) {
	if _, err := c.src.Seek(0, io.SeekStart); err != nil {
		return false, fmt.Errorf("%w: %s: %w", ErrData, c.file, err)
	}
	dec := json.NewDecoder(bufio.NewReaderSize(c.src, 64<<10))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false, c.jsonError(dec, -1, err, "a COCO file is a JSON object: {\"images\": [...], \"annotations\": [...], \"categories\": [...]}")
	}
	again := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false, c.jsonError(dec, -1, err, "")
		}
		key, _ := tok.(string)
		switch {
		case key == "images" && what == passAll:
			err = listOf(c, dec, key, c.lim.images, cocoImage{ID: noID}, c.image)
			c.seenImgs = true
		case key == "images" && what == passNames:
			err = listOf(c, dec, key, c.lim.images, cocoImage{}, c.name)
		case key == "categories" && what == passAll:
			err = listOf(c, dec, key, c.lim.categories, cocoCategory{ID: noID}, c.category)
			c.seenCats = true
		case key == "annotations" && (what == passAll && c.seenImgs || what == passAnnotations):
			err = listOf(c, dec, key, c.lim.annotations, cocoAnnotation{ID: noID, ImageID: noID, CategoryID: noID}, c.annotation)
		default:
			again = again || key == "annotations"
			err = c.skip(dec)
		}
		if err != nil {
			return false, err
		}
	}
	return again, nil
}

// listOf reads a list of objects one at a time into copies of fresh (its
// defaults), at most max of them, and hands each to use.
func listOf[T any](c *cocoLint, dec *json.Decoder, name string, max int, fresh T, use func(int, *T) error) error {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return c.jsonError(dec, -1, err, fmt.Sprintf("%q must be a list [...]", name))
	}
	for i := 0; dec.More(); i++ {
		if i == max {
			return fmt.Errorf("%w: %s:%d: more than %d %s (COCO 2017 train has 118,287 images and 860,001 annotations): the file is damaged or not a COCO file, or split the dataset",
				ErrData, c.file, c.lineAt(dec.InputOffset()), max, name)
		}
		start := dec.InputOffset()
		v := fresh
		if err := dec.Decode(&v); err != nil {
			return c.jsonError(dec, start, err, fmt.Sprintf("%s[%d]", name, i))
		}
		if err := use(i, &v); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return c.jsonError(dec, -1, err, "")
}

// skip reads past a value the lint does not use.
func (c *cocoLint) skip(dec *json.Decoder) error {
	start := dec.InputOffset()
	var ignored struct{}
	err := dec.Decode(&ignored)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return nil // a list or a number: read past all the same
	}
	return c.jsonError(dec, start, err, "")
}

// jsonError is the error for a JSON problem, with its line: a syntax error,
// a value of the wrong type in the element at start (what names it:
// "images[3]"), the end of the file, or, without err, a value that is not
// what was expected. start is -1 outside an element.
func (c *cocoLint) jsonError(dec *json.Decoder, start int64, err error, what string) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case err == nil && what == "":
		return nil
	case err == nil:
		return fmt.Errorf("%w: %s:%d: %s", ErrData, c.file, c.lineAt(dec.InputOffset()), what)
	case errors.As(err, &te) && start >= 0:
		if c.byteAt(start) == ',' {
			start++ // Decode counts from after the comma
		}
		line := c.lineAt(start + te.Offset)
		if te.Field == "" {
			return fmt.Errorf("%w: %s:%d: %s must be an object {...}, not a %s", ErrData, c.file, line, what, te.Value)
		}
		return fmt.Errorf("%w: %s:%d: %s: field %q must be %s, not a %s", ErrData, c.file, line, what, te.Field, jsonKind(te.Type.Kind().String()), te.Value)
	case errors.As(err, &se):
		return fmt.Errorf("%w: %s:%d: not valid JSON: %w", ErrData, c.file, c.lineAt(c.syntaxAt(dec.InputOffset())), err)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("%w: %s:%d: the JSON ends early: the file is truncated; export or download it again", ErrData, c.file, c.lineAt(math.MaxInt64))
	}
	return fmt.Errorf("%w: %s: %w", ErrData, c.file, err)
}

// jsonKind names a Go kind as JSON: int64 is a number.
func jsonKind(k string) string {
	switch k {
	case "int", "int64", "int32", "float64":
		return "a number"
	case "string":
		return "a string"
	case "slice":
		return "a list [...]"
	}
	return k
}

// syntaxAt is where the syntax error of the value at from is: a fresh
// decoder counts from there (the stream decoder's offsets of a syntax
// error are not the file's).
func (c *cocoLint) syntaxAt(from int64) int64 {
	var ignored struct{}
	err := json.NewDecoder(io.NewSectionReader(c.src, from, math.MaxInt64-from)).Decode(&ignored)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return from + se.Offset
	}
	return from
}

// byteAt is the file's byte at off (0 past its end).
func (c *cocoLint) byteAt(off int64) byte {
	var b [1]byte
	c.src.ReadAt(b[:], off)
	return b[0]
}

// lineAt is the line of the byte before off (1 + the newlines before it).
func (c *cocoLint) lineAt(off int64) int {
	r := bufio.NewReaderSize(io.NewSectionReader(c.src, 0, off), 64<<10)
	line := 1
	for {
		b, err := r.ReadSlice('\n')
		if len(b) > 0 && b[len(b)-1] == '\n' {
			line++
		}
		if err != nil && err != bufio.ErrBufferFull {
			return line
		}
	}
}

// image checks images[i].
func (c *cocoLint) image(i int, im *cocoImage) error {
	switch _, dup := c.ids[im.ID]; {
	case im.ID == noID:
		c.report(LintError, "give every image its own id", func() string { return fmt.Sprintf("images[%d] has no id", i) })
	case dup:
		c.report(LintError, "give every image its own id", func() string { return fmt.Sprintf("images[%d]: id %d is used twice", i, im.ID) })
	}
	if im.ID != noID {
		c.ids[im.ID] = int32(len(c.images))
	}
	c.images = append(c.images, cocoImageInfo{w: int32(min(max(im.Width, 0), math.MaxInt32)), h: int32(min(max(im.Height, 0), math.MaxInt32))})
	c.lint.Images["all"]++
	if im.Width > 0 && im.Height > 0 {
		c.lint.size(im.Width, im.Height)
	}
	if c.checkFiles {
		c.checkFile(i, im.FileName)
	}
	return nil
}

// report adds a problem (its kind: the severity and the fix, see
// problemKind), writing the message only while that kind is listed: a file
// with millions of the same problem costs a count each.
func (c *cocoLint) report(severity, fix string, msg func() string) {
	if kind := problemKind(severity, fix); c.lint.full(kind) {
		c.lint.drop(kind, 1)
		return
	}
	c.lint.add(Problem{Severity: severity, File: c.file, Message: msg(), Fix: fix})
}

// name keeps the file name of images[i] when it is wanted.
func (c *cocoLint) name(i int, im *cocoImage) error {
	if _, ok := c.names[i]; ok {
		c.names[i] = im.FileName
	}
	return nil
}

// checkFile warns about an image file that is not beside the JSON (nor in
// images/ or ../images/).
func (c *cocoLint) checkFile(i int, name string) {
	if name == "" {
		c.report(LintWarning, "write the image's file name in file_name", func() string { return fmt.Sprintf("images[%d] has no file_name", i) })
		return
	}
	for _, base := range []string{"", "images", filepath.Join("..", "images")} {
		if c.files.has(filepath.Join(base, name)) {
			return
		}
	}
	c.report(LintWarning, "put the images beside the JSON file or in an images/ folder", func() string {
		return fmt.Sprintf("images[%d]: %s is not next to the JSON (nor in images/)", i, name)
	})
}

// category reads categories[i].
func (c *cocoLint) category(i int, cat *cocoCategory) error {
	if cat.ID == noID {
		c.report(LintError, "give every category its own id", func() string { return fmt.Sprintf("categories[%d] has no id", i) })
		return nil
	}
	c.cats[cat.ID] = cat.Name
	c.lint.Classes = append(c.lint.Classes, cat.Name)
	return nil
}

// annotation reads annotations[i]: its image, box and category. When the
// categories are not read yet, its category is counted and checked at the
// end.
func (c *cocoLint) annotation(i int, a *cocoAnnotation) error {
	where := func() string { return fmt.Sprintf("annotations[%d] (id %d)", i, a.ID) }
	idx, ok := c.ids[a.ImageID]
	if !ok {
		c.report(LintError, "fix the image_id or add the image", func() string { return where() + fmt.Sprintf(": image_id %d is not in images", a.ImageID) })
		return nil
	}
	if c.seenCats {
		if _, known := c.cats[a.CategoryID]; !known {
			c.report(LintError, "fix the category_id or add the category", func() string {
				return where() + fmt.Sprintf(": category_id %d is not in categories", a.CategoryID)
			})
			return nil
		}
	} else if err := c.deferCategory(i, a); err != nil {
		return err
	}
	c.boxes[a.CategoryID]++
	im := &c.images[idx]
	im.annotated = true
	if len(a.BBox) != 4 {
		c.report(LintError, "write four numbers in pixels", func() string { return where() + ": bbox must be [x, y, width, height]" })
		return nil
	}
	x, y, w, h := a.BBox[0], a.BBox[1], a.BBox[2], a.BBox[3]
	switch {
	case !(w > 0) || !(h > 0):
		c.report(LintError, "remove the annotation or fix the box", func() string { return where() + ": a box with zero or negative size" })
	case x < -1 || y < -1 || (im.w > 0 && x+w > float64(im.w)+1) || (im.h > 0 && y+h > float64(im.h)+1):
		c.report(LintError, "clip the box to the image", func() string {
			return where() + fmt.Sprintf(": box %v reaches outside its %dx%d image", a.BBox, im.w, im.h)
		})
	}
	return nil
}

// deferCategory keeps the first annotations of each category id until the
// categories are read; at most lim.categories different ids.
func (c *cocoLint) deferCategory(i int, a *cocoAnnotation) error {
	refs, ok := c.refs[a.CategoryID]
	if !ok && len(c.refs) >= c.lim.categories {
		return fmt.Errorf("%w: %s: annotations[%d]: the annotations name more than %d different category ids: the file is damaged or not a COCO file",
			ErrData, c.file, i, c.lim.categories)
	}
	if len(refs) < maxPerKind {
		c.refs[a.CategoryID] = append(refs, annotationRef{i, a.ID, a.CategoryID})
	}
	return nil
}

// finish counts the boxes per category, reports the annotations whose
// category does not exist and the images without annotations (their file
// names read again, for the ones listed).
func (c *cocoLint) finish() error {
	c.lint.Counts["all"] = map[string]int{}
	var unknown []annotationRef
	dropped := 0
	for id, n := range c.boxes {
		if name, ok := c.cats[id]; ok {
			c.lint.Counts["all"][name] += n
			continue
		}
		unknown = append(unknown, c.refs[id]...)
		dropped += n - len(c.refs[id])
	}
	slices.SortFunc(unknown, func(a, b annotationRef) int { return cmp.Compare(a.index, b.index) })
	for _, r := range unknown {
		c.lint.add(Problem{Severity: LintError, File: c.file, Message: fmt.Sprintf("annotations[%d] (id %d): category_id %d is not in categories", r.index, r.id, r.cat),
			Fix: "fix the category_id or add the category"})
	}
	if dropped > 0 {
		c.lint.drop(problemKind(LintError, "fix the category_id or add the category"), dropped)
	}
	kind := problemKind(LintWarning, "annotate it, or keep it knowingly as a background image")
	var bare []int
	for i, im := range c.images {
		if !im.annotated {
			bare = append(bare, i)
		}
	}
	listed := min(len(bare), max(0, maxPerKind-c.lint.listed[kind])) // the rest are counted
	if listed > 0 {
		c.names = map[int]string{}
		for _, i := range bare[:listed] {
			c.names[i] = ""
		}
		if _, err := c.pass(passNames); err != nil {
			return err
		}
	}
	for _, i := range bare[:listed] {
		c.lint.add(Problem{Severity: LintWarning, File: c.file, Message: fmt.Sprintf("images[%d] (%s) has no annotations", i, c.names[i]),
			Fix: "annotate it, or keep it knowingly as a background image"})
	}
	if len(bare) > listed {
		c.lint.drop(kind, len(bare)-listed)
	}
	c.lint.imbalance(c.file, "all", "boxes")
	return nil
}

// maxListedFolders caps the folders a fileIndex lists; past it, it looks
// each file up on its own.
const maxListedFolders = 10_000

// fileIndex says whether files exist under a folder, listing each folder
// once instead of looking each file up: a COCO file names 100,000s of
// images, often in one folder.
type fileIndex struct {
	root    string
	folders map[string]map[string]fs.FileMode // folder → its entries; nil: none
}

func newFileIndex(root string) *fileIndex {
	return &fileIndex{root: root, folders: map[string]map[string]fs.FileMode{}}
}

// has says whether rel (relative to the root) is a regular file, or a
// link to one.
func (x *fileIndex) has(rel string) bool {
	p := filepath.Join(x.root, rel)
	dir, name := filepath.Split(p)
	entries, listed := x.folders[dir]
	if !listed {
		if len(x.folders) >= maxListedFolders {
			st, err := os.Stat(p)
			return err == nil && st.Mode().IsRegular()
		}
		entries = listFolder(dir)
		x.folders[dir] = entries
	}
	mode, ok := entries[name]
	switch {
	case !ok:
		return false
	case mode&fs.ModeSymlink != 0:
		st, err := os.Stat(p)
		return err == nil && st.Mode().IsRegular()
	}
	return mode.IsRegular()
}

// listFolder is a folder's entries and their types (nil when it cannot be
// read).
func listFolder(dir string) map[string]fs.FileMode {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	m := make(map[string]fs.FileMode, len(ents))
	for _, e := range ents {
		m[e.Name()] = e.Type()
	}
	return m
}
