package exec_test

import (
	"math/rand"
	"testing"

	"gpuwizard/trainer/exec"
	"gpuwizard/trainer/exec/internal/cudaemu"
	"gpuwizard/trainer/model"
)

// TestGraphReplayMatchesEager: on the emulated GPU, a trainer that
// captures its step once per slot and replays it computes exactly what a
// trainer queueing every kernel computes (loss, logits, the parameters,
// the optimiser state and the batch-norm statistics after six steps with
// changing batches and learning rates, results collected two steps
// behind), and both match the Go backend. Whatever changes per step (the
// batch, the learning rate, Adam's bias correction) must therefore reach
// the replayed kernels through memory, not through their arguments.
func TestGraphReplayMatchesEager(t *testing.T) {
	for _, name := range modelNames() {
		t.Run(name, func(t *testing.T) {
			dg, de := cudaemu.New(), cudaemu.New()
			graphVsEager(t, name, exec.NewCUDABackendOn(dg, exec.CUDAInfo{Name: "emulated"}),
				exec.NewCUDABackendOn(de, exec.CUDAInfo{Name: "emulated"}), 0)
			if _, replays := dg.Stats(); replays < 4 {
				t.Fatalf("the graph trainer replayed %d steps of 6", replays)
			}
			if _, replays := de.Stats(); replays != 0 {
				t.Fatalf("the eager trainer replayed %d graphs", replays)
			}
		})
	}
}

// TestCUDAGraphs is TestGraphReplayMatchesEager on a real GPU (skipped
// without one): the driver's capture and replay against eager launches,
// with cuBLAS and with the own SGEMM, within 1e-6 (cuBLAS may pick its
// kernels per call).
func TestCUDAGraphs(t *testing.T) {
	probe, err := exec.OpenCUDA(0)
	if err != nil {
		t.Skip(err)
	}
	canCapture := probe.CanCapture()
	probe.Close()
	if !canCapture {
		t.Fatal("this driver has no CUDA graphs (cuStreamBeginCapture_v2, cuGraphInstantiate…): steps run eagerly")
	}
	for _, gemm := range []string{"cublas", "own"} {
		for _, name := range modelNames() {
			t.Run(name+"/"+gemm, func(t *testing.T) {
				open := func() exec.Backend {
					b, err := exec.OpenCUDA(0)
					if err != nil {
						t.Fatal(err)
					}
					if gemm == "own" {
						b.UseOwnGEMM()
					}
					return b
				}
				graphVsEager(t, name, open(), open(), 1e-6)
			})
		}
	}
}

// graphVsEager trains model name for six steps with a replaying trainer on
// bg, an eager one on be and one on the Go backend, and compares them: the
// replay with eager within tol (0: bit for bit), both with the CPU within
// what float32 allows.
func graphVsEager(t *testing.T, name string, bg, be exec.Backend, tol float64) {
	t.Helper()
	defer bg.Close()
	defer be.Close()
	spec := specs()[name]
	o := optimOf(name)
	type run struct {
		tr   *exec.Trainer
		net  *model.Net
		loss []float32
		zs   [][]float32
	}
	open := func(b exec.Backend, graphs bool) *run {
		net, err := model.Build(spec, 8, 4)
		if err != nil {
			t.Fatal(err)
		}
		tg, eg := net.ExecGraphs()
		tr, err := exec.NewTrainer(b, tg, eg, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.SetGraphs(graphs); got != graphs {
			t.Fatalf("graphs %v: the backend says %v", graphs, got)
		}
		return &run{tr: tr, net: net}
	}
	runs := []*run{open(bg, true), open(be, false), open(exec.NewGoBackend(), false)}
	rng := rand.New(rand.NewSource(3))
	var xs, ys [][]float32
	for i := 0; i < 6; i++ {
		x, y := runs[0].net.RandomBatch(rng)
		xs, ys = append(xs, x), append(ys, y)
	}
	collect := func(r *run) {
		l, z, err := r.tr.Collect()
		if err != nil {
			t.Fatal(err)
		}
		r.loss, r.zs = append(r.loss, l), append(r.zs, append([]float32(nil), z...))
	}
	for _, r := range runs {
		for i := range xs {
			if r.tr.Pending() == r.tr.Depth() {
				collect(r)
			}
			if err := r.tr.Launch(xs[i], ys[i], float32(1+i%3)*1e-3); err != nil {
				t.Fatal(err)
			}
		}
		for r.tr.Pending() > 0 {
			collect(r)
		}
	}
	g, e, cpu := runs[0], runs[1], runs[2]
	for i := range xs {
		if d, dz := relErr([]float32{e.loss[i]}, []float32{g.loss[i]}), relErr(e.zs[i], g.zs[i]); d > tol || dz > tol {
			t.Fatalf("step %d: replayed loss %v, eager %v (logits rel %.2g)", i, g.loss[i], e.loss[i], dz)
		}
		if d := relErr([]float32{cpu.loss[i]}, []float32{g.loss[i]}); d > 1e-4 {
			t.Fatalf("step %d: loss %v on the GPU, %v on the CPU", i, g.loss[i], cpu.loss[i])
		}
	}
	params := func(r *run) [][]float32 {
		out := make([][]float32, len(r.net.Params))
		for i, p := range r.net.Params {
			out[i] = make([]float32, len(p.Data))
		}
		if err := r.tr.ReadParams(out); err != nil {
			t.Fatal(err)
		}
		st, err := r.tr.State()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, st.Buffers...)
		for _, s := range r.net.States() {
			out = append(out, s.Data)
		}
		return out
	}
	pg, pe, pc := params(g), params(e), params(cpu)
	for i := range pg {
		if d := relErr(pe[i], pg[i]); d > tol {
			t.Fatalf("state %d differs between replay and eager (rel %.2g)", i, d)
		}
		if d := relErr(pc[i], pg[i]); d > 1e-3 {
			t.Fatalf("state %d differs between the GPU and the CPU (rel %.2g)", i, d)
		}
	}
}

// TestStepLaunches counts the kernels of one LeNet-5 and one MLP training
// step on the emulated GPU (the H100 run counted 91 for LeNet-5 before the
// fusions; 49 now, with the own SGEMM's split-K sums): no fill runs in a
// step, and the count stays within a bound.
func TestStepLaunches(t *testing.T) {
	for _, c := range []struct {
		name string
		max  int
	}{{"lenet", 50}, {"mlp", 20}} {
		dev := cudaemu.New()
		be := exec.NewCUDABackendOn(dev, exec.CUDAInfo{Name: "emulated"})
		net, err := model.Build(specs()[c.name], 64, 1)
		if err != nil {
			t.Fatal(err)
		}
		tg, eg := net.ExecGraphs()
		tr, err := exec.NewTrainer(be, tg, eg, exec.Optim{Kind: "adam"})
		if err != nil {
			t.Fatal(err)
		}
		x, y := net.RandomBatch(rand.New(rand.NewSource(1)))
		if _, _, err := tr.Step(x, y, 1e-3); err != nil {
			t.Fatal(err)
		}
		dev.Counts()
		if _, _, err := tr.Step(x, y, 1e-3); err != nil {
			t.Fatal(err)
		}
		counts := dev.Counts()
		total := 0
		for _, n := range counts {
			total += n
		}
		t.Logf("%s at batch 64: %d kernels per step: %v", c.name, total, counts)
		if counts["gw_fill"] != 0 {
			t.Errorf("%s: %d fills in a step", c.name, counts["gw_fill"])
		}
		if total > c.max {
			t.Errorf("%s: %d kernels per step, more than %d", c.name, total, c.max)
		}
		be.Close()
	}
}

// TestCaptureFailureLeavesBackendUsable: an operation the driver does not
// capture (a synchronous copy) fails the capture, and the backend goes on
// working: the failure is returned, not kept.
func TestCaptureFailureLeavesBackendUsable(t *testing.T) {
	be := exec.NewCUDABackendOn(cudaemu.New(), exec.CUDAInfo{Name: "emulated"})
	defer be.Close()
	a, _ := be.Alloc(4)
	o, _ := be.Alloc(4)
	if _, err := be.Capture(func() { be.Upload(a, []float32{1, 2, 3, 4}) }); err == nil {
		t.Fatal("a synchronous copy was captured")
	}
	if err := be.Err(); err != nil {
		t.Fatalf("the failed capture left an error behind: %v", err)
	}
	be.Upload(a, []float32{1, -2, 3, -4})
	be.Unary(exec.OpNeg, a, o, 4)
	got := make([]float32, 4)
	if err := be.Download(got, o); err != nil || got[1] != 2 {
		t.Fatalf("after a failed capture: %v %v", got, err)
	}
}
