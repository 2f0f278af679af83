package trainer

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

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

// File is the part of *os.File a checkpoint write needs.
type File interface {
	io.Writer
	Sync() error
	Close() error
	Name() string
}

// FileSystem is where checkpoints are written; tests pass one that fails.
type FileSystem interface {
	CreateTemp(dir, pattern string) (File, error)
	Rename(from, to string) error
	Remove(name string) error
}

// OSFileSystem is the real file system.
type OSFileSystem struct{}

// CreateTemp implements FileSystem.
func (OSFileSystem) CreateTemp(dir, pattern string) (File, error) { return os.CreateTemp(dir, pattern) }

// Rename implements FileSystem.
func (OSFileSystem) Rename(from, to string) error { return os.Rename(from, to) }

// Remove implements FileSystem.
func (OSFileSystem) Remove(name string) error { return os.Remove(name) }

// writeAtomic replaces path with data: a temporary file in the same folder,
// synced, then renamed, then the folder synced. On any failure the old file
// is untouched and the temporary file removed.
func writeAtomic(fsys FileSystem, path string, data []byte) error {
	if fsys == nil {
		fsys = OSFileSystem{}
	}
	tmp, err := fsys.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	fail := func(err error) error {
		tmp.Close()
		fsys.Remove(tmp.Name())
		return fmt.Errorf("writing %s (the previous version is kept): %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		fsys.Remove(tmp.Name())
		return fmt.Errorf("writing %s (the previous version is kept): %w", path, err)
	}
	if err := fsys.Rename(tmp.Name(), path); err != nil {
		fsys.Remove(tmp.Name())
		return fmt.Errorf("writing %s (the previous version is kept): %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
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
func LoadCheckpoint(path string) (*Checkpoint, string, error) {
	path = resolveCheckpoint(path)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, path, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	var ck Checkpoint
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&ck); err != nil {
		return nil, path, fmt.Errorf("%w: %s is damaged or not a gpuwizard checkpoint: %w", ErrCheckpoint, path, err)
	}
	if ck.Version != checkpointVersion {
		return nil, path, fmt.Errorf("%w: %s has layout version %d; this gpuwizard reads %d", ErrCheckpoint, path, ck.Version, checkpointVersion)
	}
	if err := ck.Spec.Validate(); err != nil || len(ck.Classes) != ck.Spec.Classes || len(ck.Params) == 0 {
		return nil, path, fmt.Errorf("%w: %s: the model description inside is inconsistent", ErrCheckpoint, path)
	}
	return &ck, path, nil
}

func resolveCheckpoint(path string) string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return filepath.Join(path, "best.ckpt")
	}
	if _, err := os.Stat(path); err != nil {
		for _, ext := range []string{".ckpt"} {
			if _, err := os.Stat(path + ext); err == nil {
				return path + ext
			}
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
