// Package onnxpb holds the ONNX schema's Go types: onnx.pb.go is generated
// by protoc-gen-go (the version go.mod names as a tool) from onnx.proto,
// the schema of ONNX 1.12.0 as Debian's python3-onnx ships it, kept here
// with its licence header (Apache-2.0: see LICENSE; © the ONNX Project
// Contributors). `make onnx-proto` regenerates it; do not edit it.
package onnxpb
