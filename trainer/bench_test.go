package trainer

import (
	"context"
	"errors"
	"strings"
	"testing"

	"gpuwizard/trainer/exec"
)

func TestBench(t *testing.T) {
	ctx := context.Background()
	res, err := Bench(ctx, BenchConfig{Model: "mlp", Batch: 16, Steps: 4, Warmup: 1, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Device != "cpu" || res.Engine != "exec" || res.Threads != 1 || res.Steps != 4 || res.ImagesPerSec <= 0 || res.LossLast <= 0 {
		t.Fatalf("cpu: %+v", res)
	}
	// A step of Adam on random batches moves the loss.
	if res.LossFirst == res.LossLast {
		t.Fatalf("the loss did not change: %+v", res)
	}
	gpu, err := Bench(ctx, BenchConfig{Model: "lenet", Batch: 8, Steps: 2, Warmup: 1, Device: "cuda:0", Probe: usable,
		OpenCUDA: func(int) (exec.Backend, exec.CUDAInfo, error) {
			return &fakeCUDA{GoBackend: exec.NewGoBackend(), limit: 1 << 30}, fakeInfo, nil
		}})
	if err != nil || gpu.Device != "cuda:0" || !strings.Contains(gpu.DeviceInfo, "Fake GPU") {
		t.Fatalf("cuda: %+v %v", gpu, err)
	}
	for _, bad := range []BenchConfig{
		{Model: "mlp", Batch: 8, Steps: 0, Warmup: 1},
		{Model: "mlp", Batch: 8, Steps: 1, Warmup: 1, Engine: "tape", Device: "cuda"},
		{Model: "mlp", Batch: 8, Steps: 1, Warmup: 1, Device: "cuda:x"},
		{Model: "resnet", Batch: 8, Steps: 1, Warmup: 1},
	} {
		if _, err := Bench(ctx, bad); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", bad, err)
		}
	}
	noGPU := func(context.Context) DeviceStatus { return DeviceStatus{Reason: "no_nvidia_gpu"} }
	if _, err := Bench(ctx, BenchConfig{Model: "mlp", Batch: 8, Steps: 1, Warmup: 1, Device: "cuda", Probe: noGPU}); !errors.Is(err, ErrDevice) || !strings.Contains(err.Error(), "no_nvidia_gpu") {
		t.Fatalf("unusable GPU: %v", err)
	}
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Bench(stopped, BenchConfig{Model: "mlp", Batch: 8, Steps: 3, Warmup: 1}); !errors.Is(err, ErrStopped) {
		t.Fatalf("cancelled: %v", err)
	}
}
