package trainer

import (
	"context"
	"fmt"
	"image"
	"math"
	"sort"
	"sync"

	"golang.org/x/image/draw"

	"gpuwizard/trainer/data"
	"gpuwizard/trainer/exec"
)

// Predictor classifies images with a trained checkpoint: a session at
// batch 1 on the CPU that runs the evaluation program on the executor, the
// numeric path of validation. It is safe for use by several goroutines
// (they take turns).
type Predictor struct {
	ck    *Checkpoint
	mnist bool // trained on MNIST-style light-on-dark digits
	mu    sync.Mutex
	s     *session
}

// openInference opens a CPU session of batch 1 holding ck's weights, for
// predictions. SGD keeps one optimiser buffer (Adam two): it never steps.
func openInference(ck *Checkpoint) (*session, error) {
	s, err := openSession(context.Background(), sessionOptions{spec: ck.Spec, batch: 1, seed: 1, optim: exec.Optim{Kind: "sgd"}, device: "cpu"})
	if err != nil {
		return nil, err
	}
	if err := s.load(ck, false); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// LoadPredictor loads a checkpoint (runs/NAME/best, .../last, or a file).
func LoadPredictor(path string) (*Predictor, error) {
	ck, err := LoadCheckpoint(path)
	if err != nil {
		return nil, err
	}
	if ck.Spec.IsDetector() {
		return nil, fmt.Errorf("%w: %s holds a detector (%s), which finds boxes rather than classifying the whole image: load it with LoadDetector", ErrCheckpoint, path, ck.Spec.Kind)
	}
	s, err := openInference(ck)
	if err != nil {
		return nil, err
	}
	d := ck.Config.Data
	return &Predictor{ck: ck, s: s, mnist: ck.Spec.Channels == 1 && ck.Spec.Height == 28 && (d == "builtin" || d == "")}, nil
}

// Close releases the predictor's session; it cannot predict afterwards.
func (p *Predictor) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.s.close()
}

// Classes are the model's class names.
func (p *Predictor) Classes() []string { return p.ck.Classes }

// Warning is what to tell the user about the checkpoint ("" when nothing).
func (p *Predictor) Warning() string { return p.ck.Warning() }

// PredictFile classifies one image file; invert is "auto", "yes" or "no"
// (grey models: make a dark-on-light image light-on-dark, as MNIST is).
// Only regular files are read, and an image whose header declares more
// than data.MaxImagePixels is refused before it is decoded.
func (p *Predictor) PredictFile(path, invert string) ([]Prediction, error) {
	img, err := data.DecodeImageFile(path)
	if err != nil {
		return nil, err
	}
	return p.PredictImage(img, invert)
}

// PredictImage classifies a decoded image: every class, most likely
// first.
func (p *Predictor) PredictImage(img image.Image, invert string) ([]Prediction, error) {
	probs, err := p.Probabilities(p.Input(img, invert))
	if err != nil {
		return nil, err
	}
	out := make([]Prediction, len(probs))
	for i, pr := range probs {
		out[i] = Prediction{Index: i, Class: p.ck.Classes[i], Prob: pr}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Prob > out[j].Prob })
	return out, nil
}

// Input is what the model is fed for img: the image resized to the
// model's input size (bilinear), as float32 channel planes (NCHW, one
// image) scaled to [0, 1]; grey models take the luma, inverted when
// invert says so (see PredictFile). An exported ONNX model takes the
// same input.
func (p *Predictor) Input(img image.Image, invert string) []float32 {
	s := p.ck.Spec
	dst := image.NewRGBA(image.Rect(0, 0, s.Width, s.Height))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), img, img.Bounds(), draw.Src, nil)
	plane := s.Width * s.Height
	x := make([]float32, s.Channels*plane)
	var border, n float64
	for k := 0; k < plane; k++ {
		r, g, b := float32(dst.Pix[4*k]), float32(dst.Pix[4*k+1]), float32(dst.Pix[4*k+2])
		if s.Channels == 1 {
			x[k] = (0.299*r + 0.587*g + 0.114*b) / 255
			if px, py := k%s.Width, k/s.Width; px == 0 || py == 0 || px == s.Width-1 || py == s.Height-1 {
				border += float64(x[k])
				n++
			}
		} else {
			x[k], x[plane+k], x[2*plane+k] = r/255, g/255, b/255
		}
	}
	if s.Channels == 1 && (invert == "yes" || (invert == "auto" && p.mnist && border/n > 0.5)) {
		for k := range x {
			x[k] = 1 - x[k]
		}
	}
	return x
}

// Probabilities runs the model on one input (Input's form) and returns
// the probability of each class, in class order (the softmax of the
// logits, in float64).
func (p *Predictor) Probabilities(x []float32) ([]float64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.s.be == nil {
		return nil, fmt.Errorf("trainer: the predictor is closed")
	}
	logits, err := p.s.predict(x)
	if err != nil {
		return nil, fmt.Errorf("trainer: predicting: %w", err)
	}
	mx := logits[0]
	for _, v := range logits {
		mx = max(mx, v)
	}
	var sum float64
	probs := make([]float64, len(logits))
	for i, v := range logits {
		probs[i] = math.Exp(float64(v - mx))
		sum += probs[i]
	}
	for i := range probs {
		probs[i] /= sum
	}
	return probs, nil
}
