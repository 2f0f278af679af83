// Package detect is object detection's vocabulary and its host-side
// parts: boxes, labelled and predicted objects, a detection dataset
// letterboxed to the model's size, and the metrics a detector is judged
// by (mAP50, mAP50-95, precision and recall at the best-F1 threshold,
// per-class AP). The network itself is a gorgonia graph like the
// classifiers' (trainer/model), trained by the trainer's session; this
// package knows nothing of devices. It imports trainer/data (for the YOLO
// data.yaml parser and the lint) and nothing else of gpuwizard's.
package detect

import "gpuwizard/trainer/data"

// Box is an axis-aligned box in pixels: (X1, Y1) its top-left corner,
// (X2, Y2) its bottom-right, X2 > X1 and Y2 > Y1 for a real box. Whose
// pixels (the original image's, or the letterboxed canvas's) is said
// where a Box is used.
type Box struct {
	X1, Y1, X2, Y2 float32
}

// Object is a labelled box: the ground truth.
type Object struct {
	Class int // index into the dataset's Classes
	Box   Box
}

// Detection is a predicted box: its class, its score (0..1: objectness
// times the class probability) and the box.
type Detection struct {
	Class int
	Score float32
	Box   Box
}

// Letterbox maps between an original image and the square canvas it was
// scaled into, aspect kept, centred, padded with grey: a canvas pixel is
// original×Scale + Pad.
type Letterbox struct {
	Scale        float32
	PadX, PadY   float32
	OrigW, OrigH int
}

// ToOriginal maps a box on the canvas to the original image's pixels,
// clipped to the image.
func (l Letterbox) ToOriginal(b Box) Box {
	clip := func(v float32, hi int) float32 { return min(max(v, 0), float32(hi)) }
	return Box{
		X1: clip((b.X1-l.PadX)/l.Scale, l.OrigW), Y1: clip((b.Y1-l.PadY)/l.Scale, l.OrigH),
		X2: clip((b.X2-l.PadX)/l.Scale, l.OrigW), Y2: clip((b.Y2-l.PadY)/l.Scale, l.OrigH),
	}
}

// Shows says whether a box on the canvas is centred on the image, not on
// the grey padding around it: a box centred on the padding frames nothing
// of the image (a detector that never saw padding while training may
// still fire on its edge). A zero Letterbox shows everything.
func (l Letterbox) Shows(b Box) bool {
	if !(l.Scale > 0) {
		return true
	}
	cx, cy := ((b.X1+b.X2)/2-l.PadX)/l.Scale, ((b.Y1+b.Y2)/2-l.PadY)/l.Scale
	return cx >= 0 && cy >= 0 && cx < float32(l.OrigW) && cy < float32(l.OrigH)
}

// OnImage keeps, in order and in place, the detections (boxes on the
// canvas) that the image Shows.
func (l Letterbox) OnImage(dets []Detection) []Detection {
	out := dets[:0]
	for _, d := range dets {
		if l.Shows(d.Box) {
			out = append(out, d)
		}
	}
	return out
}

// ToCanvas maps a box in the original image's pixels to the canvas.
func (l Letterbox) ToCanvas(b Box) Box {
	return Box{X1: b.X1*l.Scale + l.PadX, Y1: b.Y1*l.Scale + l.PadY, X2: b.X2*l.Scale + l.PadX, Y2: b.Y2*l.Scale + l.PadY}
}

// Image is one image of a split: its pixels letterboxed to the dataset's
// Size (planar C×Size×Size, 8 bits, in Split.Pixels at Index), its objects
// on the canvas, and how the canvas maps back to the file.
type Image struct {
	Path      string
	Index     int // the image's place in Split.Pixels
	Objects   []Object
	Letterbox Letterbox
	// NoFlip says that a mirrored copy would show something else (a
	// digit): Augment never flips it.
	NoFlip bool
}

// Split is one split of a detection dataset: the images' letterboxed
// pixels in one array (image i at i×C×Size×Size), and each image's record.
type Split struct {
	Pixels []uint8
	Images []Image
}

// Len is the number of images.
func (s *Split) Len() int {
	if s == nil {
		return 0
	}
	return len(s.Images)
}

// Dataset is a detection dataset ready to train on: a YOLO data.yaml (or
// the built-in one) loaded, linted and letterboxed to Size×Size.
type Dataset struct {
	Name, Root string
	Format     string // "yolo" or "builtin-detect"
	Classes    []string
	Size       int // the square canvas side the model takes, in pixels
	Channels   int // 3 (colour) or 1 (grey)
	Train, Val *Split
	Lint       *data.Lint
}

// ClassAP is one class's scores on a split.
type ClassAP struct {
	Class     string  `json:"class"`
	Objects   int     `json:"objects"` // ground-truth boxes of the class
	AP50      float64 `json:"ap50"`
	AP5095    float64 `json:"ap50_95"`
	Precision float64 `json:"precision"` // at the best-F1 threshold
	Recall    float64 `json:"recall"`
}

// Metrics are a detector's scores on a split, computed like Ultralytics'
// val (and pycocotools: 101-point interpolated AP, IoU thresholds
// 0.50:0.05:0.95, mean over the classes that have objects).
type Metrics struct {
	Split     string    `json:"split"`
	Images    int       `json:"images"`
	Objects   int       `json:"objects"`
	MAP50     float64   `json:"map50"`
	MAP5095   float64   `json:"map50_95"`
	Precision float64   `json:"precision"` // mean over classes, at the best-F1 threshold
	Recall    float64   `json:"recall"`
	F1        float64   `json:"f1"`
	Threshold float64   `json:"threshold"` // the score threshold of the best F1
	PerClass  []ClassAP `json:"per_class"`
}
