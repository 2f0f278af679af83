package trainer

// This file stands in for the engine's detection predictor (branch deta:
// LoadDetector, Detector) so that the command line and the window build
// against its contract; it is deleted at merge.

import (
	"fmt"
	"image"

	"gpuwizard/trainer/detect"
)

// Detector finds objects in images with a trained detector.
type Detector struct {
	classes []string
}

// LoadDetector loads a detector's checkpoint (runs/NAME/best, .../last, or
// a file).
func LoadDetector(path string) (*Detector, error) {
	return nil, fmt.Errorf("%w: %s: this build has no detection predictor yet", ErrConfig, path)
}

// Detect finds the objects in img: boxes in img's own pixels.
func (d *Detector) Detect(img image.Image) ([]detect.Detection, error) {
	return nil, fmt.Errorf("%w: this build has no detection predictor yet", ErrConfig)
}

// Classes are the detector's class names.
func (d *Detector) Classes() []string { return d.classes }
