package exec_test

import (
	"fmt"
	"testing"

	"gpuwizard/trainer/exec"
	"gpuwizard/trainer/exec/internal/cudaemu"
	"gpuwizard/trainer/model"
)

// TestPlannedMemory holds the planner's byte count (MemoryNeed: every
// buffer of the training and evaluation programs and the optimiser's
// state) for the CNN on colour images at batch 64 to what it is now, on
// the Go backend and on a GPU (whose parts of the batch are larger). At
// 48×48 it was 1,096 MiB on both before the convolutions ran in parts
// (whole-batch columns kept for the filter gradients, the image
// gradients' columns, a second set for evaluation) and before the batch
// norm's broadcast scale was fused.
func TestPlannedMemory(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		size     int
		cpu, gpu int64 // the most MiB allowed
	}{
		{48, 270, 430}, // now 261.4 and 417.9
		{32, 130, 205}, // now 123.8 and 197.9
	} {
		net, err := model.Build(model.Spec{Kind: model.CNN, Channels: 3, Height: c.size, Width: c.size, Classes: 10}, 64, 1)
		if err != nil {
			t.Fatal(err)
		}
		tg, eg := net.ExecGraphs()
		cb := exec.NewCUDABackendOn(cudaemu.New(), exec.CUDAInfo{Name: "emulated"})
		for _, b := range []struct {
			be   exec.Backend
			most int64
		}{{exec.NewGoBackend(), c.cpu}, {cb, c.gpu}} {
			need, err := exec.MemoryNeed(b.be, tg, eg, exec.Optim{Kind: "adam"})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("CNN %d×%d, batch 64, %s: %.1f MiB planned", c.size, c.size, b.be.Name(), float64(need)/mib)
			if need > b.most*mib {
				t.Errorf("CNN %d×%d, batch 64, %s: the plan needs %.1f MiB, more than %d MiB", c.size, c.size, b.be.Name(), float64(need)/mib, b.most)
			}
		}
		cb.Close()
	}
}

// TestConvPartsMatchFloat64 cuts every convolution's batch into small
// parts (one image each, and uneven parts with a last one of one image)
// on the Go backend and on the emulated GPU, and compares training with
// the float64 reference (compareBackends): the parts' views, the filter
// gradients summed over parts, the image gradients, and the one-image
// parts that read the output gradient without permuting it.
func TestConvPartsMatchFloat64(t *testing.T) {
	for _, name := range []string{"lenet", "cnn"} {
		for _, floats := range []int{1, 3 * 288 * 16 * 16} {
			t.Run(fmt.Sprintf("%s/cpu/%d", name, floats), func(t *testing.T) {
				gb := exec.NewGoBackend()
				gb.SetConvScratch(floats)
				compareBackends(t, name, 64, gb)
			})
			if name == "cnn" && floats == 1 {
				continue // 12 s emulated; the uneven parts have a one-image part too
			}
			t.Run(fmt.Sprintf("%s/emulated/%d", name, floats), func(t *testing.T) {
				cb := exec.NewCUDABackendOn(cudaemu.New(), exec.CUDAInfo{Name: "emulated"})
				defer cb.Close()
				cb.SetConvScratch(floats)
				compareBackends(t, name, 64, cb)
			})
		}
	}
}
