package trainer

import (
	"context"
	"sync"
	"time"
)

// Event kinds.
const (
	EventStart = "start" // the device, the dataset and the plan
	EventLog   = "log"   // a line for the log pane (lint results, resume, early stop)
	EventStep  = "step"  // progress within an epoch; may be dropped when the receiver is slow
	EventEpoch = "epoch" // an epoch's results; never dropped
	EventDone  = "done"  // the end: finished, stopped or failed; never dropped
)

// Event is what Run reports on the caller's channel.
type Event struct {
	Kind         string        `json:"kind"`
	Time         time.Time     `json:"time"`
	Epoch        int           `json:"epoch"` // 1-based
	Epochs       int           `json:"epochs"`
	Step         int           `json:"step"` // 1-based, within the epoch
	Steps        int           `json:"steps"`
	GlobalStep   int           `json:"global_step"`
	Loss         float64       `json:"loss,omitempty"`     // running training loss of the epoch
	Accuracy     float64       `json:"accuracy,omitempty"` // running training accuracy of the epoch
	ValLoss      float64       `json:"val_loss,omitempty"`
	ValAccuracy  float64       `json:"val_accuracy,omitempty"`
	LR           float64       `json:"lr,omitempty"`
	ImagesPerSec float64       `json:"images_per_s,omitempty"`
	ETA          time.Duration `json:"eta_ns,omitempty"`
	Best         bool          `json:"best,omitempty"` // this epoch is the best so far
	Device       string        `json:"device,omitempty"`
	DeviceReason string        `json:"device_reason,omitempty"`
	Message      string        `json:"message,omitempty"`
	RunDir       string        `json:"run_dir,omitempty"`
	Result       *Result       `json:"result,omitempty"` // on done
	GPU          *GPUSample    `json:"gpu,omitempty"`    // the latest NVML sample, training on CUDA
	// X is the position in epochs (2.5: half-way through the third epoch),
	// on step and epoch events.
	X float64 `json:"x,omitempty"`
	// SmoothLoss and SmoothAccuracy are the training loss and accuracy of
	// each step, smoothed (an exponential moving average over every step,
	// going on across epochs and resumes), on step events.
	SmoothLoss     float64 `json:"smooth_loss,omitempty"`
	SmoothAccuracy float64 `json:"smooth_accuracy,omitempty"`
	// History and StepHistory are what came before, on the start event of
	// a resumed or extended run: its epochs and its smoothed steps.
	History     []EpochResult `json:"history,omitempty"`
	StepHistory []StepPoint   `json:"step_history,omitempty"`
	// A detector's loss terms (step and epoch events: the epoch's running
	// means) and validation mAP (epoch events).
	BoxLoss float64 `json:"box_loss,omitempty"`
	ClsLoss float64 `json:"cls_loss,omitempty"`
	ObjLoss float64 `json:"obj_loss,omitempty"`
	MAP50   float64 `json:"map50,omitempty"`
	MAP5095 float64 `json:"map50_95,omitempty"`
}

// emitter sends events: step events without blocking (dropped when the
// receiver is slow, at most 10 a second), epoch and done events blocking
// (never dropped), the others blocking but watching cancellation.
type emitter struct {
	ch       chan<- Event
	lastStep time.Time
}

func (e *emitter) send(ctx context.Context, ev Event) {
	if e.ch == nil {
		return
	}
	ev.Time = time.Now()
	if ev.Kind == EventStep {
		if ev.Time.Sub(e.lastStep) < 100*time.Millisecond && ev.Step != ev.Steps {
			return
		}
		select {
		case e.ch <- ev:
			e.lastStep = ev.Time
		default:
		}
		return
	}
	if ev.Kind == EventDone || ev.Kind == EventEpoch {
		// The last word, and an epoch that was trained and saved, must
		// arrive even after cancellation: a Ctrl-C during the validation
		// of an epoch used to drop its line while the run went on to
		// record and resume after it.
		e.ch <- ev
		return
	}
	select {
	case e.ch <- ev:
	case <-ctx.Done():
	}
}

// Control pauses and resumes a run from another goroutine. The zero value
// is ready to use.
type Control struct {
	mu     sync.Mutex
	paused bool
	wake   chan struct{}
}

// Pause asks the run to wait after the current step.
func (c *Control) Pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.paused {
		c.paused = true
		c.wake = make(chan struct{})
	}
}

// Resume lets a paused run go on.
func (c *Control) Resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused {
		c.paused = false
		close(c.wake)
	}
}

// Paused reports whether a pause is asked for.
func (c *Control) Paused() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paused
}

// wait blocks while paused; false when ctx ends first.
func (c *Control) wait(ctx context.Context) bool {
	if c == nil {
		return ctx.Err() == nil
	}
	c.mu.Lock()
	w, paused := c.wake, c.paused
	c.mu.Unlock()
	if !paused {
		return ctx.Err() == nil
	}
	select {
	case <-w:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}
