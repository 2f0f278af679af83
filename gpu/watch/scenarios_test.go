package watch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/gpu/nvml"
	"gpuwizard/gpu/nvml/nvmlfake"
)

// The cases of issue 21: where GPU training really runs (containers, WSL 2,
// MIG, start-up, workers, wrappers), each on the fake machine.

func evidenceHas(r Report, sub string) bool {
	if contains(r.Evidence, sub) {
		return true
	}
	for _, f := range r.Findings {
		if contains(f.Evidence, sub) {
			return true
		}
	}
	return false
}

// Watching a DataLoader worker (the busiest Python in top) leads to the
// training's main process, which is on the GPU.
func TestLeadsFromWorkerToMainProcess(t *testing.T) {
	f := newFixture(t)
	r := f.watch(t, 4243, 3, f.busy(t, 4243, 1))
	if r.PID != 4242 || r.AskedPID != 4243 || !r.OnGPU || r.State != StateGPU {
		t.Fatalf("pid %d asked %d state %s: %s", r.PID, r.AskedPID, r.State, r.Verdict)
	}
	if !contains(r.Evidence, "led: PID 4243 is a DataLoader worker (a forked copy) of PID 4242 (python train.py --epochs 10)") {
		t.Fatalf("evidence %q", r.Evidence)
	}
	// A rank leads to torchrun, whose tree holds both ranks.
	r = f.watch(t, 5702, 2, nil)
	if r.PID != 5700 || r.AskedPID != 5702 || len(r.GPUs) != 2 || !contains(r.Evidence, "PID 5702 is rank 1 of torchrun, PID 5700") {
		t.Fatalf("rank: pid %d gpus %+v evidence %q", r.PID, r.GPUs, r.Evidence)
	}
}

// A PID that starts as `env CUDA_VISIBLE_DEVICES= python train.py` keeps
// its number when env execs python: its command line, environment and
// libraries are read again, so the variable is seen.
func TestExecRereadsIdentity(t *testing.T) {
	f := newFixture(t)
	after := fakeProcByPID(6100)
	before := after
	before.comm, before.exe, before.environ = "env", "/usr/bin/env", adaEnv
	before.cmdline = append([]string{"/usr/bin/env", "CUDA_VISIBLE_DEVICES="}, train...)
	before.maps, before.fds = []string{"/usr/bin/env", "/usr/lib/x86_64-linux-gnu/libc.so.6"}, nil
	f.setProc(before)
	w := New(f.options(), 6100)
	defer w.Close()
	ctx := context.Background()
	for i := 0; i < 4; i++ {
		if i == 1 {
			f.setProc(after)
		}
		if err := w.Sample(ctx); err != nil {
			t.Fatal(err)
		}
		f.now = f.now.Add(time.Second)
	}
	r := w.Report(ctx)
	if r.State != StateCPU || r.Verdict != `On the CPU: CUDA_VISIBLE_DEVICES="" hides every GPU` || r.Interpreter != venv+"/bin/python" {
		t.Fatalf("state %s interpreter %q: %s", r.State, r.Interpreter, r.Verdict)
	}
	if !contains(r.Evidence, "exec: PID 6100 ran env CUDA_VISIBLE_DEVICES= "+venv+"/bin/python train.py --epochs 10 before its current program") ||
		!evidenceHas(r, "was started as env CUDA_VISIBLE_DEVICES=") {
		t.Fatalf("evidence %q %v", r.Evidence, r.Findings)
	}
}

// Under a shell script, the training is the child that loaded torch: its
// environment and interpreter are judged, not bash's.
func TestWrapperScriptFocusesOnTheTraining(t *testing.T) {
	f := newFixture(t)
	r := f.watch(t, 6500, 3, f.busy(t, 6501, 1))
	if r.Verdict != `On the CPU: CUDA_VISIBLE_DEVICES="-1" hides every GPU` || r.Interpreter != venv+"/bin/python" || r.Command != "bash run.sh" {
		t.Fatalf("verdict %q interpreter %q command %q", r.Verdict, r.Interpreter, r.Command)
	}
	if !contains(r.Evidence, "watched: PID 6500 (bash run.sh), whose tree holds the training process") || !contains(r.Evidence, "process: PID 6501") {
		t.Fatalf("evidence %q", r.Evidence)
	}
}

// A program that is not Python is not "the interpreter", and it is not a
// training.
func TestNotPython(t *testing.T) {
	f := newFixture(t)
	r := f.watch(t, 6300, 3, nil)
	if r.State != StateNotTraining || r.Verdict != "Not a training: sleep 1000 has loaded no deep-learning framework or CUDA library" || r.Interpreter != "" {
		t.Fatalf("state %s interpreter %q: %s", r.State, r.Interpreter, r.Verdict)
	}
	for _, e := range r.Evidence {
		if strings.HasPrefix(e, "python:") {
			t.Fatalf("a python line for sleep: %q", e)
		}
	}
	// gpuwizard train is a training, told to use the CPU; it has no Python.
	r = f.watch(t, 6600, 3, f.busy(t, 6600, 2))
	if r.State != StateCPU || r.Verdict != "On the CPU: the command line asks for it (--device cpu)" || r.Interpreter != "" {
		t.Fatalf("gpuwizard train: %s %q %q", r.State, r.Verdict, r.Interpreter)
	}
	if fd := mustFinding(t, r, "watch_command_asks_cpu"); fd.Fix[0].Command != "/home/ada/bin/gpuwizard train --device cuda --epochs 3" {
		t.Fatalf("fix %q", fd.Fix[0].Command)
	}
}

// An idle Jupyter kernel that imported CUDA torch is idle, not "never
// moved".
func TestIdleJupyterKernel(t *testing.T) {
	f := newFixture(t)
	r := f.watch(t, 6200, 4, nil)
	if r.State != StateIdle || r.OnGPU || r.Cause != "" ||
		r.Verdict != "Idle: torch 2.5.1+cu124 (CUDA build) loaded, but the process does nothing (CPU 0 %) and holds no GPU memory" {
		t.Fatalf("state %s cause %q: %s", r.State, r.Cause, r.Verdict)
	}
	mustFinding(t, r, "watch_idle")
}

// A run that has not reached the GPU yet (dataset build, weight download)
// is setting up; past its grace, still without a GPU context while it
// works, the model was never moved.
func TestSettingUpThenNeverMoved(t *testing.T) {
	f := newFixture(t)
	w := New(f.options(), 6400)
	defer w.Close()
	ctx := context.Background()
	busy := f.busy(t, 6400, 1)
	step := func(from, n int) {
		for i := from; i < from+n; i++ {
			busy(i)
			if err := w.Sample(ctx); err != nil {
				t.Fatal(err)
			}
			f.now = f.now.Add(time.Second)
		}
	}
	step(0, 3)
	r := w.Report(ctx)
	if r.State != StateSettingUp || r.Verdict != "Setting up: torch 2.5.1+cu124 (CUDA build) loaded, no GPU context yet (started 8s ago)" || r.Cause != "" || r.AgeS != 8 {
		t.Fatalf("young: state %s age %v: %s", r.State, r.AgeS, r.Verdict)
	}
	var s Settler
	if s.Add(r) || s.Add(r) || s.Add(r) {
		t.Fatal("setting up never settles")
	}
	f.now = f.now.Add(time.Minute)
	step(60, 4)
	r = w.Report(ctx)
	if r.State != StateCPU || !strings.HasPrefix(r.Verdict, "On the CPU: CUDA libraries are loaded but no GPU context or memory exists") {
		t.Fatalf("after the grace: state %s: %s", r.State, r.Verdict)
	}
}

// Command lines that ask for the CPU, in the words of the tools that
// train.
func TestCommandLineAsksCPU(t *testing.T) {
	for _, c := range []struct {
		args      []string
		arg, fix  string
		fixedArgs string
	}{
		{[]string{"python", "t.py", "--no_cuda"}, "--no_cuda", "Leave the option out:", "python t.py"},
		{[]string{"python", "t.py", "--use_cpu", "--epochs", "3"}, "--use_cpu", "Leave the option out:", "python t.py --epochs 3"},
		{[]string{"python", "t.py", "--accelerator", "cpu"}, "--accelerator cpu", "Ask for the GPU instead:", "python t.py --accelerator gpu"},
		{[]string{"python", "t.py", "--accelerator=cpu"}, "--accelerator=cpu", "Ask for the GPU instead:", "python t.py --accelerator=gpu"},
		{[]string{"python", "main.py", "fit", "--trainer.accelerator=cpu"}, "--trainer.accelerator=cpu", "Ask for the GPU instead:", "python main.py fit --trainer.accelerator=gpu"},
		{[]string{"python", "t.py", "-d", "cpu"}, "-d cpu", "Ask for the GPU instead:", "python t.py -d cuda"},
		{[]string{"python", "t.py", "--device", "CPU"}, "--device CPU", "Ask for the GPU instead:", "python t.py --device cuda"},
		{[]string{"yolo", "train", "device=cpu"}, "device=cpu", "Ask for the GPU instead:", "yolo train device=0"},
		{[]string{"python", "t.py", "--gpus", "0"}, "--gpus 0", "Ask for the GPU instead:", "python t.py --gpus 1"},
		{[]string{"python", "t.py", "--no-cuda=true"}, "--no-cuda=true", "Leave the option out:", "python t.py"},
	} {
		v := &view{id: identity{pid: 1, cmdline: c.args}, src: newProcFS(os.DirFS(t.TempDir()), 100)}
		f, ok := v.commandAsksCPU()
		if !ok || !strings.Contains(f.Title, "("+c.arg+")") || f.Fix[0].Text != c.fix || f.Fix[0].Command != c.fixedArgs {
			t.Errorf("%q: ok %v title %q fix %+v", c.args, ok, f.Title, f.Fix)
		}
	}
	for _, args := range [][]string{{"python", "t.py", "--device", "cuda"}, {"python", "t.py", "--cpus", "4"}, {"python", "-d", "data/"}, {"cpu", "x"}} {
		v := &view{id: identity{pid: 1, cmdline: args}}
		if _, ok := v.commandAsksCPU(); ok {
			t.Errorf("%q: asks for the CPU?", args)
		}
	}
	// And on the fake machine: a Hugging Face script told --no_cuda.
	f := newFixture(t)
	r := f.watch(t, 6700, 3, f.busy(t, 6700, 1))
	if r.Verdict != "On the CPU: the command line asks for it (--no_cuda)" {
		t.Fatalf("verdict %q", r.Verdict)
	}
}

// Workers pegged while the main process waits starve the GPU.
func TestStarvedByWorkers(t *testing.T) {
	f := newFixture(t)
	ticks := []func(int){f.busy(t, 6800, 0.05)}
	for pid := 6801; pid <= 6804; pid++ {
		ticks = append(ticks, f.busy(t, pid, 1))
	}
	r := f.watch(t, 6800, 4, func(i int) {
		for _, tk := range ticks {
			tk(i)
		}
	})
	if r.State != StateStarved || r.Verdict != "On GPU 1 but starved: 3 % busy while its 4 workers are busy (100 % of a core each) and the main process waits for them (5 %): data loading is the bottleneck" {
		t.Fatalf("state %s: %s", r.State, r.Verdict)
	}
	if r.CPU.WorkersPercent == nil || *r.CPU.WorkersPercent != 100 || r.CPU.Percent != 405 {
		t.Fatalf("cpu %+v", r.CPU)
	}
}

// cgroupDir is the fake processes' cgroup under sys/fs/cgroup.
const cgroupDir = "sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope"

// A Docker --cpus limit: the tree fills its 2 cores on an 8-core machine;
// another limit throttles a bursty loader.
func TestStarvedByCgroupLimit(t *testing.T) {
	f := newFixture(t)
	f.write(t, "sys/fs/cgroup/cgroup.controllers", "cpu memory\n")
	f.write(t, cgroupDir+"/cpu.max", "200000 100000\n")
	ticks := []func(int){f.busy(t, 6800, 0.1)}
	for pid := 6801; pid <= 6804; pid++ {
		ticks = append(ticks, f.busy(t, pid, 0.45))
	}
	all := func(i int) {
		for _, tk := range ticks {
			tk(i)
		}
		f.write(t, cgroupDir+"/cpu.stat", fmt.Sprintf("usage_usec 1\nnr_periods %d\nnr_throttled %d\nthrottled_usec 5\n", 100+10*i, 20+i))
	}
	r := f.watch(t, 6800, 4, all)
	if r.State != StateStarved || !strings.Contains(r.Verdict, "while the CPU is saturated (190 % of 8 cores, 10 % in the main process; its cgroup may use 2 cores)") {
		t.Fatalf("state %s: %s", r.State, r.Verdict)
	}
	if r.CPU.CgroupCores != 2 || r.CPU.ThrottledPct == nil || *r.CPU.ThrottledPct != 10 {
		t.Fatalf("cpu %+v", r.CPU)
	}
	if fx := fixText(mustFinding(t, r, "watch_gpu_starved")); !strings.Contains(fx, "docker run --cpus") {
		t.Fatalf("fix %s", fx)
	}
	// A 4-core limit, the tree at 1.9 cores, throttled in half the periods.
	f.write(t, cgroupDir+"/cpu.max", "400000 100000\n")
	r = f.watch(t, 6800, 4, func(i int) {
		all(i)
		f.write(t, cgroupDir+"/cpu.stat", fmt.Sprintf("nr_periods %d\nnr_throttled %d\n", 100+10*i, 20+5*i))
	})
	if r.State != StateStarved || !strings.Contains(r.Verdict, "its cgroup's CPU limit (4 cores) throttles it in 50 % of periods") {
		t.Fatalf("throttled: state %s: %s", r.State, r.Verdict)
	}
}

// Other programs hold the cores: the workers wait on the run queue.
func TestStarvedByContention(t *testing.T) {
	f := newFixture(t)
	ticks := []func(int){f.busy(t, 6800, 0.1)}
	for pid := 6801; pid <= 6804; pid++ {
		ticks = append(ticks, f.busy(t, pid, 0.6))
	}
	r := f.watch(t, 6800, 4, func(i int) {
		for _, tk := range ticks {
			tk(i)
		}
		for pid := 6801; pid <= 6804; pid++ {
			run := uint64(1000+i*600) * 1_000_000
			wait := uint64(i*400) * 1_000_000 // 40 % of each second
			f.write(t, fmt.Sprintf("proc/%d/schedstat", pid), fmt.Sprintf("%d %d 10\n", run, wait))
		}
	})
	if r.State != StateStarved || !strings.Contains(r.Verdict, "it waits for a CPU 40 % of the time (other programs hold the cores)") || r.CPU.RunQueueWait == nil {
		t.Fatalf("state %s cpu %+v: %s", r.State, r.CPU, r.Verdict)
	}
	// Without the waits, the same use (250 % of 8 cores) is no starvation.
	g := newFixture(t)
	ticks = []func(int){g.busy(t, 6800, 0.1)}
	for pid := 6801; pid <= 6804; pid++ {
		ticks = append(ticks, g.busy(t, pid, 0.6))
	}
	if r := g.watch(t, 6800, 4, func(i int) {
		for _, tk := range ticks {
			tk(i)
		}
	}); r.State != StateGPU {
		t.Fatalf("no contention: %s %s", r.State, r.Verdict)
	}
}

// In a container NVML names processes by host PIDs: the training holds
// GPU 0's device file, and GPU 0 runs a process this /proc cannot show.
func TestContainerSeenThroughDeviceFiles(t *testing.T) {
	f := newFixture(t)
	f.write(t, ".dockerenv", "")
	r := f.watch(t, 6900, 3, f.busy(t, 6900, 1))
	if !r.OnGPU || r.State != StateGPU || !strings.HasPrefix(r.Verdict, "On GPU 0 (NVIDIA H100 80GB HBM3), 87 % busy, as far as can be seen (it holds the GPU's device file open; in a container NVML names processes by host PIDs") {
		t.Fatalf("state %s: %s", r.State, r.Verdict)
	}
	if len(r.GPUs) != 1 || r.GPUs[0].Seen != SeenDevice || r.GPUs[0].ProcessMemoryKnown || len(r.Unseen) == 0 {
		t.Fatalf("gpus %+v unseen %q", r.GPUs, r.Unseen)
	}
	fd := mustFinding(t, r, "watch_gpu_unconfirmed")
	if !contains(fd.Evidence, "device: /dev/nvidia0 open in PID 6900, mapped in PID 6900") || !contains(fd.Evidence, "host PIDs 31337, 500 MiB") ||
		!strings.Contains(fixText(fd), "docker top") {
		t.Fatalf("finding %+v", fd)
	}
	// The GPU stays idle while the process works: probably the CPU.
	g := newFixture(t)
	g.util[0] = 0
	g.write(t, ".dockerenv", "")
	r = g.watch(t, 6900, 3, g.busy(t, 6900, 1))
	if r.OnGPU || r.State != StateCPU || !strings.HasPrefix(r.Verdict, "Probably on the CPU: CUDA is open but GPU 0 stays idle while the process works") {
		t.Fatalf("idle GPU: %s %s", r.State, r.Verdict)
	}
	// Outside a container a process NVML does not list has no context.
	h := newFixture(t)
	r = h.watch(t, 6900, 3, h.busy(t, 6900, 1))
	if r.OnGPU || !strings.HasPrefix(r.Verdict, "On the CPU: CUDA libraries are loaded but no GPU context") {
		t.Fatalf("no container: %s", r.Verdict)
	}
}

// WSL 2: NVML gives no per-process data; CUDA is open through /dev/dxg.
func TestWSL2(t *testing.T) {
	f := newFixture(t, nil, nil)
	f.write(t, "proc/sys/kernel/osrelease", "5.15.167.4-microsoft-standard-WSL2\n")
	f.write(t, "usr/lib/wsl/lib/libcuda.so.1", "")
	p := fakeProcByPID(6900)
	p.maps = cat(baseLibs, torchCUDA, []string{"/usr/lib/wsl/lib/libcuda.so.1", "/dev/dxg"})
	p.fds = []string{"/dev/dxg"}
	f.setProc(p)
	r := f.watch(t, 6900, 3, f.busy(t, 6900, 1))
	if !r.OnGPU || r.State != StateGPU || !strings.Contains(r.Verdict, "as far as can be seen (CUDA is open through /dev/dxg; WSL 2 gives no per-process GPU data)") {
		t.Fatalf("state %s: %s", r.State, r.Verdict)
	}
	if len(r.Unseen) == 0 || !strings.Contains(r.Unseen[0], "WSL 2") || !strings.Contains(fixText(r.Findings[0]), "Task Manager") {
		t.Fatalf("unseen %q findings %+v", r.Unseen, r.Findings)
	}
	// A CUDA torch that never started CUDA is not on the GPU there either.
	r = f.watch(t, 5001, 3, f.busy(t, 5001, 1))
	if r.OnGPU || !strings.HasPrefix(r.Verdict, "On the CPU: CUDA libraries are loaded but no GPU context") {
		t.Fatalf("5001 under WSL: %s", r.Verdict)
	}
}

// MIG: NVML lists processes to root only and gives no utilisation.
func TestMIG(t *testing.T) {
	f := newFixture(t)
	d := f.nv.(*nvmlfake.Library).Devices[0]
	d.GetMigModeFunc = func() (int, int, nvml.Return) { return nvml.MIGEnable, nvml.MIGEnable, nvml.Success }
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.ErrorNoPermission }
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ErrorNotSupported }
	p := fakeProcByPID(6900)
	p.fds = append(p.fds, "/dev/nvidia-caps/nvidia-cap21")
	f.setProc(p)
	r := f.watch(t, 6900, 3, f.busy(t, 6900, 1))
	if !r.OnGPU || r.State != StateGPU || !strings.Contains(r.Verdict, "as far as can be seen (it holds the GPU's device file open; in MIG mode NVML does not list the processes to this user)") {
		t.Fatalf("state %s: %s", r.State, r.Verdict)
	}
	if !strings.Contains(strings.Join(r.Unseen, "; "), "MIG instance's utilisation") || !evidenceHas(r, "ERROR_NO_PERMISSION") || !evidenceHas(r, "/dev/nvidia-caps/nvidia-cap21 open in PID 6900") {
		t.Fatalf("unseen %q evidence %q", r.Unseen, r.Evidence)
	}
}

// Windows' WDDM (and WSL 2) lists processes with their memory "not
// available": never 17592186044415 MiB.
func TestMemoryNotAvailable(t *testing.T) {
	f := newFixture(t, []nvml.ProcessInfo{{PID: 4242, UsedGPUMemory: nvml.ValueNotAvailable}})
	r := f.watch(t, 4242, 3, nil)
	if !r.OnGPU || r.Verdict != "On GPU 0 (NVIDIA H100 80GB HBM3), 87 % busy, its memory not reported" || r.GPUs[0].ProcessMemoryKnown {
		t.Fatalf("%s %+v", r.Verdict, r.GPUs)
	}
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), "17592186044415") || !strings.Contains(strings.Join(r.Unseen, " "), "WDDM") {
		t.Fatalf("json %s", b)
	}
}

// CUDA_VISIBLE_DEVICES set inside the script (os.environ) is not in
// /proc/PID/environ; CUDA opened the driver and no GPU's device file.
func TestCUDASeesNoGPU(t *testing.T) {
	f := newFixture(t)
	p := fakeProcByPID(5201)
	p.environ = adaEnv
	f.setProc(p)
	r := f.watch(t, 5201, 3, f.busy(t, 5201, 1))
	if r.Cause != gpu.CauseDeviceSelection || r.Verdict != "On the CPU: CUDA started but sees no GPU (CUDA_VISIBLE_DEVICES set inside the program?)" {
		t.Fatalf("cause %s: %s", r.Cause, r.Verdict)
	}
	if fx := fixText(mustFinding(t, r, "watch_cuda_sees_no_gpu")); !strings.Contains(fx, `os.environ["CUDA_VISIBLE_DEVICES"]`) {
		t.Fatalf("fix %s", fx)
	}
	// It needs no waiting: a process 5 s old is not "setting up".
	p.ago = 5 * time.Second
	f.setProc(p)
	if r := f.watch(t, 5201, 3, nil); r.State != StateCPU || r.Cause != gpu.CauseDeviceSelection {
		t.Fatalf("young: %s %s", r.State, r.Verdict)
	}
	// With a GPU's device file open, CUDA saw the GPU.
	p.fds = gpu0Files
	f.setProc(p)
	if r := f.watch(t, 5201, 3, nil); r.Cause == gpu.CauseDeviceSelection {
		t.Fatalf("/dev/nvidia0 open: %s", r.Verdict)
	}
}

// Without /proc/PID/task/TID/children (an older kernel) the tree comes
// from the whole process table.
func TestChildrenFromTheProcessTable(t *testing.T) {
	f := newFixture(t)
	for k := range f.procs {
		if strings.Contains(k, "/task/") {
			delete(f.procs, k)
		}
	}
	r := f.watch(t, 4242, 2, nil)
	if len(r.Processes) != 3 || r.Processes[1].PID != 4243 || r.Processes[2].Role != "worker" {
		t.Fatalf("processes %+v", r.Processes)
	}
	src := newProcFS(f.machine(), 100)
	if _, ok := src.children(4242); ok {
		t.Fatal("children without task files")
	}
	g := newFixture(t)
	if kids, ok := newProcFS(g.machine(), 100).children(4242); !ok || len(kids) != 2 {
		t.Fatalf("children %v %v", kids, ok)
	}
}

// The settler waits for the same verdict over its span.
func TestSettler(t *testing.T) {
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	rep := func(s State, sec float64) Report {
		return Report{State: s, Time: at.Add(time.Duration(sec * float64(time.Second))), CPU: CPUUse{Measured: true}, Findings: []gpu.Finding{{ID: "x"}}}
	}
	var s Settler
	for i, c := range []struct {
		r    Report
		want bool
	}{
		{rep(StateCPU, 0), false}, {rep(StateCPU, 1), false}, {rep(StateGPU, 1.5), false}, {rep(StateGPU, 2), false},
		{rep(StateGPU, 3), false}, {rep(StateGPU, 3.5), true}, {rep(StateExited, 4), true},
	} {
		if got := s.Add(c.r); got != c.want {
			t.Fatalf("report %d (%s at %s): settled %v", i, c.r.State, c.r.Time.Sub(at), got)
		}
	}
}

// plainSource hides a source's optional readers: a machine like Windows,
// with no device files, cgroups or run-queue counters to read.
type plainSource struct{ source }

// Windows' WDDM: NVML may list no compute process at all; CUDA open
// (the driver's library loaded) is what can be seen.
func TestWDDMNoProcessList(t *testing.T) {
	f := newFixture(t, nil, nil)
	p := fakeProcByPID(6900)
	p.maps, p.fds = cat(baseLibs, torchCUDA, libcuda), nil
	f.setProc(p)
	w := New(f.options(), 6900)
	defer w.Close()
	w.src = plainSource{w.src}
	ctx := context.Background()
	busy := f.busy(t, 6900, 1)
	for i := 0; i < 3; i++ {
		busy(i)
		if err := w.Sample(ctx); err != nil {
			t.Fatal(err)
		}
		f.now = f.now.Add(time.Second)
	}
	r := w.Report(ctx)
	if !r.OnGPU || r.State != StateGPU || !strings.Contains(r.Verdict, "as far as can be seen (CUDA is open (nvcuda.dll loaded); under Windows' WDDM driver NVML lists no compute process)") {
		t.Fatalf("state %s: %s", r.State, r.Verdict)
	}
	if len(r.Devices) != 0 || len(r.Unseen) == 0 {
		t.Fatalf("devices %q unseen %q", r.Devices, r.Unseen)
	}
}

// Windows' names: DLLs and paths in the machine's own style.
func TestWindowsNames(t *testing.T) {
	for file, kind := range map[string]string{
		`C:\p\.venv\Lib\site-packages\torch\lib\torch_cuda.dll`: LibTorchCUDA, `C:\p\torch\lib\c10_cuda.dll`: LibTorchCUDA,
		`C:\p\torch\lib\TORCH_CPU.DLL`: LibTorchCPU, `C:\p\cudart64_12.dll`: LibCUDART, `C:\p\cublasLt64_12.dll`: LibCuBLAS,
		`C:\p\cudnn_ops64_9.dll`: LibCuDNN, `C:\p\cudnn64_8.dll`: LibCuDNN, `C:\Windows\System32\nvcuda.dll`: LibCUDA,
		`C:\Windows\System32\nvml.dll`: LibNVML, `C:\p\python312.dll`: "", `C:\p\_pywrap_tensorflow_internal.pyd`: LibTensorFlow,
	} {
		if got := libKind(file); got != kind {
			t.Errorf("libKind(%s) = %q, want %q", file, got, kind)
		}
	}
	if s := frameworkSite([]string{`C:\p\.venv\Lib\site-packages\torch\lib\torch_cpu.dll`}, "torch"); s != `C:\p\.venv\Lib\site-packages` {
		t.Errorf("site %q", s)
	}
	if p := prefixPython(`C:\p\.venv`, false); p != `C:\p\.venv\Scripts\python.exe` {
		t.Errorf("venv python %q", p)
	}
	if p := prefixPython(`C:\Users\ada\miniconda3\envs\tf`, true); p != `C:\Users\ada\miniconda3\envs\tf\python.exe` {
		t.Errorf("conda python %q", p)
	}
	if ps := splitPathList(`C:\Python312;C:\Windows`); len(ps) != 2 || joinLike(ps[0], "python.exe") != `C:\Python312\python.exe` {
		t.Errorf("PATH %q", ps)
	}
	p := proc{Comm: "python.exe", Cmdline: []string{`C:\Python312\python.exe`, "train.py"}}
	if !pythonLike(p) || programBase(p.Cmdline[0]) != "python" || shortCommand(p.Cmdline, p.Comm) != "python.exe train.py" {
		t.Errorf("python on Windows: %v %q", pythonLike(p), shortCommand(p.Cmdline, p.Comm))
	}
}
