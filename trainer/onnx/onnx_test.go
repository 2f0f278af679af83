package onnx

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"gpuwizard/trainer/model"
	"gpuwizard/trainer/onnx/onnxpb"
)

// mlp is a 2-class MLP on 8×8 grey images with hidden width 4, its
// parameters filled with their index.
func mlp() Model {
	s := model.Spec{Kind: model.MLP, Channels: 1, Height: 8, Width: 8, Classes: 2, Hidden: 4}
	t := func(name string, shape ...int) Tensor {
		n := 1
		for _, d := range shape {
			n *= d
		}
		d := make([]float32, n)
		for i := range d {
			d[i] = float32(i)
		}
		return Tensor{Name: name, Shape: shape, Data: d}
	}
	return Model{Spec: s, Classes: []string{"a", "b"}, Params: []Tensor{t("fc1.w", 64, 4), t("fc1.b", 1, 4), t("fc2.w", 4, 2), t("fc2.b", 1, 2)}}
}

func TestEncodeMLP(t *testing.T) {
	b, err := Encode(mlp())
	if err != nil {
		t.Fatal(err)
	}
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, n := range m.GetGraph().GetNode() {
		ops = append(ops, n.GetOpType())
	}
	if got := strings.Join(ops, " "); got != "Flatten Gemm Relu Gemm Softmax" {
		t.Fatalf("nodes: %s", got)
	}
	// fc2.w is 4×2 in the checkpoint, 2×4 (transposed) in the file.
	for _, in := range m.GetGraph().GetInitializer() {
		if in.GetName() == "fc2.w" && (len(in.GetDims()) != 2 || in.GetDims()[0] != 2 || in.GetFloatData()[1] != 2 || in.GetFloatData()[4] != 1) {
			t.Fatalf("fc2.w: dims %v data %v", in.GetDims(), in.GetFloatData())
		}
	}
}

func TestEncodeRefusesAMismatchedModel(t *testing.T) {
	for name, spoil := range map[string]func(*Model){
		"no tensor \"fc2.b\"": func(m *Model) { m.Params = m.Params[:3] },
		"has 3 values": func(m *Model) {
			m.Params[3].Data = m.Params[3].Data[:1:1]
			m.Params[3].Data = append(m.Params[3].Data, 0, 0)
		},
		"3 class names for 2 classes": func(m *Model) { m.Classes = append(m.Classes, "c") },
		"has 5 tensors":               func(m *Model) { m.Params = append(m.Params, Tensor{Name: "extra", Data: []float32{1}}) },
		"batch-norm statistics":       func(m *Model) { m.Stats = [][]float32{{1}} },
	} {
		m := mlp()
		spoil(&m)
		if _, err := Encode(m); !errors.Is(err, ErrExport) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestEncodeDetector: a detector's graph has its strided convolutions,
// SiLU as Sigmoid and Mul, and ends in the raw head, with the decoding in
// the metadata.
func TestEncodeDetector(t *testing.T) {
	s := model.Spec{Kind: model.DetN, Channels: 3, Height: 64, Width: 64, Classes: 2}
	m := Model{Spec: s, Classes: []string{"a", "b"}}
	for _, l := range s.Layers() {
		switch l.Op {
		case model.LayerConv:
			m.Params = append(m.Params, Tensor{Name: l.Name + ".w", Shape: []int{l.Out, l.In, l.K, l.K}, Data: make([]float32, l.Out*l.In*l.K*l.K)})
			if l.Bias {
				m.Params = append(m.Params, Tensor{Name: l.Name + ".b", Shape: []int{1, l.Out, 1, 1}, Data: make([]float32, l.Out)})
			}
		case model.LayerBatchNorm:
			m.Params = append(m.Params, Tensor{Name: l.Name + ".gamma", Shape: []int{1, l.Out, 1, 1}, Data: make([]float32, l.Out)},
				Tensor{Name: l.Name + ".beta", Shape: []int{1, l.Out, 1, 1}, Data: make([]float32, l.Out)})
			m.Stats = append(m.Stats, make([]float32, l.Out), make([]float32, l.Out))
		}
	}
	b, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	var mp onnxpb.ModelProto
	if err := proto.Unmarshal(b, &mp); err != nil {
		t.Fatal(err)
	}
	counts, strided := map[string]int{}, 0
	for _, n := range mp.GetGraph().GetNode() {
		counts[n.GetOpType()]++
		for _, a := range n.GetAttribute() {
			if a.GetName() == "strides" && a.GetInts()[0] == 2 {
				strided++
			}
		}
	}
	if strided != 3 || counts["Sigmoid"] != counts["Mul"] || counts["Sigmoid"] != counts["BatchNormalization"] || counts["Softmax"] != 0 {
		t.Fatalf("nodes %v, %d strided convolutions", counts, strided)
	}
	out := mp.GetGraph().GetOutput()[0]
	dims := out.GetType().GetTensorType().GetShape().GetDim()
	if out.GetName() != HeadName || len(dims) != 4 || dims[1].GetDimValue() != 7 || dims[2].GetDimValue() != 8 {
		t.Fatalf("output %s %v, want head N×7×8×8", out.GetName(), dims)
	}
	meta := map[string]string{}
	for _, p := range mp.GetMetadataProps() {
		meta[p.GetKey()] = p.GetValue()
	}
	if meta["task"] != "detect" || meta["stride"] != "8" || meta["decode"] != DecodeDoc {
		t.Fatalf("metadata %v", meta)
	}
}
