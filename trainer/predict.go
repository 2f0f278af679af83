package trainer

import (
	"fmt"
	"image"
	"math"
	"sort"

	"golang.org/x/image/draw"

	"gpuwizard/trainer/data"
	"gpuwizard/trainer/model"
)

// Prediction is one class and its probability.
type Prediction struct {
	Class string
	Prob  float64
}

// Predictor classifies images with a trained checkpoint.
type Predictor struct {
	ck    *Checkpoint
	net   *model.Net
	mnist bool // trained on MNIST-style light-on-dark digits
}

// LoadPredictor loads a checkpoint (runs/NAME/best, .../last, or a file).
func LoadPredictor(path string) (*Predictor, error) {
	ck, err := LoadCheckpoint(path)
	if err != nil {
		return nil, err
	}
	net, err := model.Build(ck.Spec, 1, 1)
	if err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	if err := ck.restore(net); err != nil {
		return nil, err
	}
	d := ck.Config.Data
	return &Predictor{ck: ck, net: net, mnist: ck.Spec.Channels == 1 && ck.Spec.Height == 28 && (d == "builtin" || d == "")}, nil
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

// PredictImage classifies a decoded image.
func (p *Predictor) PredictImage(img image.Image, invert string) ([]Prediction, error) {
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
	logits, err := p.net.Predict(x)
	if err != nil {
		return nil, err
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
	out := make([]Prediction, len(logits))
	for i := range probs {
		out[i] = Prediction{Class: p.ck.Classes[i], Prob: probs[i] / sum}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Prob > out[j].Prob })
	return out, nil
}
