package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/gpu/internal/fakemachine"
	"gpuwizard/gpu/probe"

	"gpuwizard/gpu/nvml"
)

// fixture is the fake machine of testdata/root (copied, so a test may
// change it), two H100s behind nvmlfake and a clock the test moves.
type fixture struct {
	root string
	fsys fs.FS
	nv   nvml.Library
	util [2]int
	now  time.Time
}

// gpuProcs are the compute processes the mock lists: GPU 0 runs 4242 and
// torchrun's rank 0 (and a process of another container), GPU 1 runs
// 5301 and rank 1.
func newFixture(t *testing.T, gpuProcs ...[]nvml.ProcessInfo) *fixture {
	t.Helper()
	f := &fixture{root: copyRoot(t), util: [2]int{87, 3}, now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	if len(gpuProcs) == 0 {
		gpuProcs = [][]nvml.ProcessInfo{
			{{PID: 4242, UsedGPUMemory: 10240 << 20}, {PID: 5701, UsedGPUMemory: 20000 << 20}, {PID: 31337, UsedGPUMemory: 500 << 20}},
			{{PID: 5301, UsedGPUMemory: 2048 << 20}, {PID: 5702, UsedGPUMemory: 20100 << 20}},
		}
	}
	var specs []fakemachine.GPUSpec
	for _, ps := range gpuProcs {
		g := fakemachine.H100()
		g.UsedMiB, g.Processes = 30000, ps
		specs = append(specs, g)
	}
	s := fakemachine.MockNVML("580.95.05", 13000, specs...)
	for i := range specs {
		i := i
		s.Devices[i].GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{GPU: uint32(f.util[i%2])}, nvml.Success
		}
	}
	f.nv = s
	return f
}

func (f *fixture) options() Options {
	return Options{Root: f.root, FS: f.fsys, NVML: f.nv, Now: func() time.Time { return f.now },
		Machine: func(ctx context.Context, env map[string]string) *gpu.Facts {
			if env == nil {
				env = map[string]string{"PATH": "/usr/bin:/bin"}
			}
			return probe.Probe(ctx, probe.Options{Root: f.root, Environ: env, NVML: f.nv, Runner: fakemachine.Runner{},
				Timeout: 2 * time.Second, GOOS: "linux", GOARCH: "amd64", Home: env["HOME"], Cwd: "/home/ada/project"})
		}}
}

// watch samples pid once a (fake) second, n times, calling tick before
// each reading, and returns the report.
func (f *fixture) watch(t *testing.T, pid, n int, tick func(i int)) Report {
	t.Helper()
	w := New(f.options(), pid)
	defer w.Close()
	ctx := context.Background()
	for i := 0; i < n; i++ {
		if tick != nil {
			tick(i)
		}
		if err := w.Sample(ctx); err != nil {
			t.Fatal(err)
		}
		f.now = f.now.Add(time.Second)
	}
	return w.Report(ctx)
}

// busy makes pid use cores×100 % of the CPU from the next reading on.
func (f *fixture) busy(t *testing.T, pid int, cores float64) func(i int) {
	base := fakeProcByPID(pid).ticks
	return func(i int) { setTicks(t, f.root, pid, base+uint64(math.Round(float64(i)*cores*100))) }
}

func findingIDs(r Report) []string {
	var ids []string
	for _, f := range r.Findings {
		ids = append(ids, f.ID)
	}
	return ids
}

func mustFinding(t *testing.T, r Report, id string) gpu.Finding {
	t.Helper()
	for _, f := range r.Findings {
		if f.ID == id {
			return f
		}
	}
	t.Fatalf("no finding %s in %v\nverdict: %s", id, findingIDs(r), r.Verdict)
	return gpu.Finding{}
}

func fixText(f gpu.Finding) string {
	var b strings.Builder
	for _, s := range f.Fix {
		b.WriteString(s.Text + "\n" + s.Command + "\n")
	}
	return b.String()
}

func TestProcessOnGPU(t *testing.T) {
	f := newFixture(t)
	main, w1 := f.busy(t, 4242, 1.2), f.busy(t, 4243, 0.5)
	r := f.watch(t, 4242, 4, func(i int) { main(i); w1(i) })
	if !r.OnGPU || r.State != StateGPU {
		t.Fatalf("state %s on_gpu %v: %s", r.State, r.OnGPU, r.Verdict)
	}
	if want := "On GPU 0 (NVIDIA H100 80GB HBM3), 87 % busy, 10240 MiB"; r.Verdict != want {
		t.Fatalf("verdict %q, want %q", r.Verdict, want)
	}
	ok := mustFinding(t, r, "watch_on_gpu")
	if ok.Severity != gpu.SevOK || !contains(ok.Evidence, "NVML: PID 4242 (10240 MiB) among the compute processes of GPU 0") ||
		!contains(ok.Evidence, "utilisation over the last 3s: 87 87 87 87 %") || !contains(ok.Evidence, "libtorch_cuda.so") {
		t.Fatalf("on-GPU evidence: %q", ok.Evidence)
	}
	if len(r.Processes) != 3 || r.Processes[1].Role != "worker" || r.Processes[2].Role != "worker" {
		t.Fatalf("processes: %+v", r.Processes)
	}
	if !contains(r.Evidence, "children: 2 workers (DataLoader or multiprocessing) (4243, 4244)") {
		t.Fatalf("evidence: %q", r.Evidence)
	}
	// The main process at 120 %, one worker at 50 %.
	if !r.CPU.Measured || r.CPU.Percent != 170 || r.CPU.MainPercent != 120 || r.CPU.Cores != 8 || r.CPU.Threads != 28 {
		t.Fatalf("cpu: %+v", r.CPU)
	}
	if len(r.GPUs) != 1 || r.GPUs[0].ProcessMiB != 10240 || r.GPUs[0].UtilizationPct == nil || *r.GPUs[0].UtilizationPct != 87 {
		t.Fatalf("gpus: %+v", r.GPUs)
	}
	if r.Interpreter != venv+"/bin/python" || len(r.Frameworks) != 1 || r.Frameworks[0].Build != "cuda" || r.Frameworks[0].Version != "2.5.1+cu124" {
		t.Fatalf("interpreter %q frameworks %+v", r.Interpreter, r.Frameworks)
	}
}

func TestCUDALoadedButNoGPUContext(t *testing.T) {
	f := newFixture(t)
	r := f.watch(t, 5001, 3, f.busy(t, 5001, 1))
	if r.OnGPU || r.State != StateCPU || r.Cause != gpu.CauseDeviceMismatchInCode {
		t.Fatalf("state %s cause %s: %s", r.State, r.Cause, r.Verdict)
	}
	if !strings.HasPrefix(r.Verdict, "On the CPU: CUDA libraries are loaded but no GPU context or memory exists") {
		t.Fatalf("verdict %q", r.Verdict)
	}
	fd := mustFinding(t, r, "watch_cuda_unused")
	if !contains(fd.Evidence, "libcuda.so.1 is not loaded: CUDA was never initialised") ||
		!contains(fd.Evidence, "NVML: PID 5001 is not among the 3 compute processes of GPU 0") || !contains(fd.Evidence, "libtorch_cuda.so") {
		t.Fatalf("evidence %q", fd.Evidence)
	}
	if !strings.Contains(fixText(fd), "model.to(device)") {
		t.Fatalf("fix %s", fixText(fd))
	}
}

func TestCPUOnlyWheel(t *testing.T) {
	f := newFixture(t)
	r := f.watch(t, 5101, 3, f.busy(t, 5101, 1))
	if r.OnGPU || r.Cause != gpu.CauseCPUOnlyBuild || r.Verdict != "On the CPU: a CPU-only build of torch 2.5.1+cpu is loaded" {
		t.Fatalf("cause %s verdict %q", r.Cause, r.Verdict)
	}
	fd := mustFinding(t, r, "watch_cpu_only_build")
	if fd.Severity != gpu.SevError || !contains(fd.Evidence, cpuSite+"/torch/lib/libtorch_cpu.so") || !contains(fd.Evidence, "no libtorch_cuda.so") ||
		!contains(fd.Evidence, "torch/version.py") {
		t.Fatalf("evidence %q", fd.Evidence)
	}
	// The doctor's wheel advice for this interpreter is the fix.
	if fx := fixText(fd); !strings.Contains(fx, cpuVenv+"/bin/python -m pip install") || !strings.Contains(fx, "download.pytorch.org/whl/cu") {
		t.Fatalf("fix %s", fx)
	}
	for _, x := range r.Findings {
		if x.ID == "torch_cpu_only" {
			t.Fatal("the doctor's own cpu-only finding is folded into the watch's")
		}
	}
}

func TestVisibleDevicesHideTheGPU(t *testing.T) {
	f := newFixture(t)
	r := f.watch(t, 5201, 3, f.busy(t, 5201, 1))
	if r.OnGPU || r.Cause != gpu.CauseDeviceSelection || r.Verdict != `On the CPU: CUDA_VISIBLE_DEVICES="" hides every GPU` {
		t.Fatalf("cause %s verdict %q", r.Cause, r.Verdict)
	}
	fd := mustFinding(t, r, "watch_visible_devices_hide_gpus")
	if !contains(fd.Evidence, `/proc/5201/environ: CUDA_VISIBLE_DEVICES=""`) || !strings.Contains(fixText(fd), "env -u CUDA_VISIBLE_DEVICES "+venv+"/bin/python train.py --epochs 10") {
		t.Fatalf("finding %+v", fd)
	}
	if r.Environ["CUDA_VISIBLE_DEVICES"] != "" || len(r.Environ) == 0 {
		t.Fatalf("environ %v", r.Environ)
	}
	for _, x := range r.Findings {
		if x.Cause == gpu.CauseDeviceSelection && x.ID != fd.ID {
			t.Fatalf("the doctor's device-selection finding %s repeats the watch's", x.ID)
		}
	}
}

func TestStarvedGPU(t *testing.T) {
	f := newFixture(t)
	r := f.watch(t, 5301, 4, f.busy(t, 5301, 1))
	if !r.OnGPU || r.State != StateStarved {
		t.Fatalf("state %s: %s", r.State, r.Verdict)
	}
	if !strings.HasPrefix(r.Verdict, "On GPU 1 but starved: 3 % busy while the CPU is saturated") || !strings.Contains(r.Verdict, "data loading is the bottleneck") {
		t.Fatalf("verdict %q", r.Verdict)
	}
	fd := mustFinding(t, r, "watch_gpu_starved")
	if fd.Severity != gpu.SevWarning || !strings.Contains(fixText(fd), "num_workers=7, pin_memory=True") || !strings.Contains(fixText(fd), "batch size") {
		t.Fatalf("starved finding %+v", fd)
	}
	// The same GPU at 3 % with an idle CPU is not starved: the process
	// waits on something else (or is between epochs).
	f2 := newFixture(t)
	r2 := f2.watch(t, 5301, 4, nil)
	if r2.State != StateGPU {
		t.Fatalf("idle CPU: state %s", r2.State)
	}
}

func TestAnotherUsersProcess(t *testing.T) {
	f := newFixture(t)
	deny := map[string]bool{}
	for _, n := range []string{"maps", "environ", "exe", "cwd"} {
		deny["proc/5401/"+n] = true
	}
	f.fsys = denyFS{fsys: os.DirFS(f.root), deny: deny}
	r := f.watch(t, 5401, 3, nil)
	if r.OnGPU || r.State != StatePermission {
		t.Fatalf("state %s: %s", r.State, r.Verdict)
	}
	if !strings.Contains(r.Verdict, "belongs to bob") || !strings.Contains(r.Verdict, "permission denied") || !strings.Contains(r.Verdict, "NVML does not list it on any GPU") {
		t.Fatalf("verdict %q", r.Verdict)
	}
	fd := mustFinding(t, r, "watch_permission")
	if !strings.Contains(fixText(fd), "sudo -u bob gpuwizard watch 5401") || !contains(r.Evidence, "exe: permission denied") {
		t.Fatalf("finding %+v evidence %q", fd, r.Evidence)
	}
	// NVML needs no permission: listed on a GPU, it is on the GPU.
	g := newFixture(t, []nvml.ProcessInfo{{PID: 5401, UsedGPUMemory: 4096 << 20}})
	g.fsys = denyFS{fsys: os.DirFS(g.root), deny: deny}
	r = g.watch(t, 5401, 2, nil)
	if !r.OnGPU || r.State != StateGPU || !contains(mustFinding(t, r, "watch_on_gpu").Evidence, "cannot be read (the process belongs to bob)") {
		t.Fatalf("listed process of another user: %s %v", r.Verdict, r.Findings)
	}
}

func TestProcessThatExits(t *testing.T) {
	f := newFixture(t)
	w := New(f.options(), 5800)
	defer w.Close()
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		setTicks(t, f.root, 5800, uint64(100+i*50))
		if err := w.Sample(ctx); err != nil {
			t.Fatal(err)
		}
		f.now = f.now.Add(time.Second)
	}
	if r := w.Report(ctx); r.State != StateCPU || !r.Alive {
		t.Fatalf("alive: %s %s", r.State, r.Verdict)
	}
	if err := os.RemoveAll(filepath.Join(f.root, "proc/5800")); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(time.Second)
	if err := w.Sample(ctx); err != nil {
		t.Fatalf("a process that ends is no error: %v", err)
	}
	w.SetExitStatus(0)
	if !w.Ended() {
		t.Fatal("not ended")
	}
	r := w.Report(ctx)
	if !r.Final || r.Alive || r.State != StateExited || r.Summary == nil {
		t.Fatalf("final report: %+v", r)
	}
	s := r.Summary
	if s.Readings != 3 || s.OnGPUReadings != 0 || s.MeanCPUPct != 50 || s.ExitStatus == nil || s.LastState != StateCPU || !s.Ended {
		t.Fatalf("summary %+v", s)
	}
	if !strings.HasPrefix(r.Verdict, "Process 5800 (python quick.py) ended after 4s with exit status 0. It was on no GPU in 3 readings (On the CPU: CUDA libraries are loaded") {
		t.Fatalf("verdict %q", r.Verdict)
	}
	// Sampling after the end changes nothing.
	if err := w.Sample(ctx); err != nil || w.Summary().Readings != 3 {
		t.Fatalf("after the end: %v %+v", err, w.Summary())
	}
}

func TestNoProcess(t *testing.T) {
	f := newFixture(t)
	w := New(f.options(), 7777)
	defer w.Close()
	if err := w.Sample(context.Background()); !errors.Is(err, ErrNoProcess) {
		t.Fatalf("want ErrNoProcess, got %v", err)
	}
}

// Debian's CPU-only torch on a machine with no NVIDIA GPU and no driver:
// NVML's absence is an answer.
func TestNoNVIDIAGPU(t *testing.T) {
	f := newFixture(t)
	f.nv = fakemachine.FailingNVML(nvml.ErrorLibraryNotFound)
	for _, d := range []string{"sys/bus/pci/devices/0000:01:00.0", "sys/bus/pci/devices/0000:02:00.0", "proc/driver", "proc/modules"} {
		if err := os.RemoveAll(filepath.Join(f.root, d)); err != nil {
			t.Fatal(err)
		}
	}
	r := f.watch(t, 5900, 3, f.busy(t, 5900, 1))
	if r.OnGPU || r.State != StateCPU || r.Verdict != "On the CPU: no NVIDIA GPU on this machine" || r.NVML != gpu.NVMLLibraryNotFound {
		t.Fatalf("state %s nvml %s verdict %q", r.State, r.NVML, r.Verdict)
	}
	fd := mustFinding(t, r, "watch_no_gpu")
	if !contains(fd.Evidence, "loaded: /usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0 (torch 1.13.0a0, CPU-only build)") {
		t.Fatalf("evidence %q", fd.Evidence)
	}
	if cpu := mustFinding(t, r, "watch_cpu_only_build"); cpu.Severity != gpu.SevInfo || !strings.Contains(cpu.Title, "right for this machine") {
		t.Fatalf("cpu-only on a machine without GPU: %+v", cpu)
	}
	if r.Interpreter != "/usr/bin/python3" || !contains(r.Evidence, "python: /usr/bin/python3 (system 3.11: torch 1.13.0a0 (CPU-only))") {
		t.Fatalf("interpreter %q evidence %q", r.Interpreter, r.Evidence)
	}
}

func TestTensorFlowWithoutCUDALibraries(t *testing.T) {
	f := newFixture(t)
	r := f.watch(t, 5501, 3, f.busy(t, 5501, 4))
	if r.OnGPU || r.Cause != gpu.CauseTFGPULibs || r.Verdict != "On the CPU: TensorFlow could not load its CUDA libraries" {
		t.Fatalf("cause %s verdict %q findings %v", r.Cause, r.Verdict, findingIDs(r))
	}
	fd := mustFinding(t, r, "watch_tf_without_cuda_libs")
	if !strings.Contains(fd.Title, "TensorFlow 2.15.0") || !strings.Contains(fixText(fd), "tensorflow[and-cuda]") || !strings.Contains(fixText(fd), "list_physical_devices") {
		t.Fatalf("finding %+v", fd)
	}
	if r.Interpreter != tfEnv+"/bin/python" {
		t.Fatalf("interpreter %q", r.Interpreter)
	}
}

func TestTensorFlowOpenedNoGPU(t *testing.T) {
	f := newFixture(t)
	r := f.watch(t, 5502, 3, f.busy(t, 5502, 2))
	if r.OnGPU || r.Cause != gpu.CauseTFGPULibs || r.Verdict != "On the CPU: TensorFlow opened no GPU" {
		t.Fatalf("cause %s verdict %q findings %v", r.Cause, r.Verdict, findingIDs(r))
	}
	fd := mustFinding(t, r, "watch_tf_no_gpu_device")
	if !strings.Contains(fd.Title, "TensorFlow 2.15.0 loaded CUDA libraries") || !contains(fd.Evidence, "libcudart.so.12") || !strings.Contains(fixText(fd), "list_physical_devices") {
		t.Fatalf("finding %+v", fd)
	}
}

func TestYOLOAskedForTheCPU(t *testing.T) {
	f := newFixture(t)
	r := f.watch(t, 5601, 3, f.busy(t, 5601, 2))
	if r.OnGPU || r.Cause != gpu.CauseDeviceSelection || r.Verdict != "On the CPU: the command line asks for it (device=cpu)" {
		t.Fatalf("cause %s verdict %q", r.Cause, r.Verdict)
	}
	fd := mustFinding(t, r, "watch_command_asks_cpu")
	if want := venv + "/bin/python " + venv + "/bin/yolo train data=coco8.yaml model=yolo11n.pt device=0"; fd.Fix[0].Command != want {
		t.Fatalf("fix %q, want %q", fd.Fix[0].Command, want)
	}
	// The device_mismatch finding follows; its fix speaks Ultralytics.
	if fx := fixText(mustFinding(t, r, "watch_cuda_unused")); !strings.Contains(fx, "yolo train ... device=0") {
		t.Fatalf("fix %s", fx)
	}
}

func TestTorchrunRanks(t *testing.T) {
	f := newFixture(t)
	r := f.watch(t, 5700, 2, nil)
	if !r.OnGPU || r.State != StateGPU || len(r.GPUs) != 2 || r.GPUs[0].PIDs[0] != 5701 || r.GPUs[1].PIDs[0] != 5702 {
		t.Fatalf("torchrun: %s %+v", r.Verdict, r.GPUs)
	}
	if !strings.HasPrefix(r.Verdict, "On GPU 0 (NVIDIA H100 80GB HBM3), 87 % busy, 20000 MiB; GPU 1 (NVIDIA H100 80GB HBM3), 3 % busy, 20100 MiB") {
		t.Fatalf("verdict %q", r.Verdict)
	}
	if len(r.Processes) != 3 || r.Processes[1].Role != "rank 0" || r.Processes[2].Role != "rank 1" || r.Processes[1].GPUMiB != 20000 {
		t.Fatalf("processes %+v", r.Processes)
	}
	if !contains(r.Evidence, "children: 2 torchrun ranks (5701 rank 0, 5702 rank 1)") {
		t.Fatalf("evidence %q", r.Evidence)
	}
}

func TestNoFrameworkYet(t *testing.T) {
	f := newFixture(t)
	r := f.watch(t, 6000, 2, nil)
	if r.OnGPU || r.State != StateCPU || !strings.HasPrefix(r.Verdict, "On the CPU: no deep-learning framework and no CUDA library is loaded (yet") {
		t.Fatalf("verdict %q", r.Verdict)
	}
}

func TestListTrainings(t *testing.T) {
	f := newFixture(t)
	l := NewLister(f.options(), 1000)
	defer l.Close()
	ctx := context.Background()
	if _, err := l.List(ctx); err != nil {
		t.Fatal(err)
	}
	setTicks(t, f.root, 4242, 5000+150)
	setTicks(t, f.root, 4243, 800+50)
	f.now = f.now.Add(time.Second)
	cs, err := l.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	byPID := map[int]Candidate{}
	for _, c := range cs {
		pids = append(pids, c.PID)
		byPID[c.PID] = c
	}
	// On a GPU first (4242, 5301, torchrun), then by CPU use; the bash
	// shell, the http.server with no framework, bob's process and the
	// workers and ranks (folded into their parents) are left out.
	want := map[int]bool{4242: true, 5001: true, 5101: true, 5201: true, 5301: true, 5501: true, 5502: true, 5601: true, 5700: true, 5800: true, 5900: true}
	if len(cs) != len(want) || cs[0].PID != 4242 || !cs[0].OnGPU || !cs[1].OnGPU || !cs[2].OnGPU {
		t.Fatalf("candidates %v", pids)
	}
	for _, c := range cs {
		if !want[c.PID] {
			t.Fatalf("unexpected candidate %d in %v", c.PID, pids)
		}
	}
	c := byPID[4242]
	if c.Children != 2 || c.CPUPct != 200 || c.GPUMiB != 10240 || len(c.GPUs) != 1 || c.GPUs[0] != 0 || c.Frameworks[0] != "torch (CUDA)" || c.Threads != 28 {
		t.Fatalf("4242: %+v", c)
	}
	if tr := byPID[5700]; tr.Children != 2 || tr.GPUMiB != 40100 || len(tr.GPUs) != 2 {
		t.Fatalf("torchrun: %+v", tr)
	}
	if y := byPID[5601]; strings.Join(y.Frameworks, ",") != "torch (CUDA),yolo" {
		t.Fatalf("yolo: %+v", y)
	}
	if d := byPID[5900]; strings.Join(d.Frameworks, ",") != "torch (CPU-only)" {
		t.Fatalf("debian torch: %+v", d)
	}
	// Every user's: bob's training too.
	all := NewLister(f.options(), -1)
	defer all.Close()
	cs, _ = all.List(ctx)
	found := false
	for _, c := range cs {
		found = found || c.PID == 5401
	}
	if !found {
		t.Fatal("uid -1 lists every user's trainings")
	}
}

func TestReportJSONAndText(t *testing.T) {
	f := newFixture(t)
	r := f.watch(t, 5201, 3, f.busy(t, 5201, 1))
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"on_gpu", "verdict", "findings", "evidence", "state", "cpu", "libraries", "nvml", "pid"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("JSON lacks %q: %s", k, b)
		}
	}
	fs := m["findings"].([]any)
	first := fs[0].(map[string]any)
	if first["cause"] != "device_selection" || first["severity"] != "error" || first["evidence"] == nil || first["fix"] == nil {
		t.Fatalf("findings in the doctor's format: %v", first)
	}
	var txt bytes.Buffer
	if err := r.WriteText(&txt, false); err != nil {
		t.Fatal(err)
	}
	out := txt.String()
	for _, want := range []string{`On the CPU: CUDA_VISIBLE_DEVICES="" hides every GPU`, "✖ ERROR", "$ env -u CUDA_VISIBLE_DEVICES", "Evidence\n", "  environ    CUDA_VISIBLE_DEVICES=\"\""} {
		if !strings.Contains(out, want) {
			t.Fatalf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Fatal("colour without a terminal")
	}
	var col bytes.Buffer
	r.WriteText(&col, true)
	if !strings.Contains(col.String(), "\x1b[1;31m") {
		t.Fatal("no colour on a terminal")
	}
	if l := r.Line(); !strings.HasPrefix(l, "[0:03] PID 5201 (python train.py --epochs 10): On the CPU: CUDA_VISIBLE_DEVICES=\"\" hides every GPU · CPU 100 %, 9 threads") {
		t.Fatalf("line %q", l)
	}
}

func TestParsers(t *testing.T) {
	pr, err := parseStat(42, "42 (py (train) x) R 7 42 7 0 -1 4194560 1 0 0 0 250 50 0 0 20 0 12 0 99 0 0")
	if err != nil || pr.Comm != "py (train) x" || pr.State != 'R' || pr.PPID != 7 || pr.Ticks != 300 || pr.Threads != 12 || pr.StartTime != 99 {
		t.Fatalf("%+v %v", pr, err)
	}
	if _, err := parseStat(1, "1 (x) S 0"); err == nil {
		t.Fatal("short stat accepted")
	}
	files := parseMaps("7f00-7f01 r-xp 00000000 fd:01 12 /opt/my env/lib/libtorch_cuda.so\n" +
		"7f01-7f02 r--p 00000000 fd:01 13 /tmp/libcudart-e409450e.so.11.0 (deleted)\n" +
		"7f02-7f03 rw-p 00000000 00:00 0 [heap]\n7f03-7f04 rw-p 00000000 00:00 0\n")
	if len(files) != 2 || files[0] != "/opt/my env/lib/libtorch_cuda.so" || files[1] != "/tmp/libcudart-e409450e.so.11.0" {
		t.Fatalf("maps %q", files)
	}
	for file, kind := range map[string]string{
		"/x/libcudart-e409450e.so.11.0": LibCUDART, "/x/libtorch_cuda_cu.so": LibTorchCUDA, "/x/libcudnn_ops_infer.so.8": LibCuDNN,
		"/usr/lib/libcuda.so.1": LibCUDA, "/x/libnvidia-ml.so.1": LibNVML, "/x/libcublasLt.so.12": LibCuBLAS,
		"/x/_pywrap_tensorflow_internal.so": LibTensorFlow, "/x/libpython3.12.so.1.0": "", "/x/libcudart_static.a": "",
	} {
		if got := libKind(file); got != kind {
			t.Errorf("libKind(%s) = %q, want %q", file, got, kind)
		}
	}
	if n := countCPUList("0-3,8,10-11"); n != 7 {
		t.Fatalf("cpu list: %d", n)
	}
	if s := frameworkSite([]string{"/v/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so"}, "torch"); s != "/v/lib/python3.12/site-packages" {
		t.Fatalf("site %q", s)
	}
	if lowerFirst("The driver is old") != "the driver is old" || lowerFirst("CUDA is old") != "CUDA is old" || lowerFirst("TensorFlow x") != "TensorFlow x" {
		t.Fatal("lowerFirst")
	}
}

func TestEarly(t *testing.T) {
	f := newFixture(t)
	if r := f.watch(t, 6000, 2, nil); !r.Early() {
		t.Fatal("a Python with no framework yet: early")
	}
	if r := f.watch(t, 4000, 2, nil); r.Early() {
		t.Fatal("a shell is not early: it will never load a framework")
	}
	if r := f.watch(t, 5101, 2, nil); r.Early() {
		t.Fatal("torch is loaded: not early")
	}
}

// In a container NVML lists the host's PIDs: a process with CUDA loaded
// and no visible entry may be one of them, so the verdict is a warning.
func TestContainerPIDNamespace(t *testing.T) {
	f := newFixture(t)
	if err := os.WriteFile(filepath.Join(f.root, ".dockerenv"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := f.watch(t, 5001, 2, nil)
	fd := mustFinding(t, r, "watch_cuda_unused")
	if fd.Severity != gpu.SevWarning || !contains(fd.Evidence, "inside a container: NVML lists processes by the host's PIDs") {
		t.Fatalf("%+v", fd)
	}
	// Without foreign PIDs (every listed process is visible) it stays an error.
	g := newFixture(t, []nvml.ProcessInfo{{PID: 4242, UsedGPUMemory: 1 << 30}})
	if err := os.WriteFile(filepath.Join(g.root, ".dockerenv"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if fd := mustFinding(t, g.watch(t, 5001, 2, nil), "watch_cuda_unused"); fd.Severity != gpu.SevError {
		t.Fatalf("%+v", fd)
	}
}
