package trainer

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"testing"
	"time"

	"gpuwizard/trainer/model"
)

// withVersion rewraps a checkpoint file's payload under another layout
// version, with a valid checksum.
func withVersion(b []byte, version uint32) []byte {
	return wrap(b[checkpointHeader:len(b)-sha256.Size], version)
}

// wrap puts a header and a valid checksum around payload.
func wrap(payload []byte, version uint32) []byte {
	b := []byte(checkpointMagic)
	b = binary.BigEndian.AppendUint32(b, version)
	b = binary.BigEndian.AppendUint64(b, uint64(len(payload)))
	b = append(b, payload...)
	sum := sha256.Sum256(b)
	return append(b, sum[:]...)
}

// FuzzLoadCheckpoint feeds bytes to checkpoint loading, both as a whole
// file and as a payload with a valid header and checksum: no panic, and
// what loads is consistent enough to restore into its model.
func FuzzLoadCheckpoint(f *testing.F) {
	ck := &Checkpoint{Config: Defaults(), Spec: model.Spec{Kind: model.MLP, Channels: 1, Height: 8, Width: 8, Classes: 2}, Classes: []string{"a", "b"},
		Params: []Tensor{{Name: "w", Shape: []int{2, 2}, Data: []float32{1, 2, 3, 4}}}, Epoch: 1, BestEpoch: 1}
	good, _ := encodeCheckpoint(ck)
	f.Add(good)
	f.Add(good[:40])
	var legacy bytes.Buffer
	c := *ck
	c.Version = legacyVersion
	gob.NewEncoder(&legacy).Encode(&c)
	f.Add(legacy.Bytes())
	f.Add(good[checkpointHeader : len(good)-32])
	f.Fuzz(func(t *testing.T, b []byte) {
		start := time.Now()
		for _, raw := range [][]byte{b, wrap(b, checkpointVersion)} {
			got, err := decodeCheckpoint("f.ckpt", raw)
			if err == nil {
				if got.validate() != nil || len(got.Classes) != got.Spec.Classes {
					t.Fatal("an invalid checkpoint loaded")
				}
			} else if !errors.Is(err, ErrCheckpoint) {
				t.Fatalf("error without ErrCheckpoint: %v", err)
			}
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("took %s on %d bytes", d, len(b))
		}
	})
}

// FuzzConfigFile feeds bytes to the --config parser: no panic, and what
// parses writes back (args.yaml) to something that parses again.
func FuzzConfigFile(f *testing.F) {
	f.Add([]byte("epochs: 3\nlr: 0.01\n"))
	f.Add([]byte("model: cnn\ndevice: cuda:1\nname: x\n"))
	f.Add([]byte("&a [*a, *a, *a]"))
	f.Add([]byte("epochs: !!binary aGVsbG8=\n"))
	f.Add(Defaults().YAML())
	f.Fuzz(func(t *testing.T, b []byte) {
		start := time.Now()
		c, err := ParseConfig("f.yaml", b, Defaults())
		if err == nil {
			c.Validate()
			if _, err := ParseConfig("args.yaml", c.YAML(), Config{}); err != nil {
				t.Fatalf("args.yaml of a parsed config does not parse: %v\n%s", err, c.YAML())
			}
		} else if !errors.Is(err, ErrConfig) {
			t.Fatalf("error without ErrConfig: %v", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("took %s on %d bytes", d, len(b))
		}
	})
}
