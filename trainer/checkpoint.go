package trainer

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gpuwizard/internal/atomicfile"
	"gpuwizard/trainer/model"
	"gpuwizard/trainer/optim"
)

// ErrCheckpoint is returned (wrapped) for unreadable or mismatched checkpoints.
var ErrCheckpoint = errors.New("trainer: checkpoint")

// checkpointVersion is the layout version of checkpoint files.
const checkpointVersion = 1

// Checkpoint is everything needed to resume a run or use the model.
type Checkpoint struct {
	Version    int
	Config     Config
	Spec       model.Spec
	Classes    []string
	Params     []Tensor
	States     []model.State
	Optim      optim.State
	Epoch      int // epochs completed
	GlobalStep int
	BestEpoch  int
	BestValAcc float64
	History    []EpochResult
	Finished   bool
}

// Tensor is one named parameter.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

// FileSystem is where checkpoints and results are written; tests pass one
// that fails like a full disk.
type FileSystem = atomicfile.FileSystem

// File is what a FileSystem creates.
type File = atomicfile.File

// OSFileSystem is the real file system.
type OSFileSystem = atomicfile.OS

func writeAtomic(fsys FileSystem, path string, data []byte) error {
	return atomicfile.Write(fsys, path, data)
}

// SaveCheckpoint writes a checkpoint atomically.
func SaveCheckpoint(fsys FileSystem, path string, ck *Checkpoint) error {
	ck.Version = checkpointVersion
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(ck); err != nil {
		return fmt.Errorf("%w: encoding: %w", ErrCheckpoint, err)
	}
	return writeAtomic(fsys, path, buf.Bytes())
}

// LoadCheckpoint reads a checkpoint file, or the best/last one of a run
// folder ("runs/train" → best.ckpt; "runs/train/last" → last.ckpt).
func LoadCheckpoint(path string) (*Checkpoint, error) {
	path = resolveCheckpoint(path)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	var ck Checkpoint
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&ck); err != nil {
		return nil, fmt.Errorf("%w: %s is damaged or not a gpuwizard checkpoint: %w", ErrCheckpoint, path, err)
	}
	if ck.Version != checkpointVersion {
		return nil, fmt.Errorf("%w: %s has layout version %d; this gpuwizard reads %d", ErrCheckpoint, path, ck.Version, checkpointVersion)
	}
	if err := ck.Spec.Validate(); err != nil || len(ck.Classes) != ck.Spec.Classes || len(ck.Params) == 0 {
		return nil, fmt.Errorf("%w: %s: the model description inside is inconsistent", ErrCheckpoint, path)
	}
	return &ck, nil
}

func resolveCheckpoint(path string) string {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return filepath.Join(path, "best.ckpt")
	case err != nil:
		if _, err := os.Stat(path + ".ckpt"); err == nil {
			return path + ".ckpt" // runs/NAME/best → runs/NAME/best.ckpt
		}
	}
	return path
}

// restore puts saved parameters into a built net.
func (ck *Checkpoint) restore(net *model.Net) error {
	if len(ck.Params) != len(net.Params) {
		return fmt.Errorf("%w: %d saved tensors for a model with %d", ErrCheckpoint, len(ck.Params), len(net.Params))
	}
	for i, p := range net.Params {
		t := ck.Params[i]
		if t.Name != p.Name || len(t.Data) != len(p.Data) {
			return fmt.Errorf("%w: saved tensor %q (%d values) does not fit %q (%d)", ErrCheckpoint, t.Name, len(t.Data), p.Name, len(p.Data))
		}
		copy(p.Data, t.Data)
	}
	return net.SetStates(ck.States)
}

func snapshotParams(net *model.Net) []Tensor {
	out := make([]Tensor, len(net.Params))
	for i, p := range net.Params {
		out[i] = Tensor{Name: p.Name, Shape: p.Shape, Data: append([]float32(nil), p.Data...)}
	}
	return out
}
