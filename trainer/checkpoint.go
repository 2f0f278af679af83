package trainer

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strings"

	"gpuwizard/internal/safefile"
	"gpuwizard/trainer/model"
	"gpuwizard/trainer/optim"
)

// ErrCheckpoint is returned (wrapped) for unreadable or mismatched checkpoints.
var ErrCheckpoint = errors.New("trainer: checkpoint")

// ErrDamaged is returned (wrapped, with ErrCheckpoint) for a checkpoint
// whose checksum does not match: flipped bits, a torn copy, a truncation.
var ErrDamaged = errors.New("damaged")

// Checkpoint files (layout version 2) are
//
//	"GPUWCKPT"                 8 bytes, the magic
//	version                    uint32, big-endian (2)
//	payload length             uint64, big-endian
//	payload                    the Checkpoint, gob-encoded
//	SHA-256                    32 bytes, of everything before it
//
// A file whose checksum does not match is refused as damaged. Version 1
// files (a bare gob, written before checksums) are still read, with a
// warning: nothing can tell whether they are intact.
const (
	checkpointMagic   = "GPUWCKPT"
	checkpointVersion = 2
	legacyVersion     = 1
	checkpointHeader  = len(checkpointMagic) + 4 + 8
	// MaxCheckpointFile is the largest checkpoint file read.
	MaxCheckpointFile = 1 << 30
)

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

	warning string // set when loaded: a version 1 file, unverified
}

// Warning is what the caller should tell the user about a loaded
// checkpoint ("" when nothing): a version 1 file has no checksum.
func (ck *Checkpoint) Warning() string { return ck.warning }

// Tensor is one named parameter.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

// SaveCheckpoint writes a checkpoint atomically, with its checksum, and
// first removes the temporary files interrupted saves left in its folder
// (the caller holds the run folder's lock).
func SaveCheckpoint(fsys FileSystem, path string, ck *Checkpoint) error {
	b, err := encodeCheckpoint(ck)
	if err != nil {
		return err
	}
	return writeAtomic(fsys, path, b)
}

// encodeCheckpoint is the file's bytes: header, payload, SHA-256.
func encodeCheckpoint(ck *Checkpoint) ([]byte, error) {
	ck.Version = checkpointVersion
	var buf bytes.Buffer
	buf.WriteString(checkpointMagic)
	buf.Write(make([]byte, 12)) // version and length, filled in below
	if err := gob.NewEncoder(&buf).Encode(ck); err != nil {
		return nil, fmt.Errorf("%w: encoding: %w", ErrCheckpoint, err)
	}
	b := buf.Bytes()
	binary.BigEndian.PutUint32(b[len(checkpointMagic):], checkpointVersion)
	binary.BigEndian.PutUint64(b[len(checkpointMagic)+4:], uint64(len(b)-checkpointHeader))
	sum := sha256.Sum256(b)
	return append(b, sum[:]...), nil
}

// decodeCheckpoint checks and decodes a checkpoint file's bytes; name is
// used in errors.
func decodeCheckpoint(name string, raw []byte) (*Checkpoint, error) {
	damaged := func(why string) error {
		return fmt.Errorf("%w: %s is %w (%s): it cannot be used", ErrCheckpoint, name, ErrDamaged, why)
	}
	var ck Checkpoint
	if !bytes.HasPrefix(raw, []byte(checkpointMagic)) {
		// Version 1: a bare gob. Anything else is damaged or not ours.
		if err := gob.NewDecoder(bytes.NewReader(raw)).Decode(&ck); err != nil || ck.Version != legacyVersion {
			if len(raw) >= len(checkpointMagic) && nearMagic(raw[:len(checkpointMagic)]) {
				return nil, damaged("its header is changed")
			}
			return nil, fmt.Errorf("%w: %s is not a gpuwizard checkpoint, or a damaged one (no checkpoint header)", ErrCheckpoint, name)
		}
		ck.warning = fmt.Sprintf("%s was written by an older gpuwizard and has no checksum: it is loaded unverified (the run's next save adds one)", name)
	} else {
		if len(raw) < checkpointHeader+sha256.Size {
			return nil, damaged(fmt.Sprintf("%d bytes is shorter than a checkpoint's header and checksum: the file is truncated", len(raw)))
		}
		n := binary.BigEndian.Uint64(raw[len(checkpointMagic)+4:])
		if n != uint64(len(raw)-checkpointHeader-sha256.Size) {
			return nil, damaged(fmt.Sprintf("its header says %d bytes of data, the file holds %d: truncated or changed", n, len(raw)-checkpointHeader-sha256.Size))
		}
		body, sum := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
		if want := sha256.Sum256(body); !bytes.Equal(sum, want[:]) {
			return nil, damaged("its SHA-256 checksum does not match: bits are flipped")
		}
		if v := binary.BigEndian.Uint32(raw[len(checkpointMagic):]); v != checkpointVersion {
			return nil, fmt.Errorf("%w: %s has layout version %d; this gpuwizard reads %d and %d: use the gpuwizard that wrote it", ErrCheckpoint, name, v, legacyVersion, checkpointVersion)
		}
		if err := gob.NewDecoder(bytes.NewReader(body[checkpointHeader:])).Decode(&ck); err != nil || ck.Version != checkpointVersion {
			return nil, fmt.Errorf("%w: %s: its checksum matches but its contents cannot be read (%v): it was not written by gpuwizard", ErrCheckpoint, name, err)
		}
	}
	if err := ck.validate(); err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrCheckpoint, name, err)
	}
	return &ck, nil
}

// nearMagic says whether b is the magic with a few bits flipped.
func nearMagic(b []byte) bool {
	diff := 0
	for i := range b {
		diff += bits.OnesCount8(b[i] ^ checkpointMagic[i])
	}
	return diff <= 8
}

// validate checks what a damaged or foreign file could get wrong, so that
// using the checkpoint can never index out of range.
func (ck *Checkpoint) validate() error {
	if err := ck.Spec.Validate(); err != nil {
		return fmt.Errorf("the model description inside is inconsistent: %w", err)
	}
	if len(ck.Classes) != ck.Spec.Classes || len(ck.Params) == 0 {
		return fmt.Errorf("the model description inside is inconsistent: %d class names for %d classes, %d tensors", len(ck.Classes), ck.Spec.Classes, len(ck.Params))
	}
	for _, t := range ck.Params {
		n := 1
		for _, d := range t.Shape {
			if d <= 0 || n > len(t.Data) {
				n = -1
				break
			}
			n *= d
		}
		if n != len(t.Data) {
			return fmt.Errorf("tensor %q has shape %v but %d values", t.Name, t.Shape, len(t.Data))
		}
	}
	if ck.Epoch < 0 || ck.GlobalStep < 0 || ck.BestEpoch < 0 || ck.BestEpoch > ck.Epoch || ck.Epoch > ck.Config.Epochs {
		return fmt.Errorf("epoch %d of %d (best %d, step %d) is impossible", ck.Epoch, ck.Config.Epochs, ck.BestEpoch, ck.GlobalStep)
	}
	return nil
}

// LoadCheckpoint reads a checkpoint file, or the best/last one of a run
// folder ("runs/train" → best.ckpt; "runs/train/last" → last.ckpt). A
// damaged one is refused with ErrDamaged, and the error names the run's
// other checkpoint when that one is intact.
func LoadCheckpoint(path string) (*Checkpoint, error) {
	path = resolveCheckpoint(path)
	ck, err := readCheckpoint(path)
	if errors.Is(err, ErrDamaged) {
		return nil, fmt.Errorf("%w; %s", err, alternative(path))
	}
	return ck, err
}

func readCheckpoint(path string) (*Checkpoint, error) {
	raw, err := safefile.ReadFile(path, MaxCheckpointFile, "a checkpoint")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	return decodeCheckpoint(path, raw)
}

// alternative says what to use instead of a damaged checkpoint: the run's
// other checkpoint when it is intact, else how to start the run again.
func alternative(path string) string {
	dir, base := filepath.Dir(path), filepath.Base(path)
	other := map[string]string{"last.ckpt": "best.ckpt", "best.ckpt": "last.ckpt"}[base]
	if other == "" {
		return "use another copy of it"
	}
	op := filepath.Join(dir, other)
	ck, err := readCheckpoint(op)
	if err != nil {
		args := filepath.Join(dir, "args.yaml")
		if _, serr := os.Stat(args); serr == nil {
			return fmt.Sprintf("%s is not usable either (%s): start the run again with: gpuwizard train --config %s", other, shortErr(err), args)
		}
		return fmt.Sprintf("%s is not usable either: %s", other, shortErr(err))
	}
	if other == "best.ckpt" {
		return fmt.Sprintf("%s (epoch %d of %d, validation accuracy %.2f%%) is intact: resume from it with: cp %s %s && gpuwizard train --resume %s; or predict with --model %s",
			op, ck.Epoch, ck.Config.Epochs, 100*ck.BestValAcc, op, path, dir, filepath.Join(dir, "best"))
	}
	return fmt.Sprintf("%s (epoch %d of %d) is intact: predict with --model %s (the model of its last epoch, not the best one)",
		op, ck.Epoch, ck.Config.Epochs, filepath.Join(dir, "last"))
}

// shortErr drops the sentinel prefix of a checkpoint error.
func shortErr(err error) string {
	return strings.TrimPrefix(err.Error(), ErrCheckpoint.Error()+": ")
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
