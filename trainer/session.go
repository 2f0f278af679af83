package trainer

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"

	"gpuwizard/internal/plural"
	"gpuwizard/trainer/data"
	"gpuwizard/trainer/exec"
	"gpuwizard/trainer/model"
	"gpuwizard/trainer/optim"
)

// sessionOptions say which network to open, and where.
type sessionOptions struct {
	spec  model.Spec
	batch int // the batch asked for; a GPU may run a smaller one (session.batch)
	seed  int64
	optim exec.Optim
	// device is cpu, auto, cuda or cuda:N (see chooseDevice); probe asks
	// the doctor first (nil: the GPU is not checked).
	device string
	probe  DeviceProbe
	// openCUDA opens a CUDA device; nil: exec.OpenCUDA (the driver
	// loaded at run time).
	openCUDA func(ordinal int) (exec.Backend, exec.CUDAInfo, error)
	// eager queues every kernel of every step on CUDA instead of
	// capturing the step once in a CUDA graph and replaying it.
	eager bool
	// hint says how to go on without the GPU, in errors ("train with
	// --device cpu").
	hint string
	// say takes the session's notes for the user: the fitted batch, CUDA
	// graphs that are unavailable or failed, ops gorgonia runs on the CPU.
	// nil: they are dropped.
	say func(string)
}

// session is a network resident on a device. Opening it chooses the
// backend, fits the batch to the device's memory, builds the model and
// plans it on the executor; it then launches training steps and collects
// their results with the record each was launched with (steps run ahead
// of their results), evaluates splits, reads and writes the parameters,
// and closes.
type session struct {
	o       sessionOptions
	spec    model.Spec
	batch   int    // the batch it runs
	device  string // "cpu", "cuda:0", ...
	reason  string // why that device (and batch), in words
	info    string // the CUDA device's description ("" on the CPU)
	ordinal int    // the CUDA device, when on one
	gpu     bool
	be      exec.Backend
	net     *model.Net
	tr      *exec.Trainer
	params  [][]float32 // the net's parameter data, as the trainer reads and writes them
	// ring holds the record of each step in flight, oldest at head.
	ring      []launched
	head      int
	graphSaid bool
}

// launched is what a step in flight is judged against when its results
// come: its place, rate, and the labels of its batch.
type launched struct {
	step, gstep, valid int
	lr                 float32
	labels             []int
}

// openSession opens the network o describes on its device.
func openSession(ctx context.Context, o sessionOptions) (*session, error) {
	s, err := openDevice(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := s.build(o.spec); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// openDevice chooses and opens the device of a session whose network is
// built later (build): a run checks the device before it loads its
// dataset.
func openDevice(ctx context.Context, o sessionOptions) (*session, error) {
	if o.say == nil {
		o.say = func(string) {}
	}
	s := &session{o: o, batch: o.batch}
	if err := s.openBackend(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// close releases the device.
func (s *session) close() {
	if s.be != nil {
		s.be.Close()
		s.be = nil
	}
}

// openCUDA opens CUDA device ordinal: sessionOptions.openCUDA, else the
// driver.
func (s *session) openCUDA(ordinal int) (exec.Backend, exec.CUDAInfo, error) {
	if s.o.openCUDA != nil {
		return s.o.openCUDA(ordinal)
	}
	b, err := exec.OpenCUDA(ordinal)
	if err != nil {
		return nil, exec.CUDAInfo{}, err
	}
	return b, b.Info(), nil
}

// openBackend asks the doctor (when it can), chooses the device and opens
// it. Under auto, CUDA that cannot be opened falls back to the CPU, with
// the reason.
func (s *session) openBackend(ctx context.Context) error {
	var st DeviceStatus
	asked := s.o.probe != nil
	if asked && s.o.device != "cpu" {
		st = s.o.probe(ctx)
	}
	choice, err := chooseDevice(s.o.device, st, asked, s.o.hint)
	if err != nil {
		return err
	}
	if !choice.cuda {
		s.be, s.device, s.reason = exec.NewGoBackend(), "cpu", choice.reason
		return nil
	}
	be, info, err := s.openCUDA(choice.ordinal)
	switch {
	case err != nil && choice.required:
		return fmt.Errorf("%w: %s was requested but CUDA could not be opened: %w (run gpuwizard doctor; or %s)", ErrDevice, s.o.device, err, s.o.hint)
	case err != nil:
		s.be, s.device = exec.NewGoBackend(), "cpu"
		s.reason = fmt.Sprintf("automatic choice; the GPU %s passed the doctor's check but CUDA could not be opened: %v", st.GPU, err)
		return nil
	}
	s.be, s.ordinal, s.device, s.gpu, s.info = be, choice.ordinal, be.Name(), true, info.String()
	s.reason = choice.reason + ": " + s.info + driverNote(st)
	return nil
}

// buildNet is the one place a network is built: spec at batch, with
// parameters drawn from seed.
func buildNet(spec model.Spec, batch int, seed int64) (*model.Net, error) {
	net, err := model.Build(spec, batch, seed)
	if err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	return net, nil
}

// build fits the batch, builds the network and plans it on the backend.
// On a GPU the batch is first fitted to the free memory (fitBatch), and
// once planned the network takes one trial step (what the backend sizes
// on the first step is allocated then); if planning or the step still
// runs out of memory (the estimate was short), everything the attempt
// allocated is freed and the batch halves, down to one image. What
// happened to the batch is said once, at the end.
func (s *session) build(spec model.Spec) error {
	s.spec = spec
	var notes []string
	if note, err := s.fitBatch(); err != nil {
		return err
	} else if note != "" {
		notes = append(notes, note)
	}
	first, tries := s.batch, 0
	var lastErr error
	for {
		err := s.plan()
		if err == nil && s.gpu {
			err = s.trial()
		}
		if err == nil {
			break
		}
		if errors.Is(err, model.ErrModel) || !errors.Is(err, exec.ErrOutOfMemory) || s.batch == 1 || !s.gpu {
			return err
		}
		lastErr = err
		if err := s.freeAll(); err != nil {
			return err
		}
		s.batch /= 2
		tries++
	}
	if tries > 0 {
		notes = append(notes, fmt.Sprintf("out of GPU memory at batch %d: training at batch %d (halved %d×)", first, s.batch, tries))
	}
	if len(notes) > 0 {
		msg := strings.Join(notes, "; then ")
		s.reason += "; " + msg
		if lastErr != nil {
			msg += " (the last failure: " + lastErr.Error() + ")"
		}
		s.o.say(msg)
	}
	s.sayPlan()
	s.ring = make([]launched, s.tr.Depth())
	for i := range s.ring {
		s.ring[i].labels = make([]int, s.batch)
	}
	return nil
}

// plan builds the network at the session's batch and plans it.
func (s *session) plan() error {
	net, err := buildNet(s.spec, s.batch, s.o.seed)
	if err != nil {
		return err
	}
	tg, eg := net.ExecGraphs()
	tr, err := exec.NewTrainer(s.be, tg, eg, s.o.optim)
	if err != nil {
		return fmt.Errorf("trainer: planning %s on %s: %w", s.spec.Kind, s.device, err)
	}
	s.net, s.tr = net, tr
	s.params = s.params[:0]
	for _, p := range net.Params {
		s.params = append(s.params, p.Data)
	}
	return nil
}

// trial runs one forward and backward pass on a zero batch, so that the
// backend allocates what it sizes on the first step (scratch space) while
// the batch can still be lowered. Nothing is updated, and the batch-norm
// statistics the pass moved are put back: training starts as it would
// have.
func (s *session) trial() error {
	x := make([]float32, s.batch*s.spec.Channels*s.spec.Height*s.spec.Width)
	y := make([]float32, s.batch*s.spec.LabelSize())
	if _, _, err := s.tr.Forward(x, y); err != nil {
		return fmt.Errorf("trainer: a first step of %s on %s: %w", s.spec.Kind, s.device, err)
	}
	if err := s.tr.WriteParams(s.params); err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	return nil
}

// sayPlan chooses CUDA graphs and says what the plan could not do:
// graphs unavailable, ops left to gorgonia on the CPU. When the executor
// runs everything, gorgonia's graphs are released.
func (s *session) sayPlan() {
	eager := s.o.eager
	if !s.tr.SetGraphs(!eager) && !eager && s.gpu {
		s.o.say("CUDA graphs are not available here: every kernel of every step is queued")
	}
	train, eval := s.tr.Programs()
	if fb := append(append([]string(nil), train.Fallbacks...), eval.Fallbacks...); len(fb) > 0 {
		s.o.say(fmt.Sprintf("gorgonia runs %s on the CPU, with copies (no %s kernel): %s",
			plural.Count(len(fb), "op"), s.device, strings.Join(fb, "; ")))
		return
	}
	s.net.ReleaseGraphs() // the executor runs everything: gorgonia's tensors can go
}

// freeAll releases everything a failed attempt allocated on the device:
// the backend frees its buffers (synchronously), or, where it cannot, is
// closed and opened again.
func (s *session) freeAll() error {
	if rel, ok := s.be.(exec.Releaser); ok {
		if err := rel.FreeAll(); err != nil && !errors.Is(err, exec.ErrOutOfMemory) {
			return fmt.Errorf("trainer: freeing %s after running out of memory: %w", s.device, err)
		}
		return nil
	}
	s.be.Close()
	be, _, err := s.openCUDA(s.ordinal)
	if err != nil {
		s.be = nil
		return fmt.Errorf("trainer: reopening %s after running out of memory: %w", s.device, err)
	}
	s.be = be
	return nil
}

// memoryMargin is the share of the free memory left unplanned: the
// allocator's rounding and fragmentation, and other processes.
const memoryMargin = 0.05

// fitBatch estimates, on a backend that reports its memory, what the
// batch needs (every buffer of the plan, counted by planning on a counting
// backend at two batch sizes: the need is linear in the batch) and, when
// it does not fit, lowers the batch at once to the largest that fits (a
// multiple of 8 from 8 up). It returns what it did, in words ("" when the
// batch fits).
func (s *session) fitBatch() (string, error) {
	mr, ok := s.be.(exec.MemoryReporter)
	if !ok || !s.gpu {
		return "", nil
	}
	free, total, err := mr.MemInfo()
	if err != nil {
		return "", nil // no figures: try, and halve on failure
	}
	var overhead int64
	if o, ok := s.be.(exec.OverheadReporter); ok {
		overhead = o.MemoryOverhead()
	}
	avail := int64(float64(free)*(1-memoryMargin)) - overhead
	b := s.batch
	nb, err := s.memoryNeed(b)
	if err != nil || nb <= avail {
		return "", err
	}
	fit, err := s.largestFit(b, nb, avail)
	if err != nil {
		return "", err
	}
	if fit < 1 {
		return "", fmt.Errorf("%w: %s has %s free of %s; the model needs more than that even at batch 1 (%s at batch %d): free GPU memory (gpuwizard doctor lists who holds it) or train with --device cpu",
			exec.ErrOutOfMemory, s.device, mib(free), mib(total), mib(uint64(nb)), b)
	}
	s.batch = fit
	return fmt.Sprintf("GPU memory: batch %d needs %s, %s of %s are free on %s: training at batch %d, the largest that fits",
		b, mib(uint64(nb+overhead)), mib(free), mib(total), s.device, fit), nil
}

// memoryNeed is what planning the network at batch allocates.
func (s *session) memoryNeed(batch int) (int64, error) {
	net, err := buildNet(s.spec, batch, s.o.seed)
	if err != nil {
		return 0, err
	}
	tg, eg := net.ExecGraphs()
	return exec.MemoryNeed(s.be, tg, eg, s.o.optim)
}

// largestFit is the largest batch below b whose need fits avail, given
// the need nb at b: the line through b and b/2, then exact counts.
func (s *session) largestFit(b int, nb, avail int64) (int, error) {
	half := max(b/2, 1)
	nh, err := s.memoryNeed(half)
	if err != nil {
		return 0, err
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
		n, err := s.memoryNeed(fit)
		if err != nil {
			return 0, err
		}
		if n <= avail {
			break
		}
		fit = max(fit-max(fit/8, 1), 0)
	}
	return fit, nil
}

// mib writes bytes in MiB or GiB.
func mib(b uint64) string {
	if b >= 10<<30 {
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%d MiB", (b+(1<<20)-1)>>20)
}

// next is the record of the next step to launch, for the caller to fill
// before launch.
func (s *session) next() *launched {
	return &s.ring[(s.head+s.tr.Pending())%len(s.ring)]
}

// full says whether as many steps are in flight as the device keeps: the
// caller collects one before launching another.
func (s *session) full() bool { return s.tr.Pending() == s.tr.Depth() }

// pending is the number of steps in flight.
func (s *session) pending() int { return s.tr.Pending() }

// launch queues one training step on batch x (inputs) and y (one-hot
// labels) at rate lr: forward, backward and the update.
func (s *session) launch(x, y []float32, lr float32) error { return s.tr.Launch(x, y, lr) }

// collect waits for the oldest step in flight and returns its loss and
// logits (valid until the next collect) with the record it was launched
// with. A CUDA graph capture that failed is said once.
func (s *session) collect() (float32, []float32, *launched, error) {
	loss, logits, err := s.tr.Collect()
	if on, gerr := s.tr.Graphs(); !on && gerr != nil && !s.graphSaid {
		s.graphSaid = true
		s.o.say("CUDA graphs failed, so every kernel of every step is queued: " + gerr.Error())
	}
	ls := &s.ring[s.head]
	s.head = (s.head + 1) % len(s.ring)
	return loss, logits, ls, err
}

// step launches one step and waits for it (and any still in flight): its
// loss.
func (s *session) step(x, y []float32, lr float32) (float32, error) {
	if s.full() {
		if _, _, _, err := s.collect(); err != nil {
			return 0, err
		}
	}
	if err := s.launch(x, y, lr); err != nil {
		return 0, err
	}
	var loss float32
	for s.pending() > 0 {
		l, _, _, err := s.collect()
		if err != nil {
			return 0, err
		}
		loss = l
	}
	return loss, nil
}

// randomBatch draws a batch of the session's size: uniform inputs and
// one-hot labels (bench and estimates).
func (s *session) randomBatch(rng *rand.Rand) (x, y []float32) { return s.net.RandomBatch(rng) }

// predict runs the evaluation program on a batch and returns the logits
// (valid until the next call).
func (s *session) predict(x []float32) ([]float32, error) { return s.tr.Predict(x) }

// evaluate runs the evaluation program over split (images of size
// floats) and scores it against its labels.
func (s *session) evaluate(split *data.Split, size int, classes []string, name string) (Metrics, error) {
	n := len(classes)
	acc := newAccumulator(n)
	b := data.NewBatcher(split, size, n, s.batch)
	b.Rewind()
	for b.Next() {
		logits, err := s.tr.Predict(b.X)
		if err != nil {
			return Metrics{}, fmt.Errorf("trainer: evaluating the %s split on %s: %w", name, s.device, err)
		}
		for k := 0; k < b.Valid; k++ {
			acc.add(logits[k*n:(k+1)*n], int(split.Labels[b.Idx[k]]))
		}
	}
	return acc.metrics(name, classes), nil
}

// measure puts a checkpoint's model on the device and evaluates it on the
// validation split and, when there is one, the test split.
func (s *session) measure(ck *Checkpoint, ds *data.Dataset) (val, test *Metrics, err error) {
	if err := s.load(ck, false); err != nil {
		return nil, nil, err
	}
	v, err := s.evaluate(ds.Val, ds.ImageSize(), ds.Classes, "val")
	if err != nil {
		return nil, nil, err
	}
	if ds.Test != nil && ds.Test.Len() > 0 {
		t, err := s.evaluate(ds.Test, ds.ImageSize(), ds.Classes, "test")
		if err != nil {
			return nil, nil, err
		}
		test = &t
	}
	return &v, test, nil
}

// load puts a checkpoint's parameters and batch-norm statistics on the
// device, and its optimiser state when withOptim and it has one.
func (s *session) load(ck *Checkpoint, withOptim bool) error {
	if ck.Spec != s.spec {
		return fmt.Errorf("%w: the checkpoint's model %+v differs from the dataset's %+v", ErrCheckpoint, ck.Spec, s.spec)
	}
	net := s.net
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
	if err := net.SetStates(ck.States); err != nil {
		return fmt.Errorf("%w: %w", ErrCheckpoint, err)
	}
	if err := s.tr.WriteParams(s.params); err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	if withOptim && ck.Optim.Kind != "" {
		if err := s.tr.SetState(ck.Optim); err != nil {
			return fmt.Errorf("trainer: %w", err)
		}
	}
	return nil
}

// save copies the parameters, batch-norm statistics and optimiser state
// back from the device, as a checkpoint holds them.
func (s *session) save() ([]Tensor, []model.State, optim.State, error) {
	if err := s.tr.ReadParams(s.params); err != nil {
		return nil, nil, optim.State{}, fmt.Errorf("trainer: %w", err)
	}
	st, err := s.tr.State()
	if err != nil {
		return nil, nil, st, fmt.Errorf("trainer: %w", err)
	}
	out := make([]Tensor, len(s.net.Params))
	for i, p := range s.net.Params {
		out[i] = Tensor{Name: p.Name, Shape: p.Shape, Data: append([]float32(nil), p.Data...)}
	}
	return out, s.net.States(), st, nil
}

// optimOf is the optimiser a configuration trains with.
func optimOf(cfg Config) exec.Optim {
	return exec.Optim{Kind: cfg.Optimizer, Momentum: float32(cfg.Momentum), WeightDecay: float32(cfg.WeightDecay)}
}
