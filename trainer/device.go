package trainer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"gpuwizard/internal/plural"
	"gpuwizard/trainer/exec"
	"gpuwizard/trainer/model"
)

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

// proofSampler samples at most every second and keeps the summary.
type proofSampler struct {
	read    GPUSampler
	ordinal int
	last    time.Time
	latest  *GPUSample
	sumUtil float64
}

func (p *proofSampler) sample(ctx context.Context, res *Result) *GPUSample {
	if p == nil || res == nil || res.GPU == nil {
		return nil
	}
	if time.Since(p.last) < time.Second {
		return p.latest
	}
	p.last = time.Now()
	s, err := p.read(ctx, p.ordinal, os.Getpid())
	if err != nil {
		res.GPU.Error = err.Error()
		return p.latest
	}
	g := res.GPU
	g.Samples++
	p.sumUtil += float64(s.Utilization)
	g.MeanUtil = p.sumUtil / float64(g.Samples)
	g.MaxUtil = max(g.MaxUtil, s.Utilization)
	g.ProcessListed = g.ProcessListed || s.ProcessListed
	g.PeakProcessMiB = max(g.PeakProcessMiB, s.ProcessMiB)
	p.latest = &s
	return p.latest
}

// openCUDA opens CUDA device ordinal: Options.OpenCUDA, else the driver.
func (r *runner) openCUDA(ordinal int) (exec.Backend, exec.CUDAInfo, error) {
	if r.opts.OpenCUDA != nil {
		return r.opts.OpenCUDA(ordinal)
	}
	b, err := exec.OpenCUDA(ordinal)
	if err != nil {
		return nil, exec.CUDAInfo{}, err
	}
	return b, b.Info(), nil
}

// CUDAOrdinal reads the GPU index of a device setting: "cuda" is 0,
// "cuda:N" is N.
func CUDAOrdinal(device string) (int, error) {
	if device == "cuda" {
		return 0, nil
	}
	rest, ok := strings.CutPrefix(device, "cuda:")
	n, err := strconv.Atoi(rest)
	if !ok || err != nil || n < 0 {
		return 0, fmt.Errorf("%w: device %q: write cuda or cuda:N with N a GPU index (0, 1, ...)", ErrDevice, device)
	}
	return n, nil
}

// selectDevice applies the explicit fallback ladder, opens the backend
// and records why.
func (r *runner) selectDevice(ctx context.Context) error {
	var st DeviceStatus
	asked := r.opts.Probe != nil
	if asked && r.cfg.Device != "cpu" {
		st = r.opts.Probe(ctx)
	}
	cpu := func(reason string) {
		r.be, r.device, r.reason = exec.NewGoBackend(), "cpu", reason
	}
	hint := "train with --device cpu"
	if r.resumed {
		hint = "resume with --resume " + r.dir + " --device cpu"
	}
	switch {
	case r.cfg.Device == "cpu":
		cpu("requested with device=cpu")
	case strings.HasPrefix(r.cfg.Device, "cuda"):
		ordinal, err := CUDAOrdinal(r.cfg.Device)
		if err != nil {
			return err
		}
		if asked && !st.CUDAUsable {
			return fmt.Errorf("%w: %s was requested but cannot be served: %s (run gpuwizard doctor; or %s)", ErrDevice, r.cfg.Device, st.Reason, hint)
		}
		be, info, err := r.openCUDA(ordinal)
		if err != nil {
			return fmt.Errorf("%w: %s was requested but CUDA could not be opened: %w (run gpuwizard doctor; or %s)", ErrDevice, r.cfg.Device, err, hint)
		}
		r.be, r.ordinal, r.device = be, ordinal, be.Name()
		r.reason = "requested with device=" + r.cfg.Device + ": " + info.String() + driverNote(st)
	default: // auto
		switch {
		case !asked:
			cpu("automatic choice; the GPU was not checked")
		case !st.CUDAUsable:
			cpu("automatic choice; no usable GPU: " + st.Reason)
		default:
			be, info, err := r.openCUDA(0)
			if err != nil {
				cpu(fmt.Sprintf("automatic choice; the GPU %s passed the doctor's check but CUDA could not be opened: %v", st.GPU, err))
				break
			}
			r.be, r.ordinal, r.device = be, 0, be.Name()
			r.reason = "automatic choice: " + info.String() + driverNote(st)
		}
	}
	return nil
}

// driverNote names the NVIDIA driver the doctor saw, when it did.
func driverNote(st DeviceStatus) string {
	if st.Driver == "" {
		return ""
	}
	return ", NVIDIA driver " + st.Driver
}

// build makes the network and plans it on the backend. On a GPU it first
// fits the batch to the free memory (fitBatch). If planning still runs out
// of memory (the estimate was short), it frees everything the attempt
// allocated, halves the batch and tries again, down to one image, and
// says so once at the end.
func (r *runner) build(ctx context.Context, spec model.Spec) error {
	if err := r.fitBatch(ctx, spec); err != nil {
		return err
	}
	first, tries := r.cfg.Batch, 0
	var lastErr error
	for {
		net, err := model.Build(spec, r.cfg.Batch, r.cfg.Seed)
		if err != nil {
			return fmt.Errorf("trainer: %w", err)
		}
		tg, eg := net.ExecGraphs()
		tr, err := exec.NewTrainer(r.be, tg, eg, r.optim())
		if err == nil {
			r.net, r.tr = net, tr
			r.params = r.params[:0]
			for _, p := range net.Params {
				r.params = append(r.params, p.Data)
			}
			if tries > 0 {
				msg := fmt.Sprintf("out of GPU memory at batch %d: training at batch %d (halved %d×)", first, r.cfg.Batch, tries)
				r.reason += "; " + msg
				r.em.send(ctx, Event{Kind: EventLog, Message: msg + " (the last failure: " + lastErr.Error() + ")"})
			}
			if !tr.SetGraphs(!r.opts.Eager) && !r.opts.Eager && r.device != "cpu" {
				r.em.send(ctx, Event{Kind: EventLog, Message: "CUDA graphs are not available here: every kernel of every step is queued"})
			}
			train, eval := tr.Programs()
			if fb := append(train.Fallbacks, eval.Fallbacks...); len(fb) > 0 {
				r.em.send(ctx, Event{Kind: EventLog, Message: fmt.Sprintf("gorgonia runs %s on the CPU, with copies (no %s kernel): %s",
					plural.Count(len(fb), "op"), r.device, strings.Join(fb, "; "))})
			} else {
				net.ReleaseGraphs() // the executor runs everything: gorgonia's tensors can go
			}
			return nil
		}
		if !errors.Is(err, exec.ErrOutOfMemory) || r.cfg.Batch == 1 || r.device == "cpu" {
			return fmt.Errorf("trainer: planning %s on %s: %w", spec.Kind, r.device, err)
		}
		lastErr = err
		if err := r.freeAll(); err != nil {
			return err
		}
		r.cfg.Batch /= 2
		tries++
	}
}

func (r *runner) optim() exec.Optim {
	return exec.Optim{Kind: r.cfg.Optimizer, Momentum: float32(r.cfg.Momentum), WeightDecay: float32(r.cfg.WeightDecay)}
}

// freeAll releases everything a failed attempt allocated on the device:
// the backend frees its buffers (synchronously), or, where it cannot, is
// closed and opened again.
func (r *runner) freeAll() error {
	if rel, ok := r.be.(exec.Releaser); ok {
		if err := rel.FreeAll(); err != nil && !errors.Is(err, exec.ErrOutOfMemory) {
			return fmt.Errorf("trainer: freeing %s after running out of memory: %w", r.device, err)
		}
		return nil
	}
	r.be.Close()
	be, _, err := r.openCUDA(r.ordinal)
	if err != nil {
		return fmt.Errorf("trainer: reopening %s after running out of memory: %w", r.device, err)
	}
	r.be = be
	return nil
}

// memoryMargin is the share of the free memory left unplanned: the
// allocator's rounding and fragmentation, and other processes.
const memoryMargin = 0.05

// fitBatch estimates, on a backend that reports its memory, what the
// configured batch needs (every buffer of the plan, counted by planning on
// a counting backend at two batch sizes: the need is linear in the batch)
// and, when it does not fit, lowers the batch at once to the largest that
// fits (a multiple of 8 from 8 up) and says so.
func (r *runner) fitBatch(ctx context.Context, spec model.Spec) error {
	mr, ok := r.be.(exec.MemoryReporter)
	if !ok || r.device == "cpu" {
		return nil
	}
	free, total, err := mr.MemInfo()
	if err != nil {
		return nil // no figures: try, and halve on failure
	}
	var overhead int64
	if o, ok := r.be.(exec.OverheadReporter); ok {
		overhead = o.MemoryOverhead()
	}
	avail := int64(float64(free)*(1-memoryMargin)) - overhead
	need := func(batch int) (int64, error) {
		net, err := model.Build(spec, batch, r.cfg.Seed)
		if err != nil {
			return 0, fmt.Errorf("trainer: %w", err)
		}
		tg, eg := net.ExecGraphs()
		return exec.MemoryNeed(r.be, tg, eg, r.optim())
	}
	b := r.cfg.Batch
	nb, err := need(b)
	if err != nil {
		return err
	}
	if nb <= avail {
		return nil
	}
	// need(b) = fixed + per·b, from b and b/2 (or 1).
	half := max(b/2, 1)
	nh, err := need(half)
	if err != nil {
		return err
	}
	per := float64(nb-nh) / float64(max(b-half, 1))
	fixed := float64(nb) - per*float64(b)
	fit := 0
	if per > 0 {
		fit = min(b-1, int((float64(avail)-fixed)/per))
	}
	if fit >= 8 {
		fit -= fit % 8
	}
	for fit >= 1 { // the exact count, in case the line is off
		n, err := need(fit)
		if err != nil {
			return err
		}
		if n <= avail {
			break
		}
		fit = max(fit-max(fit/8, 1), 0)
	}
	if fit < 1 {
		return fmt.Errorf("%w: %s has %s free of %s; the model needs more than that even at batch 1 (%s at batch %d): free GPU memory (gpuwizard doctor lists who holds it) or train with --device cpu",
			exec.ErrOutOfMemory, r.device, mib(free), mib(total), mib(uint64(nb)), b)
	}
	msg := fmt.Sprintf("GPU memory: batch %d needs %s, %s of %s are free on %s: training at batch %d, the largest that fits",
		b, mib(uint64(nb+overhead)), mib(free), mib(total), r.device, fit)
	r.cfg.Batch = fit
	r.reason += "; " + msg
	r.em.send(ctx, Event{Kind: EventLog, Message: msg})
	return nil
}

// mib writes bytes in MiB or GiB.
func mib(b uint64) string {
	if b >= 10<<30 {
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%d MiB", (b+(1<<20)-1)>>20)
}
