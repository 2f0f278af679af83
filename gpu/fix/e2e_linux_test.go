//go:build linux

// These tests run pip of the system's python3 in throwaway virtual
// environments (Debian's python3-venv), on a folder of fake wheels: no
// internet. They do not run under Wine (no Linux python3 there).

package fix

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
	"gpuwizard/gpu/doctor"
	"gpuwizard/gpu/fix/fixtest"
	"gpuwizard/gpu/probe"
)

// lab is a fake index, a venv with a CPU-only torch from it, and the
// doctor of a machine with an RTX 3090 reading that venv statically.
type lab struct {
	m        *compat.Matrix
	adv      compat.WheelAdvice
	index    string
	home     string
	py       string
	cudaVer  string // the advised torch's fake version: "2.13.0+cu126"
	original []byte // the venv's freeze before any fix
}

func newLab(t *testing.T) *lab {
	t.Helper()
	if _, err := os.Stat(fixtest.Python); err != nil {
		t.Fatalf("%s is needed for the fix tests (Debian: apt-get install python3 python3-venv): %v", fixtest.Python, err)
	}
	ctx := context.Background()
	m, err := compat.LoadMatrix()
	if err != nil {
		t.Fatal(err)
	}
	l := &lab{m: m, index: t.TempDir(), home: t.TempDir()}
	venv := filepath.Join(t.TempDir(), "venv")
	// The venv first: the advice depends on its Python version.
	if l.py, err = fixtest.Venv(ctx, venv, ""); err != nil {
		t.Fatal(err)
	}
	env, ok := probe.Interpreter(probe.Options{Home: l.home, Environ: map[string]string{}}, l.py)
	if !ok || env.Version == "" {
		t.Fatalf("the probe does not read the venv %s: %+v", l.py, env)
	}
	adv, known := doctor.WheelAdvice(fixtest.Machine(), m, env.Version)
	if !known || !adv.OK {
		t.Fatalf("no advice for the test machine with Python %s: %+v", env.Version, adv)
	}
	l.adv = adv
	cuda := gpu.VariantCUDA(adv.Variant)
	l.cudaVer = adv.Torch + ".0+" + adv.Variant
	err = fixtest.Build(l.index,
		fixtest.Wheel{Name: "torch", Version: "2.5.1+cpu"},
		fixtest.Wheel{Name: "torchvision", Version: "0.20.1+cpu"},
		fixtest.Wheel{Name: "torch", Version: l.cudaVer, CUDA: cuda},
		fixtest.Wheel{Name: "torchvision", Version: adv.TorchVision + ".0+" + adv.Variant, CUDA: cuda},
		fixtest.Wheel{Name: "torchaudio", Version: l.cudaVer, CUDA: cuda})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fixtest.Venv(ctx, venv, l.index, "torch==2.5.1+cpu", "torchvision==0.20.1+cpu"); err != nil {
		t.Fatal(err)
	}
	if l.original, err = fixtest.Freeze(ctx, l.py); err != nil {
		t.Fatal(err)
	}
	return l
}

// check is the doctor of the fake machine with the venv as `python`.
func (l *lab) check(ctx context.Context) (gpu.Report, error) {
	f := fixtest.Machine()
	env, _ := probe.Interpreter(probe.Options{Home: l.home, Environ: map[string]string{}}, l.py)
	env.Commands = []string{"python"}
	f.Pythons = []gpu.PythonEnv{env}
	return doctor.Diagnose(f, l.m), nil
}

func (l *lab) freeze(t *testing.T) []byte {
	t.Helper()
	b, err := fixtest.Freeze(context.Background(), l.py)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// logLines collects the streamed log.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) add(s string) { l.mu.Lock(); l.lines = append(l.lines, s); l.mu.Unlock() }
func (l *logLines) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func TestFixEndToEnd(t *testing.T) {
	l := newLab(t)
	ctx := context.Background()
	rep, _ := l.check(ctx)
	p, err := Make(rep, l.m, Options{Interpreter: l.py, IndexURL: l.index, Home: l.home})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Actions) != 1 || p.Actions[0].Kind != KindWheel || !gpu.Contains(p.Actions[0].Findings, "torch_cpu_only") {
		t.Fatalf("plan: %+v", p)
	}
	cmd := p.Actions[0].Commands[0].String()
	for _, want := range []string{l.py + " -m pip install --force-reinstall", "torch==" + l.adv.Torch + ".*", "torchvision==" + l.adv.TorchVision + ".*", "--no-index --find-links " + l.index} {
		if !strings.Contains(cmd, want) {
			t.Errorf("command %q lacks %q", cmd, want)
		}
	}
	var log logLines
	start := time.Now()
	res, err := Execute(ctx, p, Exec{Checker: CheckFunc(l.check), Home: l.home, IndexURL: l.index, Log: log.add})
	took := time.Since(start)
	if err != nil || !res.Fixed() {
		t.Fatalf("fix: %v, %+v\n%s", err, res, log.text())
	}
	t.Logf("click to re-checked verdict on the fake index: %s (verdict: %s)", took.Round(time.Millisecond), res.Verdict)
	if !gpu.Contains(res.Gone, "torch_cpu_only") {
		t.Errorf("gone: %v", res.Gone)
	}
	if !strings.Contains(log.text(), "Successfully installed") {
		t.Errorf("pip's output was not streamed:\n%s", log.text())
	}
	after := l.freeze(t)
	if !bytes.Contains(after, []byte("torch=="+l.cudaVer+"\n")) || bytes.Contains(after, []byte("+cpu")) {
		t.Errorf("after the fix:\n%s", after)
	}
	rec, err := os.ReadFile(filepath.Join(res.Dir, FreezeFile))
	if err != nil || !bytes.Equal(rec, l.original) {
		t.Fatalf("recorded freeze (%v):\n%s\nwant:\n%s", err, rec, l.original)
	}
	if !strings.HasPrefix(res.Dir, FixesDir(l.home)) {
		t.Errorf("record folder %s is not in %s", res.Dir, FixesDir(l.home))
	}
	latest, err := Latest(l.home)
	if err != nil || latest != res.Dir {
		t.Errorf("Latest: %q, %v; want %q", latest, err, res.Dir)
	}
	u, err := Undo(ctx, latest, Exec{Home: l.home, IndexURL: l.index, Log: log.add})
	if err != nil || !u.Exact {
		t.Fatalf("undo: %v, %+v\n%s", err, u, log.text())
	}
	if now := l.freeze(t); !bytes.Equal(now, l.original) {
		t.Fatalf("after undo:\n%s\nwant byte for byte:\n%s", now, l.original)
	}
	rep, _ = l.check(ctx)
	if !hasFinding(rep, "torch_cpu_only") {
		t.Errorf("after undo the CPU-only torch is back, yet the doctor does not say so: %v", rep.Findings)
	}
}

func hasFinding(r gpu.Report, id string) bool {
	for _, f := range r.Findings {
		if f.ID == id {
			return true
		}
	}
	return false
}

// A command that fails after an earlier one changed the environment: the
// environment is put back to the recorded freeze.
func TestFixFailingPipRestores(t *testing.T) {
	l := newLab(t)
	pip := []string{l.py, "-m", "pip", "install", "--no-index", "--find-links", l.index}
	p := Plan{Interpreter: l.py, EnvKind: "venv", Actions: []Action{{Kind: KindWheel, Findings: []string{"torch_cpu_only"},
		Commands: []Command{
			{Args: append(append([]string{}, pip...), "torchaudio=="+l.cudaVer)},
			{Args: append(append([]string{}, pip...), "--force-reinstall", "torch=="+l.adv.Torch+".*")},
			{Args: append(append([]string{}, pip...), "no-such-package-anywhere")}}}}}
	var log logLines
	res, err := Execute(context.Background(), p, Exec{Checker: CheckFunc(l.check), Home: l.home, IndexURL: l.index, Log: log.add})
	if err == nil || res.Ran || res.Checked {
		t.Fatalf("a failing pip: %v, %+v", err, res)
	}
	if !res.Restored {
		t.Fatalf("not restored: %+v\n%s", res, log.text())
	}
	if now := l.freeze(t); !bytes.Equal(now, l.original) {
		t.Fatalf("after the failure:\n%s\nwant:\n%s\nlog:\n%s", now, l.original, log.text())
	}
	if !strings.Contains(log.text(), "back as recorded") {
		t.Errorf("the log does not say the environment is back:\n%s", log.text())
	}
}

// Stopping a fix (the window's Cancel) interrupts pip and restores.
func TestFixCancelRestores(t *testing.T) {
	l := newLab(t)
	ctx, cancel := context.WithCancel(context.Background())
	sleep := []string{l.py, "-c", "import time; print('working', flush=True); time.sleep(60)"}
	p := Plan{Interpreter: l.py, EnvKind: "venv", Actions: []Action{{Kind: KindWheel, Commands: []Command{
		{Args: []string{l.py, "-m", "pip", "install", "--no-index", "--find-links", l.index, "torchaudio==" + l.cudaVer}},
		{Args: sleep}}}}}
	var log logLines
	log.add("start")
	go func() {
		for !strings.Contains(log.text(), "working") {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	res, err := Execute(ctx, p, Exec{Home: l.home, IndexURL: l.index, Log: log.add})
	if err == nil || !res.Restored || time.Since(start) > 50*time.Second {
		t.Fatalf("cancel: %v after %s, %+v\n%s", err, time.Since(start), res, log.text())
	}
	if now := l.freeze(t); !bytes.Equal(now, l.original) {
		t.Fatalf("after cancel:\n%s\nwant:\n%s", now, l.original)
	}
}

// Two builds in one environment, end to end: onnxruntime beside
// onnxruntime-gpu (sharing the folder onnxruntime, as the real ones do).
func TestFixConflictingBuildsEndToEnd(t *testing.T) {
	ctx := context.Background()
	index, home := t.TempDir(), t.TempDir()
	err := fixtest.Build(index,
		fixtest.Wheel{Name: "onnxruntime", Version: "1.20.1", Module: "onnxruntime"},
		fixtest.Wheel{Name: "onnxruntime-gpu", Version: "1.20.1", Module: "onnxruntime", CUDA: "12.4"})
	if err != nil {
		t.Fatal(err)
	}
	py, err := fixtest.Venv(ctx, filepath.Join(t.TempDir(), "venv"), index, "onnxruntime-gpu==1.20.1")
	if err != nil {
		t.Fatal(err)
	}
	// The CPU package second, over the GPU one's files: what `pip install
	// something-needing-onnxruntime` does.
	if _, err := fixtest.Venv(ctx, filepath.Dir(filepath.Dir(py)), index, "onnxruntime==1.20.1"); err != nil {
		t.Fatal(err)
	}
	original, err := fixtest.Freeze(ctx, py)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := compat.LoadMatrix()
	check := CheckFunc(func(ctx context.Context) (gpu.Report, error) {
		f := fixtest.Machine()
		env, _ := probe.Interpreter(probe.Options{Home: home, Environ: map[string]string{}}, py)
		env.Commands = []string{"python"}
		f.Pythons = []gpu.PythonEnv{env}
		return doctor.Diagnose(f, m), nil
	})
	rep, _ := check(ctx)
	p, err := Make(rep, m, Options{Interpreter: py, IndexURL: index, Home: home})
	if err != nil || len(p.Actions) != 1 || p.Actions[0].Kind != KindConflict {
		t.Fatalf("plan: %v %+v (findings %v)", err, p, rep.Findings)
	}
	var log logLines
	res, err := Execute(ctx, p, Exec{Checker: check, Home: home, IndexURL: index, Log: log.add})
	if err != nil || !res.Fixed() || !gpu.Contains(res.Gone, "onnxruntime_cpu_and_gpu_packages") {
		t.Fatalf("fix: %v, %+v\n%s", err, res, log.text())
	}
	after, _ := fixtest.Freeze(ctx, py)
	if !bytes.Contains(after, []byte("onnxruntime-gpu==1.20.1\n")) && !bytes.Contains(after, []byte("onnxruntime_gpu==1.20.1\n")) ||
		bytes.Contains(after, []byte("\nonnxruntime==")) || bytes.HasPrefix(after, []byte("onnxruntime==")) {
		t.Errorf("after the fix:\n%s", after)
	}
	// The shared files are the GPU package's again.
	out, err := exec.Command(py, "-c", "import onnxruntime.version as v; print(v.built_by, v.cuda)").Output()
	if err != nil || strings.TrimSpace(string(out)) != "onnxruntime-gpu 12.4" {
		t.Errorf("onnxruntime imports %q (%v), want the GPU package's files", out, err)
	}
	u, err := Undo(ctx, res.Dir, Exec{Home: home, IndexURL: index, Log: log.add})
	if err != nil || !u.Exact {
		t.Fatalf("undo: %v, %+v\n%s", err, u, log.text())
	}
	if now, _ := fixtest.Freeze(ctx, py); !bytes.Equal(now, original) {
		t.Fatalf("after undo:\n%s\nwant byte for byte:\n%s", now, original)
	}
	if rep, _ := check(ctx); !hasFinding(rep, "onnxruntime_cpu_and_gpu_packages") {
		t.Errorf("after undo both packages are back, yet the doctor does not say so: %v", rep.Findings)
	}
}

// A CPU-only TensorFlow, end to end: tensorflow-cpu goes, and
// tensorflow[and-cuda] of its minor version brings the CUDA wheels.
func TestFixTensorFlowEndToEnd(t *testing.T) {
	ctx := context.Background()
	index, home := t.TempDir(), t.TempDir()
	buildInfo := "build_info = {'cuda_version': '12.5', 'cudnn_version': '9', 'is_cuda_build': True, 'is_rocm_build': False}\n"
	err := fixtest.Build(index,
		fixtest.Wheel{Name: "tensorflow-cpu", Version: "2.18.0", Module: "tensorflow"},
		fixtest.Wheel{Name: "tensorflow", Version: "2.18.1", Module: "tensorflow",
			Files:  map[string]string{"tensorflow/python/platform/build_info.py": buildInfo},
			Extras: map[string][]string{"and-cuda": {"nvidia-cuda-runtime-cu12==12.5.82", "nvidia-cudnn-cu12==9.3.0.75"}}},
		fixtest.Wheel{Name: "nvidia-cuda-runtime-cu12", Version: "12.5.82", Module: "nvidia_cuda_runtime"},
		fixtest.Wheel{Name: "nvidia-cudnn-cu12", Version: "9.3.0.75", Module: "nvidia_cudnn"})
	if err != nil {
		t.Fatal(err)
	}
	py, err := fixtest.Venv(ctx, filepath.Join(t.TempDir(), "venv"), index, "tensorflow-cpu==2.18.0")
	if err != nil {
		t.Fatal(err)
	}
	original, err := fixtest.Freeze(ctx, py)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := compat.LoadMatrix()
	check := CheckFunc(func(ctx context.Context) (gpu.Report, error) {
		f := fixtest.Machine()
		env, _ := probe.Interpreter(probe.Options{Home: home, Environ: map[string]string{}}, py)
		env.Commands = []string{"python"}
		f.Pythons = []gpu.PythonEnv{env}
		return doctor.Diagnose(f, m), nil
	})
	rep, _ := check(ctx)
	p, err := Make(rep, m, Options{Interpreter: py, IndexURL: index, Home: home})
	if err != nil || len(p.Actions) != 1 || p.Actions[0].Kind != KindTF {
		t.Fatalf("plan: %v %+v (findings %v)", err, p, rep.Findings)
	}
	if c := p.Actions[0].Commands[1].String(); !strings.Contains(c, " -m pip install --force-reinstall 'tensorflow[and-cuda]==2.18.*' --no-index --find-links ") {
		t.Errorf("command %s", c)
	}
	var log logLines
	start := time.Now()
	res, err := Execute(ctx, p, Exec{Checker: check, Home: home, IndexURL: index, Log: log.add})
	if err != nil || !res.Fixed() || !gpu.Contains(res.Gone, "tf_cpu_only") {
		t.Fatalf("fix: %v, %+v\n%s", err, res, log.text())
	}
	t.Logf("click to re-checked verdict: %s", time.Since(start).Round(time.Millisecond))
	after, _ := fixtest.Freeze(ctx, py)
	for _, want := range []string{"tensorflow==2.18.1\n", "nvidia-cudnn-cu12==9.3.0.75\n"} {
		if !bytes.Contains(after, []byte(want)) {
			t.Errorf("after the fix, no %q:\n%s", want, after)
		}
	}
	if bytes.Contains(after, []byte("tensorflow-cpu")) || bytes.Contains(after, []byte("tensorflow_cpu")) {
		t.Errorf("tensorflow-cpu is still installed:\n%s", after)
	}
	u, err := Undo(ctx, res.Dir, Exec{Home: home, IndexURL: index, Log: log.add})
	if err != nil || !u.Exact {
		t.Fatalf("undo: %v, %+v\n%s", err, u, log.text())
	}
	if now, _ := fixtest.Freeze(ctx, py); !bytes.Equal(now, original) {
		t.Fatalf("after undo:\n%s\nwant byte for byte:\n%s", now, original)
	}
	if rep, _ := check(ctx); !hasFinding(rep, "tf_cpu_only") {
		t.Errorf("after undo the CPU package is back, yet the doctor does not say so: %v", rep.Findings)
	}
}

// A CPU-only JAX, end to end: jax[cuda12] at the installed version adds
// the CUDA plugin.
func TestFixJAXEndToEnd(t *testing.T) {
	ctx := context.Background()
	index, home := t.TempDir(), t.TempDir()
	err := fixtest.Build(index,
		fixtest.Wheel{Name: "jax", Version: "0.7.1", Extras: map[string][]string{
			"cuda12": {"jaxlib==0.7.1", "jax-cuda12-plugin==0.7.1"}, "cuda13": {"jaxlib==0.7.1", "jax-cuda13-plugin==0.7.1"}}},
		fixtest.Wheel{Name: "jaxlib", Version: "0.7.1"},
		fixtest.Wheel{Name: "jax-cuda12-plugin", Version: "0.7.1", Module: "jax_cuda12_plugin", CUDA: "12"},
		fixtest.Wheel{Name: "jax-cuda13-plugin", Version: "0.7.1", Module: "jax_cuda13_plugin", CUDA: "13"})
	if err != nil {
		t.Fatal(err)
	}
	py, err := fixtest.Venv(ctx, filepath.Join(t.TempDir(), "venv"), index, "jax==0.7.1", "jaxlib==0.7.1")
	if err != nil {
		t.Fatal(err)
	}
	original, err := fixtest.Freeze(ctx, py)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := compat.LoadMatrix()
	check := CheckFunc(func(ctx context.Context) (gpu.Report, error) {
		f := fixtest.Machine() // driver 560: CUDA 12.6
		env, _ := probe.Interpreter(probe.Options{Home: home, Environ: map[string]string{}}, py)
		env.Commands = []string{"python"}
		f.Pythons = []gpu.PythonEnv{env}
		return doctor.Diagnose(f, m), nil
	})
	rep, _ := check(ctx)
	p, err := Make(rep, m, Options{Interpreter: py, IndexURL: index, Home: home})
	if err != nil || len(p.Actions) != 1 || p.Actions[0].Kind != KindJAX {
		t.Fatalf("plan: %v %+v (findings %v)", err, p, rep.Findings)
	}
	var log logLines
	res, err := Execute(ctx, p, Exec{Checker: check, Home: home, IndexURL: index, Log: log.add})
	if err != nil || !res.Fixed() || !gpu.Contains(res.Gone, "jaxlib_cpu_only") {
		t.Fatalf("fix: %v, %+v\n%s", err, res, log.text())
	}
	after, _ := fixtest.Freeze(ctx, py)
	if !bytes.Contains(after, []byte("jax-cuda12-plugin==0.7.1\n")) || bytes.Contains(after, []byte("cuda13")) || !bytes.Contains(after, []byte("jaxlib==0.7.1\n")) {
		t.Errorf("after the fix:\n%s", after)
	}
	u, err := Undo(ctx, res.Dir, Exec{Home: home, IndexURL: index, Log: log.add})
	if err != nil || !u.Exact {
		t.Fatalf("undo: %v, %+v\n%s", err, u, log.text())
	}
	if now, _ := fixtest.Freeze(ctx, py); !bytes.Equal(now, original) {
		t.Fatalf("after undo:\n%s\nwant byte for byte:\n%s", now, original)
	}
	if rep, _ := check(ctx); !hasFinding(rep, "jaxlib_cpu_only") {
		t.Errorf("after undo the CPU-only JAX is back, yet the doctor does not say so: %v", rep.Findings)
	}
}
