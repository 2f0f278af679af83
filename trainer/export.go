package trainer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"

	"gpuwizard/internal/atomicfile"
	"gpuwizard/trainer/onnx"
)

// Export formats: the run folder copied (ExportRun), or the model as an
// ONNX file (ExportONNX).
const (
	ExportFolder     = "folder"
	ExportONNXFormat = "onnx"
)

// ExportONNX writes the model of checkpoint src (a run folder: its
// best.ckpt; runs/NAME/last; or a .ckpt file) to dest as an ONNX file
// that OpenCV, ONNX Runtime or PyTorch can run: its input is float32
// N×C×H×W pixels scaled to [0, 1] at the model's input size (what
// predict feeds the model once the image is resized), its output the
// class probabilities; the class names and the input size are in its
// metadata (package onnx). dest must not exist; it is written atomically.
func ExportONNX(src, dest string) error {
	ck, err := LoadCheckpoint(src)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: give a run folder (runs/NAME: its best checkpoint), runs/NAME/last or a .ckpt file", err)
	}
	if err != nil {
		return err
	}
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("trainer: export: %s already exists: choose another name", dest)
	}
	m := onnx.Model{Spec: ck.Spec, Classes: ck.Classes, Version: producerVersion(), Doc: exportDoc(ck)}
	for _, p := range ck.Params {
		m.Params = append(m.Params, onnx.Tensor{Name: p.Name, Shape: p.Shape, Data: p.Data})
	}
	for _, st := range ck.States {
		m.Stats = append(m.Stats, st.Data)
	}
	b, err := onnx.Encode(m)
	if err != nil {
		return fmt.Errorf("trainer: exporting %s: %w", src, err)
	}
	if err := atomicfile.Write(nil, dest, b); err != nil {
		return fmt.Errorf("trainer: export: %w", err)
	}
	return nil
}

// exportDoc is the ONNX file's description of the checkpoint's model.
func exportDoc(ck *Checkpoint) string {
	if ck.Spec.IsDetector() {
		m5095 := 0.0
		for _, h := range ck.History {
			if h.Epoch == ck.BestEpoch {
				m5095 = h.MAP5095
			}
		}
		return fmt.Sprintf("%s trained by gpuwizard on %s: epoch %d of %d, best validation mAP50-95 %.3f (epoch %d). Input: %s. Output: the raw detection head: %s",
			ck.Spec.Kind, ck.Config.Data, ck.Epoch, ck.Config.Epochs, m5095, ck.BestEpoch, onnx.Preprocessing(ck.Spec), onnx.DecodeDoc)
	}
	return fmt.Sprintf("%s trained by gpuwizard on %s: epoch %d of %d, best validation accuracy %.2f%% (epoch %d). Input: %s. Output: the probability of each class, in the order of the metadata's classes.",
		ck.Spec.Kind, ck.Config.Data, ck.Epoch, ck.Config.Epochs, 100*ck.BestValAcc, ck.BestEpoch, onnx.Preprocessing(ck.Spec))
}

// producerVersion is this program's module version, for the files it
// exports.
func producerVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(unknown)"
}
