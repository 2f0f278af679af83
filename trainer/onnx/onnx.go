// Package onnx writes a trained classifier as an ONNX model, so that it
// can leave gpuwizard: OpenCV's DNN module, ONNX Runtime, PyTorch and the
// like read it. The graph follows the model's layers (model.Spec.Layers)
// one ONNX operator each, with batch normalisation exported as
// BatchNormalization (its running statistics), and ends in a softmax.
//
// The file is the ONNX schema's protobuf (onnxpb, generated from ONNX
// 1.12's onnx.proto by protoc-gen-go), written with
// google.golang.org/protobuf: IR version 7, operator set 13.
package onnx

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/proto"

	"gpuwizard/trainer/model"
	pb "gpuwizard/trainer/onnx/onnxpb"
)

// ErrExport is returned (wrapped) when a model cannot be written.
var ErrExport = errors.New("onnx: export")

// The file's versions, and the graph's input and output names.
const (
	IRVersion  = 7
	Opset      = 13
	InputName  = "image"
	OutputName = "probabilities"
	// HeadName is a detector's output: the raw head (see DecodeDoc).
	HeadName = "head"
)

// DecodeDoc says how a detector's raw head becomes boxes, for the file's
// metadata ("decode"); package detect's Decode does it.
const DecodeDoc = "head is N×(5+classes)×(H/8)×(W/8): per cell (row gy, column gx) of the grid of 8-pixel cells, channels " +
	"dx, dy, tw, th, objectness, then one logit per class. The box centre is ((gx + 0.5 + dx)·8, (gy + 0.5 + dy)·8) and " +
	"its size (e^tw·8, e^th·8) in canvas pixels, tw and th clamped to ±8 first; the score of class c is " +
	"sigmoid(objectness)·sigmoid(logit c); keep each cell's best class above a threshold (0.25), then per-class NMS " +
	"(IoU 0.45). The canvas is the image letterboxed (scaled to fit, centred, padded with grey 114): map boxes back " +
	"with (x − pad)/scale."

// Tensor is one named parameter, as a checkpoint holds it.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

// Model is what an export needs: the network, its trained values and
// what a user of the file must know.
type Model struct {
	Spec    model.Spec
	Params  []Tensor    // named as model.Net's parameters
	Stats   [][]float32 // each batch norm's running mean, then its variance, in layer order
	Classes []string    // the class names, in class order
	Version string      // the producer's version (gpuwizard's)
	Doc     string      // what the model is, in words (its run, its accuracy)
}

// Preprocessing says what the graph takes, for the file's metadata and
// documentation.
func Preprocessing(s model.Spec) string {
	colour := "1 channel: the luma (0.299 R + 0.587 G + 0.114 B)"
	if s.Channels == 3 {
		colour = "3 channels: R, G, B planes"
	}
	if s.IsDetector() {
		return fmt.Sprintf("float32 N×%d×%d×%d (NCHW), %s, pixels scaled to [0, 1] (value/255), the image letterboxed to %d×%d (scaled to fit, aspect kept, centred, padded with grey 114); no mean or standard deviation",
			s.Channels, s.Height, s.Width, colour, s.Width, s.Height)
	}
	return fmt.Sprintf("float32 N×%d×%d×%d (NCHW), %s, pixels scaled to [0, 1] (value/255), the image resized to %d×%d; no mean or standard deviation: nothing else is done outside the graph",
		s.Channels, s.Height, s.Width, colour, s.Width, s.Height)
}

// Encode writes m as an ONNX model file's bytes. The graph's input is
// "image" (float32 N×C×H×W, see Preprocessing) and its output
// "probabilities" (float32 N×classes, softmax); the metadata holds the
// class names (JSON), the input size and channels, and the preprocessing.
func Encode(m Model) ([]byte, error) {
	if err := m.Spec.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrExport, err)
	}
	if len(m.Classes) != m.Spec.Classes {
		return nil, fmt.Errorf("%w: %d class names for %d classes", ErrExport, len(m.Classes), m.Spec.Classes)
	}
	g, err := buildGraph(m)
	if err != nil {
		return nil, err
	}
	classes, _ := json.Marshal(m.Classes)
	s := m.Spec
	mp := &pb.ModelProto{
		IrVersion:       proto.Int64(IRVersion),
		OpsetImport:     []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(Opset)}},
		ProducerName:    proto.String("gpuwizard"),
		ProducerVersion: proto.String(m.Version),
		ModelVersion:    proto.Int64(1),
		DocString:       proto.String(m.Doc),
		Graph:           g,
		MetadataProps: []*pb.StringStringEntryProto{
			meta("classes", string(classes)),
			meta("input_size", fmt.Sprintf("%dx%d", s.Width, s.Height)),
			meta("input_width", strconv.Itoa(s.Width)),
			meta("input_height", strconv.Itoa(s.Height)),
			meta("input_channels", strconv.Itoa(s.Channels)),
			meta("model", s.Kind),
			meta("preprocessing", Preprocessing(s)),
		},
	}
	if s.IsDetector() {
		mp.MetadataProps = append(mp.MetadataProps, meta("task", "detect"), meta("stride", strconv.Itoa(model.DetStride)),
			meta("output", HeadName), meta("decode", DecodeDoc))
	}
	b, err := proto.Marshal(mp)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding: %w", ErrExport, err)
	}
	return b, nil
}

func meta(k, v string) *pb.StringStringEntryProto {
	return &pb.StringStringEntryProto{Key: proto.String(k), Value: proto.String(v)}
}

// buildGraph lays the model's layers out as ONNX nodes.
func buildGraph(m Model) (*pb.GraphProto, error) {
	s := m.Spec
	b := &builder{g: &pb.GraphProto{Name: proto.String("gpuwizard_" + s.Kind)}, params: map[string]Tensor{}, stats: m.Stats}
	for _, p := range m.Params {
		b.params[p.Name] = p
	}
	b.g.Input = []*pb.ValueInfoProto{valueInfo(InputName, dimParam("N"), dim(s.Channels), dim(s.Height), dim(s.Width))}
	h := InputName
	for _, l := range s.Layers() {
		h = b.layer(h, l)
	}
	if s.IsDetector() {
		gh, gw := s.Grid()
		b.node("Identity", []string{h}, HeadName)
		b.g.Output = []*pb.ValueInfoProto{valueInfo(HeadName, dimParam("N"), dim(5+s.Classes), dim(gh), dim(gw))}
	} else {
		b.node("Softmax", []string{h}, OutputName, intAttr("axis", 1))
		b.g.Output = []*pb.ValueInfoProto{valueInfo(OutputName, dimParam("N"), dim(s.Classes))}
	}
	if b.err == nil && len(b.used) != len(m.Params) {
		b.err = fmt.Errorf("%w: the checkpoint has %d tensors, the %s uses %d", ErrExport, len(m.Params), s.Kind, len(b.used))
	}
	if b.err == nil && b.bn*2 != len(m.Stats) {
		b.err = fmt.Errorf("%w: the checkpoint has %d batch-norm statistics, the %s uses %d", ErrExport, len(m.Stats), s.Kind, 2*b.bn)
	}
	return b.g, b.err
}

// builder adds nodes and initializers to a graph; the first error stops it.
type builder struct {
	g      *pb.GraphProto
	params map[string]Tensor
	used   map[string]bool
	stats  [][]float32
	bn     int // batch norms so far
	n      int // nodes so far (their outputs' names)
	err    error
}

// layer adds the nodes of one layer after the value named x; it returns
// the name of the layer's output.
func (b *builder) layer(x string, l model.Layer) string {
	switch l.Op {
	case model.LayerConv:
		in := []string{x, b.param(l.Name+".w", l.Out, l.In, l.K, l.K)}
		if l.Bias {
			in = append(in, b.param(l.Name+".b", l.Out))
		}
		p, st := int64(l.Pad), int64(max(l.Stride, 1))
		return b.node("Conv", in, "", intsAttr("kernel_shape", int64(l.K), int64(l.K)), intsAttr("pads", p, p, p, p), intsAttr("strides", st, st))
	case model.LayerBatchNorm:
		mean, variance := b.batchStats(l.Name, l.Out)
		in := []string{x, b.param(l.Name+".gamma", l.Out), b.param(l.Name+".beta", l.Out), mean, variance}
		return b.node("BatchNormalization", in, "", floatAttr("epsilon", model.BatchNormEpsilon))
	case model.LayerReLU:
		return b.node("Relu", []string{x}, "")
	case model.LayerSiLU: // x·σ(x): opset 13 has no SiLU
		return b.node("Mul", []string{x, b.node("Sigmoid", []string{x}, "")}, "")
	case model.LayerMaxPool:
		return b.node("MaxPool", []string{x}, "", intsAttr("kernel_shape", 2, 2), intsAttr("strides", 2, 2))
	case model.LayerFlatten:
		return b.node("Flatten", []string{x}, "", intAttr("axis", 1))
	case model.LayerDense:
		// The weights go in as Out×In with transB, as PyTorch exports a
		// Linear layer (and as OpenCV's importer expects them).
		in := []string{x, b.transposed(l.Name+".w", l.In, l.Out), b.param(l.Name+".b", l.Out)}
		return b.node("Gemm", in, "", intAttr("transB", 1))
	case model.LayerGlobalAvgPool:
		return b.node("Flatten", []string{b.node("GlobalAveragePool", []string{x}, "")}, "", intAttr("axis", 1))
	}
	if b.err == nil {
		b.err = fmt.Errorf("%w: no ONNX operator for layer %q", ErrExport, l.Op)
	}
	return x
}

// node adds an operator; out "" names its output after it.
func (b *builder) node(op string, in []string, out string, attrs ...*pb.AttributeProto) string {
	b.n++
	name := fmt.Sprintf("%s_%d", op, b.n)
	if out == "" {
		out = name
	}
	b.g.Node = append(b.g.Node, &pb.NodeProto{OpType: proto.String(op), Name: proto.String(name), Input: in, Output: []string{out}, Attribute: attrs})
	return out
}

// tensor is the parameter called name, checked to hold the values of
// shape; false (and the builder's error set) when it is not there.
func (b *builder) tensor(name string, shape ...int) ([]float32, bool) {
	p, ok := b.params[name]
	switch {
	case b.err != nil:
		return nil, false
	case !ok:
		b.err = fmt.Errorf("%w: the checkpoint has no tensor %q", ErrExport, name)
		return nil, false
	case len(p.Data) != count(shape):
		b.err = fmt.Errorf("%w: tensor %q has %d values, the layer needs %v", ErrExport, name, len(p.Data), shape)
		return nil, false
	}
	if b.used == nil {
		b.used = map[string]bool{}
	}
	b.used[name] = true
	return p.Data, true
}

// param adds the parameter called name as an initializer of the given
// shape (a checkpoint's 1×C×1×1 or 1×C bias is stored flat, as C values).
func (b *builder) param(name string, shape ...int) string {
	if d, ok := b.tensor(name, shape...); ok {
		b.initializer(name, d, shape)
	}
	return name
}

// transposed adds the rows×cols parameter called name as an initializer
// of cols×rows, transposed.
func (b *builder) transposed(name string, rows, cols int) string {
	d, ok := b.tensor(name, rows, cols)
	if !ok {
		return name
	}
	t := make([]float32, len(d))
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			t[c*rows+r] = d[r*cols+c]
		}
	}
	b.initializer(name, t, []int{cols, rows})
	return name
}

// batchStats adds the next batch norm's running mean and variance as
// initializers named after it.
func (b *builder) batchStats(name string, c int) (mean, variance string) {
	i := 2 * b.bn
	b.bn++
	mean, variance = name+".mean", name+".var"
	if b.err == nil && (i+1 >= len(b.stats) || len(b.stats[i]) != c || len(b.stats[i+1]) != c) {
		b.err = fmt.Errorf("%w: batch norm %d (%s) has no statistics of %d channels in the checkpoint", ErrExport, b.bn, name, c)
	}
	if b.err == nil {
		b.initializer(mean, b.stats[i], []int{c})
		b.initializer(variance, b.stats[i+1], []int{c})
	}
	return mean, variance
}

func (b *builder) initializer(name string, data []float32, shape []int) {
	dims := make([]int64, len(shape))
	for i, d := range shape {
		dims[i] = int64(d)
	}
	b.g.Initializer = append(b.g.Initializer, &pb.TensorProto{Name: proto.String(name), Dims: dims,
		DataType: proto.Int32(int32(pb.TensorProto_FLOAT)), FloatData: data})
}

func count(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func dim(n int) *pb.TensorShapeProto_Dimension {
	return &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: int64(n)}}
}

func dimParam(name string) *pb.TensorShapeProto_Dimension {
	return &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimParam{DimParam: name}}
}

// valueInfo describes a float32 graph input or output.
func valueInfo(name string, dims ...*pb.TensorShapeProto_Dimension) *pb.ValueInfoProto {
	return &pb.ValueInfoProto{Name: proto.String(name), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: &pb.TypeProto_Tensor{
		ElemType: proto.Int32(int32(pb.TensorProto_FLOAT)), Shape: &pb.TensorShapeProto{Dim: dims}}}}}
}

func intAttr(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func intsAttr(name string, v ...int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INTS.Enum(), Ints: v}
}

func floatAttr(name string, v float32) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_FLOAT.Enum(), F: proto.Float32(v)}
}
