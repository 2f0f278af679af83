package trainer

import (
	"bufio"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gpuwizard/internal/plural"
	"gpuwizard/internal/safefile"
	"gpuwizard/trainer/optim"
)

// maxStepPointsPerEpoch bounds what steps.csv keeps of an epoch; longer
// epochs keep every k-th step. maxStepPoints bounds the whole file: past
// it, every other point is dropped (the chart keeps its shape).
const (
	maxStepPointsPerEpoch = 100
	maxStepPoints         = 20000
)

// smoother is an exponential moving average of the per-step loss and
// accuracy, debiased while it warms up (as TensorBoard smooths).
type smoother struct {
	loss, acc float64
	n         int
}

const smoothing = 0.95

func (s *smoother) add(loss, acc float64) (float64, float64) {
	s.n++
	s.loss = smoothing*s.loss + (1-smoothing)*loss
	s.acc = smoothing*s.acc + (1-smoothing)*acc
	if s.n > 200 {
		return s.loss, s.acc
	}
	d := 1 - math.Pow(smoothing, float64(s.n))
	return s.loss / d, s.acc / d
}

// restart goes on from a resumed run's last smoothed values.
func (s *smoother) restart(loss, acc float64) {
	s.loss, s.acc, s.n = loss, acc, 1000
}

// thinSteps keeps the record under maxStepPoints by dropping every other
// point (the last one stays).
func thinSteps(p []StepPoint) []StepPoint {
	for len(p) > maxStepPoints {
		out := p[:0]
		for i := range p {
			if i%2 == 1 || i == len(p)-1 {
				out = append(out, p[i])
			}
		}
		p = out
	}
	return p
}

// dropAfter removes the points past x (an epoch that will be redone).
func dropAfter(p []StepPoint, x float64) []StepPoint {
	for len(p) > 0 && p[len(p)-1].X > x+1e-9 {
		p = p[:len(p)-1]
	}
	return p
}

func stepsCSV(p []StepPoint) []byte {
	var b strings.Builder
	b.WriteString("epoch,train/loss_smooth,train/accuracy_smooth,lr\n")
	for _, s := range p {
		fmt.Fprintf(&b, "%.5f,%.6f,%.6f,%.8g\n", s.X, s.Loss, s.Accuracy, s.LR)
	}
	return []byte(b.String())
}

// maxStepsFile caps what readSteps reads (maxStepPoints rows take ~1 MiB).
const maxStepsFile = 8 << 20

// readSteps reads steps.csv up to epoch upTo; a missing or damaged file
// gives what could be read (the curves are a convenience, not the run).
func readSteps(path string, upTo float64) []StepPoint {
	raw, err := safefile.ReadFile(path, maxStepsFile, "a steps file")
	if err != nil {
		return nil
	}
	var out []StepPoint
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for line := 0; sc.Scan(); line++ {
		if line == 0 {
			continue
		}
		fs := strings.Split(sc.Text(), ",")
		if len(fs) != 4 {
			break
		}
		var v [4]float64
		ok := true
		for i, s := range fs {
			if v[i], err = strconv.ParseFloat(s, 64); err != nil || math.IsNaN(v[i]) || math.IsInf(v[i], 0) {
				ok = false
			}
		}
		if !ok || v[0] > upTo+1e-9 || (len(out) > 0 && v[0] < out[len(out)-1].X) {
			break
		}
		out = append(out, StepPoint{X: v[0], Loss: v[1], Accuracy: v[2], LR: v[3]})
	}
	return out
}

// continueSchedule is what "train more epochs" (extend epochs more than
// ck's run) does to the learning rate of cfg: a cosine schedule goes on
// from the rate the run had reached and decays from there over the new
// epochs (rather than warming up to the peak again, which undoes the
// converged model); step and constant schedules simply go on. It returns
// the settings and what it did, in words.
func continueSchedule(cfg Config, ck *Checkpoint, extend int) (Config, string) {
	if cfg.Schedule != "cosine" {
		return cfg, fmt.Sprintf("training %s more (to %d): the %s learning-rate schedule goes on where it was", plural.Count(extend, "epoch"), cfg.Epochs, cfg.Schedule)
	}
	cur := 0.0
	if n := len(ck.History); n > 0 {
		cur = ck.History[n-1].LR
	}
	if !(cur > 0) { // no record: the rate the old schedule had reached
		cur = ck.Config.LR
	}
	cfg.ExtendFrom, cfg.ExtendLR = ck.Epoch, cur
	if cfg.ExtendFrom >= cfg.Epochs { // cannot happen with extend > 0; keep Validate happy
		cfg.ExtendFrom = 0
	}
	floor := optim.Schedule{Base: cfg.LR, MinFactor: minLRFactor, ContinueRate: cur}.ContinueFloor()
	return cfg, fmt.Sprintf("training %s more (to %d): the learning rate continues from %.3g (where epoch %d ended) and decays (cosine) to %.3g by epoch %d, instead of starting again at %g",
		plural.Count(extend, "epoch"), cfg.Epochs, cur, ck.Epoch, floor, cfg.Epochs, cfg.LR)
}
