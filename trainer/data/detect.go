package data

import (
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
		return lintCOCOFile(path)
	}
	return nil, fmt.Errorf("%w: %s is a %s dataset, not a detection dataset", ErrData, path, format)
}
