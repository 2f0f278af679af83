package trainer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gpuwizard/trainer/detect"
	"gpuwizard/trainer/model"
)

// Tasks: what a run trains.
const (
	TaskClassify = "classify"
	TaskDetect   = "detect"
	TaskAuto     = "auto"
)

// Detector canvas sizes: the default, and the built-in set's.
const (
	DefaultDetectSize = 320
	BuiltinDetectSize = 128
)

// DefaultDetectBatch is a detection run's batch when none is set (as
// Ultralytics'): the small detectors learn far faster per epoch in
// batches of 16 than of 64 (built-in set, det-n, 128 px: mAP50 0.45
// after 2 epochs against 0.24 after 3).
const DefaultDetectBatch = 16

// IsDetectData says whether path names detection data: the built-in
// detection set, a YOLO data.yaml, or a folder holding one.
func IsDetectData(path string) bool {
	if path == detect.Builtin {
		return true
	}
	if ext := strings.ToLower(filepath.Ext(path)); ext == ".yaml" || ext == ".yml" {
		return true
	}
	if st, err := os.Stat(filepath.Join(path, "data.yaml")); err == nil && st.Mode().IsRegular() {
		return true
	}
	return false
}

// IsDetect says whether the run trains a detector: task detect, a
// detector model, or task auto on detection data.
func (c Config) IsDetect() bool {
	switch c.Task {
	case TaskDetect:
		return true
	case TaskClassify:
		return false
	}
	return contains(model.DetectKinds, c.Model) || IsDetectData(c.Data)
}

// validateTask checks the task and that the model and image size suit it.
func (c Config) validateTask(bad func(field, format string, args ...any) error) error {
	switch {
	case c.Task != "" && c.Task != TaskAuto && c.Task != TaskClassify && c.Task != TaskDetect:
		return bad("task", "%q is not auto, classify or detect", c.Task)
	case c.IsDetect() && c.Model != "auto" && !contains(model.DetectKinds, c.Model):
		return bad("model", "%q classifies images; a detection run takes auto, det-n or det-s", c.Model)
	case !c.IsDetect() && contains(model.DetectKinds, c.Model):
		return bad("model", "%q is a detector; a classification run takes auto, mlp, lenet or cnn (or set task detect and give a data.yaml)", c.Model)
	case c.IsDetect() && c.ImageSize != 0 && detect.CheckSize(c.ImageSize) != nil:
		return bad("image_size", "%v", detect.CheckSize(c.ImageSize))
	}
	return nil
}

// DetectSize is the canvas a detection run trains at.
func (c Config) DetectSize() int {
	switch {
	case c.ImageSize != 0:
		return c.ImageSize
	case c.Data == detect.Builtin:
		return BuiltinDetectSize
	}
	return DefaultDetectSize
}

// detectSpec is the detector a run with cfg builds for ds.
func detectSpec(cfg Config, ds *detect.Dataset) (model.Spec, error) {
	kind := cfg.Model
	if kind == "auto" || kind == "" {
		kind = model.DetN
	}
	s := model.Spec{Kind: kind, Channels: ds.Channels, Height: ds.Size, Width: ds.Size, Classes: len(ds.Classes)}
	if err := s.Validate(); err != nil {
		return s, fmt.Errorf("trainer: detector for %s (%d px, %d channels): %w", ds.Root, ds.Size, ds.Channels, err)
	}
	return s, nil
}
