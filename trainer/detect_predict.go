package trainer

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"sync"

	"golang.org/x/image/draw"

	"gpuwizard/trainer/data"
	"gpuwizard/trainer/detect"
)

// LetterboxGrey is the padding of a letterboxed canvas (Ultralytics').
const LetterboxGrey = 114

// Detector finds objects in images with a trained detector's checkpoint:
// a session at batch 1 on the CPU running the evaluation program (the
// numeric path of validation), then decoding and NMS. Boxes come back in
// the image's own pixels. It is safe for use by several goroutines (they
// take turns).
type Detector struct {
	ck *Checkpoint
	g  detect.Grid
	mu sync.Mutex
	s  *session
	// Conf and IoU are the score threshold and NMS overlap of Detect
	// (detect.PredictConf and PredictIoU unless changed).
	Conf, IoU float32
}

// LoadDetector loads a detector's checkpoint (runs/NAME/best, .../last,
// or a file).
func LoadDetector(path string) (*Detector, error) {
	ck, err := LoadCheckpoint(path)
	if err != nil {
		return nil, err
	}
	if !ck.Spec.IsDetector() {
		return nil, fmt.Errorf("%w: %s holds a %s, an image classifier, not a detector: predict classes with it instead", ErrCheckpoint, path, ck.Spec.Kind)
	}
	s, err := openInference(ck)
	if err != nil {
		return nil, err
	}
	h, w := ck.Spec.Grid()
	return &Detector{ck: ck, s: s, g: detect.Grid{H: h, W: w, Stride: ck.Spec.Height / h}, Conf: detect.PredictConf, IoU: detect.PredictIoU}, nil
}

// Close releases the detector's session.
func (d *Detector) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.s.close()
}

// Classes are the model's class names.
func (d *Detector) Classes() []string { return d.ck.Classes }

// Size is the canvas side the model takes, in pixels.
func (d *Detector) Size() int { return d.ck.Spec.Height }

// Warning is what to tell the user about the checkpoint ("" when nothing).
func (d *Detector) Warning() string { return d.ck.Warning() }

// DetectFile finds objects in one image file (only regular files; an
// image whose header declares more than data.MaxImagePixels is refused
// before it is decoded).
func (d *Detector) DetectFile(path string) ([]detect.Detection, error) {
	img, err := data.DecodeImageFile(path)
	if err != nil {
		return nil, err
	}
	return d.Detect(img)
}

// Detect finds objects in img: boxes in img's own pixels, best first.
func (d *Detector) Detect(img image.Image) ([]detect.Detection, error) {
	x, lb := d.Input(img)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.s.be == nil {
		return nil, fmt.Errorf("trainer: the detector is closed")
	}
	head, err := d.s.predict(x)
	if err != nil {
		return nil, fmt.Errorf("trainer: detecting: %w", err)
	}
	dets := lb.OnImage(detect.Detections(head, d.ck.Spec.Classes, d.g, d.Size(), d.Conf, d.IoU, detect.MaxPerImage))
	for i := range dets {
		dets[i].Box = lb.ToOriginal(dets[i].Box)
	}
	return dets, nil
}

// Head runs the model on one input (Input's form) and returns its raw
// head ((5+classes)×H/8×W/8, what an exported ONNX detector outputs).
func (d *Detector) Head(x []float32) ([]float32, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.s.be == nil {
		return nil, fmt.Errorf("trainer: the detector is closed")
	}
	head, err := d.s.predict(x)
	if err != nil {
		return nil, fmt.Errorf("trainer: detecting: %w", err)
	}
	return append([]float32(nil), head...), nil
}

// Input is what the model is fed for img: img letterboxed onto the
// model's square canvas (scaled to fit, aspect kept, centred, padded with
// LetterboxGrey), as float32 planes scaled to [0, 1] (grey models: the
// luma), and how the canvas maps back to img. An exported ONNX detector
// takes the same input.
func (d *Detector) Input(img image.Image) ([]float32, detect.Letterbox) {
	s := d.ck.Spec
	canvas, lb := letterbox(img, s.Height)
	plane := s.Height * s.Width
	x := make([]float32, s.Channels*plane)
	for k := 0; k < plane; k++ {
		r, g, b := float32(canvas.Pix[4*k]), float32(canvas.Pix[4*k+1]), float32(canvas.Pix[4*k+2])
		if s.Channels == 1 {
			x[k] = (0.299*r + 0.587*g + 0.114*b) / 255
		} else {
			x[k], x[plane+k], x[2*plane+k] = r/255, g/255, b/255
		}
	}
	return x, lb
}

// letterbox scales img to fit a size×size canvas, centred on grey.
func letterbox(img image.Image, size int) (*image.RGBA, detect.Letterbox) {
	b := img.Bounds()
	w, h := max(b.Dx(), 1), max(b.Dy(), 1)
	scale := min(float64(size)/float64(w), float64(size)/float64(h))
	nw, nh := max(int(math.Round(float64(w)*scale)), 1), max(int(math.Round(float64(h)*scale)), 1)
	px, py := (size-nw)/2, (size-nh)/2
	dst := image.NewRGBA(image.Rect(0, 0, size, size))
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.RGBA{LetterboxGrey, LetterboxGrey, LetterboxGrey, 255}), image.Point{}, draw.Src)
	draw.ApproxBiLinear.Scale(dst, image.Rect(px, py, px+nw, py+nh), img, b, draw.Src, nil)
	return dst, detect.Letterbox{Scale: float32(nw) / float32(w), PadX: float32(px), PadY: float32(py), OrigW: w, OrigH: h}
}
