package model

// Layer is one layer of a model, in order from the image to the logits:
// Build makes each into gorgonia ops, and an export (trainer/onnx) writes
// each as the matching ONNX operator, so the two cannot disagree on the
// architecture. Parameters are named Name+".w" and Name+".b" (convolution
// and dense), Name+".gamma" and Name+".beta" (batch norm), created in
// layer order.
type Layer struct {
	Op      string // one of the Layer* kinds
	Name    string // the parameters' prefix
	In, Out int    // channels (convolution, batch norm) or features (dense)
	K, Pad  int    // a convolution's square kernel side and zero padding
	Stride  int    // a convolution's stride (0: 1)
	Bias    bool   // a convolution with a bias (none when a batch norm follows)
}

// Layer kinds.
const (
	LayerConv          = "conv"      // convolution (stride Stride): weights Out×In×K×K, bias 1×Out×1×1
	LayerBatchNorm     = "batchnorm" // batch normalisation with running statistics, then ·gamma + beta (1×C×1×1)
	LayerReLU          = "relu"
	LayerSiLU          = "silu"    // x·σ(x)
	LayerMaxPool       = "maxpool" // 2×2 windows, stride 2
	LayerFlatten       = "flatten" // N×… to N×(the rest)
	LayerDense         = "dense"   // x·W + b: weights In×Out, bias 1×Out
	LayerGlobalAvgPool = "avgpool" // the mean of each channel's plane: N×C×H×W to N×C
)

// BatchNormEpsilon is what batch normalisation adds to the variance.
const BatchNormEpsilon = 1e-5

// Layers lists the layers of the network s describes (s valid).
func (s Spec) Layers() []Layer {
	if s.IsDetector() {
		return s.detectorLayers()
	}
	dense := func(name string, in, out int) Layer { return Layer{Op: LayerDense, Name: name, In: in, Out: out} }
	relu, pool := Layer{Op: LayerReLU}, Layer{Op: LayerMaxPool}
	switch s.Kind {
	case MLP:
		hidden := s.Hidden
		if hidden == 0 {
			hidden = 256
		}
		in := s.Channels * s.Height * s.Width
		return []Layer{{Op: LayerFlatten}, dense("fc1", in, hidden), relu, dense("fc2", hidden, s.Classes)}
	case LeNet:
		return []Layer{
			{Op: LayerConv, Name: "conv1", In: s.Channels, Out: 6, K: 5, Pad: 2, Bias: true}, relu, pool,
			{Op: LayerConv, Name: "conv2", In: 6, Out: 16, K: 5, Bias: true}, relu, pool,
			{Op: LayerFlatten}, dense("fc3", 400, 120), relu, dense("fc4", 120, 84), relu, dense("fc5", 84, s.Classes),
		}
	}
	// CNN: conv-batchnorm-relu blocks, pooled after the second and third.
	var out []Layer
	in := s.Channels
	for i, w := range []int{32, 32, 64, 128} {
		name := "conv" + string(rune('1'+i))
		out = append(out, Layer{Op: LayerConv, Name: name, In: in, Out: w, K: 3, Pad: 1},
			Layer{Op: LayerBatchNorm, Name: name + ".bn", In: w, Out: w}, relu)
		if i == 1 || i == 2 {
			out = append(out, pool)
		}
		in = w
	}
	return append(out, Layer{Op: LayerGlobalAvgPool}, dense("fc", 128, s.Classes))
}
