package data

import (
	"fmt"
)

// LintDetection loads, lints and summarises a detection dataset: a YOLO
// data.yaml (or the folder holding it) or a COCO JSON file. A YOLO set is
// trained on through trainer/detect (its loader runs this lint first); a
// COCO file is linted only.
func LintDetection(path string) (*Lint, error) {
	format, err := Detect(path)
	if err != nil {
		return nil, err
	}
	switch format {
	case "yolo":
		_, lint, err := LintYOLO(path)
		return lint, err
	case "coco":
		return lintCOCOFile(path)
	}
	return nil, fmt.Errorf("%w: %s is a %s dataset, not a detection dataset", ErrData, path, format)
}
