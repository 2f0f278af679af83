package trainer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gpuwizard/internal/plural"
	"gpuwizard/trainer/detect"
)

// This file holds the trainer's ground types: what callers pass in about
// the machine and what they get back. They depend on nothing else in the
// package.

// Sentinel errors of a run.
var (
	ErrDevice  = errors.New("trainer: device")
	ErrStopped = errors.New("trainer: stopped")
	ErrDiverge = errors.New("trainer: training diverged")
)

// DeviceStatus is what the caller knows about the GPU (from the doctor).
type DeviceStatus struct {
	CUDAUsable bool   // a GPU with a working driver is there
	GPU        string // its name
	Driver     string // the NVIDIA driver's version, e.g. "580.65.06"
	Reason     string // why not usable, or the verdict, in words
	// GPUs are every GPU the doctor saw, in index order ("NVIDIA A100-SXM4-40GB"),
	// so a device list can offer cuda:0 … cuda:N-1.
	GPUs []string
}

// DeviceProbe asks about the GPU. The trainer does not judge GPUs itself.
type DeviceProbe func(ctx context.Context) DeviceStatus

// EpochResult is one row of results.csv.
type EpochResult struct {
	Epoch        int     `json:"epoch"`
	Seconds      float64 `json:"seconds"`
	TrainLoss    float64 `json:"train_loss"`
	TrainAcc     float64 `json:"train_accuracy"`
	ValLoss      float64 `json:"val_loss"`
	ValAcc       float64 `json:"val_accuracy"`
	ValTop5      float64 `json:"val_top5"`
	LR           float64 `json:"lr"`
	ImagesPerSec float64 `json:"images_per_s"`
	// A detector's epoch: its training loss's terms (means per step), the
	// same terms on the validation images (means per batch) and its
	// validation mAP (the loss fields above are then the summed terms and
	// the accuracies 0).
	BoxLoss    float64 `json:"box_loss,omitempty"`
	ClsLoss    float64 `json:"cls_loss,omitempty"`
	ObjLoss    float64 `json:"obj_loss,omitempty"`
	ValBoxLoss float64 `json:"val_box_loss,omitempty"`
	ValClsLoss float64 `json:"val_cls_loss,omitempty"`
	ValObjLoss float64 `json:"val_obj_loss,omitempty"`
	MAP50      float64 `json:"map50,omitempty"`
	MAP5095    float64 `json:"map50_95,omitempty"`
}

// Result is a run's outcome.
type Result struct {
	RunDir       string        `json:"run_dir"`
	Device       string        `json:"device"`
	DeviceReason string        `json:"device_reason"`
	Epochs       int           `json:"epochs"` // completed
	BestEpoch    int           `json:"best_epoch"`
	Stopped      string        `json:"stopped,omitempty"` // why it ended before the last epoch
	History      []EpochResult `json:"history"`
	Val          *Metrics      `json:"val,omitempty"`  // best model on the validation split
	Test         *Metrics      `json:"test,omitempty"` // best model on the test split, when there is one
	Classes      []string      `json:"classes"`
	GPU          *GPUProof     `json:"gpu,omitempty"` // what NVML saw while training on CUDA
	// Detect is a detector's best model on the validation split (Val and
	// Test are then nil).
	Detect *detect.Metrics `json:"detect,omitempty"`
}

// Estimate is a measured time per epoch and the device it was measured
// on.
type Estimate struct {
	PerEpoch time.Duration
	Device   string // "cpu", "cuda:0", ...
	Reason   string // why that device (as a run would say)
	Batch    int    // the batch measured (a GPU may need a smaller one)
}

// ClassMetrics are one class's scores.
type ClassMetrics struct {
	Class     string  `json:"class" yaml:"class"`
	Precision float64 `json:"precision" yaml:"precision"`
	Recall    float64 `json:"recall" yaml:"recall"`
	F1        float64 `json:"f1" yaml:"f1"`
	Support   int     `json:"support" yaml:"support"`
}

// Metrics evaluate a model on one split.
type Metrics struct {
	Split     string         `json:"split" yaml:"split"`
	Images    int            `json:"images" yaml:"images"`
	Loss      float64        `json:"loss" yaml:"loss"`
	Accuracy  float64        `json:"accuracy" yaml:"accuracy"`
	Top5      float64        `json:"top5" yaml:"top5"`
	PerClass  []ClassMetrics `json:"per_class" yaml:"per_class"`
	Confusion [][]int        `json:"confusion" yaml:"confusion"` // [true][predicted]
}

// StepPoint is one point of the training curves.
type StepPoint struct {
	X        float64 `json:"x"`        // position in epochs (2.5: half-way through epoch 3)
	Loss     float64 `json:"loss"`     // smoothed training loss
	Accuracy float64 `json:"accuracy"` // smoothed training accuracy
	LR       float64 `json:"lr"`
}

// Prediction is one class and its probability.
type Prediction struct {
	Index int // the class's number (labels.txt's line, from 0)
	Class string
	Prob  float64
}

// BenchResult is what a speed measurement (Bench) found.
type BenchResult struct {
	Engine, Model, Device string
	DeviceInfo            string // the backend's description, on CUDA
	Batch, Threads, Steps int
	Seconds               float64
	ImagesPerSec          float64
	ImagesPerCPUSec       float64 // images per second of this process's CPU time
	LossFirst, LossLast   float32
	Graphs                bool   // the step was captured once and replayed (CUDA graphs)
	GraphError            string // why capturing failed, when it did (the steps ran eagerly)
}

// GPUSample is one reading of the GPU while training on it.
type GPUSample struct {
	Time          time.Time `json:"time"`
	Utilization   int       `json:"utilization_pct"` // GPU busy, percent of the last sample period
	MemoryUsedMiB int       `json:"memory_used_mib"` // on the whole device
	ProcessListed bool      `json:"process_listed"`  // this process is among NVML's compute processes
	ProcessMiB    int       `json:"process_mib"`     // its memory, when NVML reports it
	TemperatureC  int       `json:"temperature_c"`
}

// GPUSampler reads device ordinal as NVML sees it, looking for process pid.
type GPUSampler func(ctx context.Context, ordinal, pid int) (GPUSample, error)

// GPUProof summarises the samples of a run: the evidence that the GPU
// really did the work.
type GPUProof struct {
	Device         string  `json:"device"`
	Samples        int     `json:"samples"`
	MeanUtil       float64 `json:"mean_utilization_pct"`
	MaxUtil        int     `json:"max_utilization_pct"`
	ProcessListed  bool    `json:"process_listed"`
	PeakProcessMiB int     `json:"peak_process_mib"`
	Error          string  `json:"error,omitempty"` // why sampling failed, if it did
}

// Summary says in one sentence what NVML saw.
func (g *GPUProof) Summary() string {
	if g.Samples == 0 {
		return "GPU use on " + g.Device + " was not measured: " + g.Error
	}
	listed := "NVML listed this run among the GPU's compute processes"
	if !g.ProcessListed {
		listed = "NVML did not list this run's process (another PID namespace?)"
	}
	return fmt.Sprintf("GPU use on %s: %s, %.0f%% busy on average (peak %d%%), up to %d MiB; %s.",
		g.Device, plural.Count(g.Samples, "sample"), g.MeanUtil, g.MaxUtil, g.PeakProcessMiB, listed)
}
