package data

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

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
		raw, err := safefile.ReadFile(path, MaxCOCOFile, "a COCO JSON file")
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrData, err)
		}
		return LintCOCO(path, raw, true)
	}
	return nil, fmt.Errorf("%w: %s is a %s dataset, not a detection dataset", ErrData, path, format)
}

// coco is the part of a COCO JSON file the lint reads.
type coco struct {
	Images []struct {
		ID       int64  `json:"id"`
		FileName string `json:"file_name"`
		Width    int    `json:"width"`
		Height   int    `json:"height"`
	} `json:"images"`
	Annotations []struct {
		ID         int64     `json:"id"`
		ImageID    int64     `json:"image_id"`
		CategoryID int64     `json:"category_id"`
		BBox       []float64 `json:"bbox"`
	} `json:"annotations"`
	Categories []struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	} `json:"categories"`
}

// LintCOCO checks a COCO JSON file: image and category ids, boxes inside
// their image, images present on disk (when checkFiles), images without
// annotations.
func LintCOCO(file string, raw []byte, checkFiles bool) (*Lint, error) {
	lint := newLint("coco")
	var c coco
	if err := json.Unmarshal(raw, &c); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line := 1 + bytes.Count(raw[:min(int(se.Offset), len(raw))], []byte("\n"))
			return lint, fmt.Errorf("%w: %s:%d: not valid JSON: %w", ErrData, file, line, err)
		case errors.As(err, &te):
			line := 1 + bytes.Count(raw[:min(int(te.Offset), len(raw))], []byte("\n"))
			return lint, fmt.Errorf("%w: %s:%d: field %q must be %s", ErrData, file, line, te.Field, te.Type)
		}
		return lint, fmt.Errorf("%w: %s: %w", ErrData, file, err)
	}
	if len(c.Images) == 0 || len(c.Categories) == 0 {
		return lint, fmt.Errorf("%w: %s: a COCO file needs \"images\" and \"categories\" lists", ErrData, file)
	}
	cats := map[int64]string{}
	for _, cat := range c.Categories {
		cats[cat.ID] = cat.Name
		lint.Classes = append(lint.Classes, cat.Name)
	}
	type img struct{ w, h int }
	images := map[int64]img{}
	annotated := map[int64]bool{}
	dir := filepath.Dir(file)
	lint.Images["all"] = len(c.Images)
	lint.Counts["all"] = map[string]int{}
	for i, im := range c.Images {
		if _, dup := images[im.ID]; dup {
			lint.add(Problem{Severity: LintError, File: file, Message: fmt.Sprintf("images[%d]: id %d is used twice", i, im.ID), Fix: "give every image its own id"})
		}
		images[im.ID] = img{im.Width, im.Height}
		if im.Width > 0 && im.Height > 0 {
			lint.size(im.Width, im.Height)
		}
		if checkFiles {
			found := false
			for _, cand := range []string{filepath.Join(dir, im.FileName), filepath.Join(dir, "images", im.FileName), filepath.Join(dir, "..", "images", im.FileName)} {
				if _, err := os.Stat(cand); err == nil {
					found = true
					break
				}
			}
			if !found {
				lint.add(Problem{Severity: LintWarning, File: file, Message: fmt.Sprintf("images[%d]: %s is not next to the JSON (nor in images/)", i, im.FileName), Fix: "put the images beside the JSON file or in an images/ folder"})
			}
		}
	}
	for i, a := range c.Annotations {
		where := fmt.Sprintf("annotations[%d] (id %d)", i, a.ID)
		im, ok := images[a.ImageID]
		if !ok {
			lint.add(Problem{Severity: LintError, File: file, Message: where + fmt.Sprintf(": image_id %d is not in images", a.ImageID), Fix: "fix the image_id or add the image"})
			continue
		}
		name, ok := cats[a.CategoryID]
		if !ok {
			lint.add(Problem{Severity: LintError, File: file, Message: where + fmt.Sprintf(": category_id %d is not in categories", a.CategoryID), Fix: "fix the category_id or add the category"})
			continue
		}
		annotated[a.ImageID] = true
		lint.count("all", name)
		if len(a.BBox) != 4 {
			lint.add(Problem{Severity: LintError, File: file, Message: where + ": bbox must be [x, y, width, height]", Fix: "write four numbers in pixels"})
			continue
		}
		x, y, w, h := a.BBox[0], a.BBox[1], a.BBox[2], a.BBox[3]
		switch {
		case !(w > 0) || !(h > 0):
			lint.add(Problem{Severity: LintError, File: file, Message: where + ": a box with zero or negative size", Fix: "remove the annotation or fix the box"})
		case x < -1 || y < -1 || (im.w > 0 && x+w > float64(im.w)+1) || (im.h > 0 && y+h > float64(im.h)+1):
			lint.add(Problem{Severity: LintError, File: file, Message: where + fmt.Sprintf(": box %v reaches outside its %dx%d image", a.BBox, im.w, im.h), Fix: "clip the box to the image"})
		}
	}
	for i, im := range c.Images {
		if !annotated[im.ID] {
			lint.add(Problem{Severity: LintWarning, File: file, Message: fmt.Sprintf("images[%d] (%s) has no annotations", i, im.FileName), Fix: "annotate it, or keep it knowingly as a background image"})
		}
	}
	lint.imbalance(file, "all", "boxes")
	return lint, nil
}
