package fix

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
	"gpuwizard/gpu/doctor"
	"gpuwizard/gpu/fix/fixtest"
)

// These tests plan and run on reports and a pip played in Go: they run on
// every platform, Wine included.

const venvPy = "/home/u/venv/bin/python"

func matrix(t *testing.T) *compat.Matrix {
	t.Helper()
	m, err := compat.LoadMatrix()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// report is the doctor's report of the RTX 3090 machine whose `python` is
// env.
func report(t *testing.T, envs ...gpu.PythonEnv) gpu.Report {
	f := fixtest.Machine()
	f.Pythons = envs
	return doctor.Diagnose(f, matrix(t))
}

func cpuVenv() gpu.PythonEnv {
	site := "/home/u/venv/lib/python3.11/site-packages"
	return gpu.PythonEnv{Interpreter: venvPy, Prefix: "/home/u/venv", Version: "3.11", Kind: "venv", Commands: []string{"python"},
		SitePackages: []string{site}, Packages: []gpu.Package{
			{Name: "torch", Version: "2.5.1+cpu", Location: site, CPUOnly: true, BuildNote: "torch/version.py"},
			{Name: "torchvision", Version: "0.20.1+cpu", Location: site, CPUOnly: true},
			{Name: "torchaudio", Version: "2.5.1+cpu", Location: site}}}
}

func TestPlanCPUOnlyTorch(t *testing.T) {
	m := matrix(t)
	rep := report(t, cpuVenv())
	p, err := Make(rep, m, Options{Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	adv, _ := doctor.WheelAdvice(fixtest.Machine(), m, "3.11")
	if p.Interpreter != venvPy || len(p.Actions) != 1 {
		t.Fatalf("plan: %+v", p)
	}
	a := p.Actions[0]
	// The stars are quoted, so the command can be pasted into a shell.
	want := fmt.Sprintf("%s -m pip install --force-reinstall 'torch==%s.*' 'torchvision==%s.*' 'torchaudio==%s.*' --index-url %s",
		venvPy, adv.Torch, adv.TorchVision, adv.Torch, adv.IndexURL)
	if len(a.Commands) != 1 || a.Commands[0].String() != want {
		t.Errorf("command:\n%v\nwant:\n%s", a.Commands, want)
	}
	if !gpu.Contains(a.Findings, "torch_cpu_only") || !gpu.Contains(a.Remove, "torch 2.5.1+cpu") || !gpu.Contains(a.Remove, "torchaudio 2.5.1+cpu") {
		t.Errorf("action: %+v", a)
	}
	// The doctor printed the same wheel (its fix for the finding).
	for _, f := range rep.Findings {
		if f.ID == "torch_cpu_only" && !strings.Contains(f.Fix[len(f.Fix)-1].Command, "torch=="+adv.Torch+".*") {
			t.Errorf("the doctor's fix %q and the plan disagree", f.Fix)
		}
	}
	var b strings.Builder
	if err := p.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Plan for " + venvPy, "$ " + want, "removes: torch 2.5.1+cpu", "pip freeze"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, b.String())
		}
	}
}

func TestPlanIndexOverride(t *testing.T) {
	dir := t.TempDir()
	for index, want := range map[string]string{dir: "--no-index --find-links " + dir, "file://" + dir: "--no-index --find-links " + dir,
		"https://mirror.example/whl/cu126": "--index-url https://mirror.example/whl/cu126"} {
		p, err := Make(report(t, cpuVenv()), matrix(t), Options{IndexURL: index})
		if err != nil || len(p.Actions) != 1 {
			t.Fatalf("%s: %v %+v", index, err, p)
		}
		if args := p.Actions[0].Commands[0].Args; !strings.HasSuffix(strings.Join(args, " "), want) {
			t.Errorf("index %s: %q", index, args)
		}
	}
}

func TestPlanRefusesTheSystemPython(t *testing.T) {
	env := cpuVenv()
	env.Interpreter, env.Prefix, env.Kind = "/usr/bin/python3", "/usr", "system"
	p, err := Make(report(t, env), matrix(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Fixable() || len(p.NotFixable) == 0 || !strings.Contains(p.NotFixable[0].Why, "system") {
		t.Fatalf("plan: %+v", p)
	}
	if _, err := Execute(context.Background(), p, Exec{Home: t.TempDir()}); !errors.Is(err, ErrNothing) {
		t.Errorf("Execute of nothing: %v", err)
	}
}

func TestPlanOtherInterpreterAndDriver(t *testing.T) {
	other := cpuVenv()
	other.Interpreter, other.Commands = "/opt/other/bin/python", nil
	good := cpuVenv()
	good.Packages = nil
	f := fixtest.Machine()
	f.NVML.GPUs = []gpu.GPU{}
	f.NVML.Status = "library_not_found"
	f.Pythons = []gpu.PythonEnv{good, other}
	p, err := Make(doctor.Diagnose(f, matrix(t)), matrix(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Fixable() || p.Interpreter != venvPy {
		t.Fatalf("plan: %+v", p)
	}
	if _, err := Make(report(t, good), matrix(t), Options{Interpreter: "/nowhere/python"}); err == nil {
		t.Error("an interpreter the doctor did not find was accepted")
	}
	p, _ = Make(report(t, good, other), matrix(t), Options{})
	var seen bool
	for _, u := range p.NotFixable {
		if strings.HasPrefix(u.ID, "torch_") && strings.Contains(u.Why, "another Python") {
			seen = true
		}
	}
	if p.Fixable() || !seen {
		t.Errorf("a finding about another Python: %+v", p)
	}
}

func TestPlanUserSiteCopy(t *testing.T) {
	user := "/home/u/.local/lib/python3.11/site-packages"
	site := "/opt/conda/lib/python3.11/site-packages"
	env := gpu.PythonEnv{Interpreter: "/opt/conda/bin/python", Prefix: "/opt/conda", Version: "3.11", Kind: "conda", Commands: []string{"python"},
		SitePackages: []string{user, site}, Packages: []gpu.Package{
			{Name: "torch", Version: "2.13.0+cu126", Location: user, CUDA: "12.6"},
			{Name: "torch", Version: "2.13.0+cu126", Location: site, CUDA: "12.6", Shadowed: true}}}
	p, err := Make(report(t, env), matrix(t), Options{Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Actions) != 1 || p.Actions[0].Kind != KindUserSite {
		t.Fatalf("plan: %+v", p)
	}
	if c := p.Actions[0].Commands[0].String(); c != "/opt/conda/bin/python -m pip uninstall -y torch" {
		t.Errorf("command %q", c)
	}
}

// fakePip plays pip for one environment: a set of packages, install and
// uninstall, and failures on request.
type fakePip struct {
	pkgs  map[string]string // name → version
	avail map[string]string // name → the version "==X.*" resolves to
	fail  string            // a Run whose arguments contain this fails
}

func (f *fakePip) Output(ctx context.Context, args []string) ([]byte, error) {
	var lines []string
	for n, v := range f.pkgs {
		lines = append(lines, n+"=="+v+"\n")
	}
	sort.Strings(lines)
	return []byte(strings.Join(lines, "")), nil
}

func (f *fakePip) Run(ctx context.Context, args []string, line func(string)) error {
	if f.fail != "" && strings.Contains(strings.Join(args, " "), f.fail) {
		line("ERROR: fake failure")
		return errors.New("exit status 1")
	}
	op, rest := args[3], args[4:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "-r":
			b, err := os.ReadFile(rest[i+1])
			if err != nil {
				return err
			}
			for _, l := range strings.Fields(string(b)) {
				n, v, _ := strings.Cut(l, "==")
				f.pkgs[n] = v
			}
			i++
		case a == "--find-links" || a == "--index-url" || a == "--extra-index-url":
			i++
		case strings.HasPrefix(a, "-"):
		case op == "uninstall":
			delete(f.pkgs, a)
		default:
			n, v, _ := strings.Cut(a, "==")
			if strings.HasSuffix(v, "*") {
				v = f.avail[n]
			}
			f.pkgs[n] = v
		}
	}
	line("Successfully " + op + "ed")
	return nil
}

func TestExecuteAndUndoWithFakePip(t *testing.T) {
	home := t.TempDir()
	m := matrix(t)
	adv, _ := doctor.WheelAdvice(fixtest.Machine(), m, "3.11")
	pip := &fakePip{pkgs: map[string]string{"torch": "2.5.1+cpu", "torchvision": "0.20.1+cpu", "torchaudio": "2.5.1+cpu", "numpy": "2.1.0"},
		avail: map[string]string{"torch": adv.Torch + ".0+" + adv.Variant, "torchvision": adv.TorchVision + ".0+" + adv.Variant, "torchaudio": adv.Torch + ".0+" + adv.Variant}}
	before, _ := pip.Output(context.Background(), nil)
	p, err := Make(report(t, cpuVenv()), m, Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	check := CheckFunc(func(ctx context.Context) (gpu.Report, error) {
		env := cpuVenv()
		for i := range env.Packages {
			pk := &env.Packages[i]
			pk.Version, pk.CPUOnly, pk.CUDA = pip.pkgs[pk.Name], false, gpu.VariantCUDA(gpu.LocalTag(pip.pkgs[pk.Name]))
		}
		return report(t, env), nil
	})
	var log []string
	res, err := Execute(context.Background(), p, Exec{Runner: pip, Checker: check, Home: home, Log: func(s string) { log = append(log, s) }})
	if err != nil || !res.Fixed() || !gpu.Contains(res.Gone, "torch_cpu_only") {
		t.Fatalf("%v %+v\n%s", err, res, strings.Join(log, "\n"))
	}
	if pip.pkgs["torch"] != adv.Torch+".0+"+adv.Variant {
		t.Errorf("torch after: %s", pip.pkgs["torch"])
	}
	for _, name := range []string{FreezeFile, PlanFile, ResultFile} {
		if st, err := os.Lstat(filepath.Join(res.Dir, name)); err != nil || !st.Mode().IsRegular() {
			t.Errorf("record %s: %v", name, err)
		}
	}
	pip.pkgs["extra"] = "1.0" // something the fix's dependencies added
	u, err := Undo(context.Background(), res.Dir, Exec{Runner: pip, Home: home})
	if err != nil || !u.Exact {
		t.Fatalf("undo: %v %+v", err, u)
	}
	if now, _ := pip.Output(context.Background(), nil); string(now) != string(before) {
		t.Errorf("after undo:\n%s\nwant:\n%s", now, before)
	}
	if c := u.Commands[len(u.Commands)-1].String(); !strings.Contains(c, "--extra-index-url https://download.pytorch.org/whl/cpu") {
		t.Errorf("undo of +cpu wheels does not look in PyTorch's cpu index: %s", c)
	}
	// A failure restores, and says so.
	pip.fail = "--force-reinstall torch"
	res, err = Execute(context.Background(), p, Exec{Runner: pip, Home: home})
	if err == nil || !res.Restored || res.Ran {
		t.Errorf("a failing pip: %v %+v", err, res)
	}
}

func TestRecordRefusesLinks(t *testing.T) {
	home := t.TempDir()
	out := t.TempDir()
	link := filepath.Join(home, "gpuwizard")
	if err := os.Symlink(out, link); err != nil {
		t.Fatal(err)
	}
	pip := &fakePip{pkgs: map[string]string{"torch": "2.5.1+cpu"}}
	p, _ := Make(report(t, cpuVenv()), matrix(t), Options{})
	_, err := Execute(context.Background(), p, Exec{Runner: pip, Home: home})
	if !errors.Is(err, ErrLink) {
		t.Fatalf("a linked fixes folder: %v", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("wrote through the link: %v", ents)
	}
	if pip.pkgs["torch"] != "2.5.1+cpu" {
		t.Errorf("changed the environment without a record: %v", pip.pkgs)
	}
}

func TestFreezeName(t *testing.T) {
	for line, want := range map[string]string{"torch==2.5.1+cpu": "torch", "Foo_Bar==1": "foo-bar",
		"pkg @ file:///tmp/pkg-1.whl": "pkg", "-e git+https://x/y.git@abc#egg=my_pkg": "my-pkg"} {
		if got := freezeName(line); got != want {
			t.Errorf("freezeName(%q) = %q, want %q", line, got, want)
		}
	}
}

// A torch conda installed is not replaced with pip.
func TestPlanRefusesCondaInstalledTorch(t *testing.T) {
	site := t.TempDir()
	dist := filepath.Join(site, "torch-2.5.1.dist-info")
	if err := os.Mkdir(dist, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dist, "INSTALLER"), []byte("conda\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := cpuVenv()
	env.Kind = "conda"
	env.Packages = []gpu.Package{{Name: "torch", Version: "2.5.1", Location: site, CPUOnly: true, BuildNote: "torch/version.py"}}
	p, err := Make(report(t, env), matrix(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Fixable() || len(p.NotFixable) == 0 || !strings.Contains(p.NotFixable[0].Why, "installed by conda") {
		t.Fatalf("plan: %+v", p)
	}
}

// A conda environment's explicit list is recorded with the freeze, by the
// conda that manages it.
func TestRecordConda(t *testing.T) {
	home := t.TempDir()
	pip := &fakePip{pkgs: map[string]string{"torch": "2.5.1+cpu"}, avail: map[string]string{"torch": "2.13.0+cu126"}}
	runner := &condaToo{fakePip: pip}
	p := Plan{Interpreter: "/opt/conda/bin/python", Prefix: "/opt/conda", EnvKind: "conda",
		Actions: []Action{{Kind: KindWheel, Commands: []Command{{Args: []string{"/opt/conda/bin/python", "-m", "pip", "install", "torch==2.13.*"}}}}}}
	res, err := Execute(context.Background(), p, Exec{Runner: runner, Home: home, Environ: map[string]string{"CONDA_EXE": "/opt/conda/bin/conda"}})
	if err != nil || !res.Ran {
		t.Fatalf("%v %+v", err, res)
	}
	b, err := os.ReadFile(filepath.Join(res.Dir, CondaFile))
	if err != nil || string(b) != "@EXPLICIT\n" {
		t.Errorf("conda record %q, %v", b, err)
	}
	if got := strings.Join(runner.conda, " "); got != "/opt/conda/bin/conda list --explicit -p /opt/conda" {
		t.Errorf("conda ran as %q", got)
	}
}

type condaToo struct {
	*fakePip
	conda []string
}

func (c *condaToo) Output(ctx context.Context, args []string) ([]byte, error) {
	if strings.HasSuffix(args[0], "conda") {
		c.conda = args
		return []byte("@EXPLICIT\n"), nil
	}
	return c.fakePip.Output(ctx, args)
}

// Undo of a removed user-site copy puts it back in the user site.
func TestUndoUserSiteCopy(t *testing.T) {
	home := t.TempDir()
	user := filepath.Join(home, ".local", "lib", "python3.11", "site-packages")
	site := "/opt/conda/lib/python3.11/site-packages"
	env := gpu.PythonEnv{Interpreter: "/opt/conda/bin/python", Prefix: "/opt/conda", Version: "3.11", Kind: "conda", Commands: []string{"python"},
		SitePackages: []string{user, site}, Packages: []gpu.Package{
			{Name: "torch", Version: "2.5.1+cpu", Location: user, CPUOnly: true},
			{Name: "torch", Version: "2.13.0+cu126", Location: site, CUDA: "12.6", Shadowed: true}}}
	p, err := Make(report(t, env), matrix(t), Options{Home: home})
	if err != nil || len(p.Actions) == 0 || p.Actions[0].Kind != KindUserSite {
		t.Fatalf("%v %+v", err, p)
	}
	pip := &fakePip{pkgs: map[string]string{"torch": "2.5.1+cpu"}}
	res, err := Execute(context.Background(), p, Exec{Runner: pip, Home: home})
	if err != nil || !res.Ran {
		t.Fatalf("%v %+v", err, res)
	}
	pip.pkgs["torch"] = "2.13.0+cu126" // the environment's copy shows once the user's is gone
	u, err := Undo(context.Background(), res.Dir, Exec{Runner: pip, Home: home})
	if err != nil || !u.Exact || len(u.Commands) == 0 {
		t.Fatalf("undo: %v %+v", err, u)
	}
	if c := strings.Join(u.Commands[0].Args, " "); !strings.Contains(c, "install --user --no-deps --force-reinstall torch==2.5.1+cpu") {
		t.Errorf("the user-site copy is not put back: %s", c)
	}
}

// Two builds in one environment: the CPU packages go and the GPU one is
// reinstalled at its version, with the environment's own pip.
func TestPlanConflictingBuilds(t *testing.T) {
	env := cpuVenv()
	site := env.SitePackages[0]
	env.Packages = []gpu.Package{
		{Name: "onnxruntime", Version: "1.20.1", Location: site},
		{Name: "onnxruntime-gpu", Version: "1.20.1", Location: site},
		{Name: "paddlepaddle", Version: "3.0.0", Location: site},
		{Name: "paddlepaddle-gpu", Version: "2.6.2", Location: site},
		{Name: "tensorflow", Version: "2.18.0", Location: site},
		{Name: "tensorflow-cpu", Version: "2.18.0", Location: site, CPUOnly: true, BuildNote: "tensorflow-cpu package"}}
	p, err := Make(report(t, env), matrix(t), Options{Home: "/home/u"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"onnxruntime_cpu_and_gpu_packages": {venvPy + " -m pip uninstall -y onnxruntime",
			venvPy + " -m pip install --force-reinstall --no-deps onnxruntime-gpu==1.20.1"},
		"paddlepaddle_cpu_and_gpu_packages": {venvPy + " -m pip uninstall -y paddlepaddle",
			venvPy + " -m pip install --force-reinstall --no-deps paddlepaddle-gpu==2.6.2"},
		"tf_cpu_only": {venvPy + " -m pip uninstall -y tensorflow-cpu",
			venvPy + " -m pip install --force-reinstall --no-deps tensorflow==2.18.0"}}
	got := map[string]bool{}
	for _, a := range p.Actions {
		if a.Kind != KindConflict || len(a.Findings) != 1 || len(a.Commands) != 2 {
			t.Errorf("action: %+v", a)
			continue
		}
		w, ok := want[a.Findings[0]]
		if !ok || a.Commands[0].String() != w[0] || a.Commands[1].String() != w[1] {
			t.Errorf("%s: %v, want %q", a.Findings[0], a.Commands, w)
		}
		got[a.Findings[0]] = true
	}
	if len(got) != len(want) {
		t.Fatalf("fixed %v, want %d findings; plan %+v", got, len(want), p)
	}
	var b strings.Builder
	if err := p.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"removes: onnxruntime 1.20.1", "installs: onnxruntime-gpu==1.20.1 (reinstalled) (from PyPI", "$ " + want["tf_cpu_only"][0]} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, b.String())
		}
	}
	for _, id := range []string{"onnxruntime_cpu_and_gpu_packages", "paddlepaddle_cpu_and_gpu_packages"} {
		if !Fixable(id) {
			t.Errorf("Fixable(%s) is false", id)
		}
	}
	// A CPU-only tensorflow beside tensorflow-cpu: two findings, one fix.
	tf := cpuVenv()
	tf.Packages = []gpu.Package{{Name: "tensorflow", Version: "2.18.0", Location: site, CPUOnly: true, BuildNote: "tensorflow/python/platform/build_info.py"},
		{Name: "tensorflow-cpu", Version: "2.18.0", Location: site, CPUOnly: true}}
	rep := report(t, tf)
	n := 0
	for _, f := range rep.Findings {
		if f.ID == "tf_cpu_only" {
			n++
		}
	}
	if p, _ := Make(rep, matrix(t), Options{}); n != 2 || len(p.Actions) != 1 || p.Actions[0].Commands[1].String() != want["tf_cpu_only"][1] {
		t.Errorf("%d tf_cpu_only findings; plan %+v", n, p.Actions)
	}
	// A local folder of wheels is read with --find-links.
	dir := t.TempDir()
	p, _ = Make(report(t, env), matrix(t), Options{IndexURL: dir})
	if len(p.Actions) == 0 || !strings.HasSuffix(p.Actions[0].Commands[1].String(), "--no-index --find-links "+gpu.ShellQuote(dir)) {
		t.Errorf("with a local index: %+v", p.Actions)
	}
}

// The CPU package alone is not two builds; the GPU package installed by
// conda is not changed with pip.
func TestPlanConflictNeedsBoth(t *testing.T) {
	env := cpuVenv()
	site := t.TempDir()
	env.Packages = []gpu.Package{{Name: "tensorflow-cpu", Version: "2.18.0", Location: site, CPUOnly: true}}
	p, _ := Make(report(t, env), matrix(t), Options{})
	for _, a := range p.Actions {
		if a.Kind == KindConflict {
			t.Errorf("tensorflow-cpu alone planned as a conflict: %+v", a)
		}
	}
	dist := filepath.Join(site, "onnxruntime_gpu-1.20.1.dist-info")
	if err := os.Mkdir(dist, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dist, "INSTALLER"), []byte("conda\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env.Packages = []gpu.Package{{Name: "onnxruntime", Version: "1.20.1", Location: site}, {Name: "onnxruntime-gpu", Version: "1.20.1", Location: site}}
	p, _ = Make(report(t, env), matrix(t), Options{})
	if p.Fixable() || len(p.NotFixable) == 0 || !strings.Contains(p.NotFixable[0].Why, "installed by conda") {
		t.Errorf("a conda-installed onnxruntime-gpu: %+v", p)
	}
}

func tfVenv(version string, name string) gpu.PythonEnv {
	env := cpuVenv()
	env.Packages = []gpu.Package{{Name: name, Version: version, Location: env.SitePackages[0], CPUOnly: true, BuildNote: "tensorflow/python/platform/build_info.py"}}
	return env
}

// A CPU-only TensorFlow on Linux: tensorflow[and-cuda] of the installed
// minor version, when the driver runs its CUDA.
func TestPlanTensorFlowAndCuda(t *testing.T) {
	p, err := Make(report(t, tfVenv("2.18.0", "tensorflow")), matrix(t), Options{})
	if err != nil || len(p.Actions) != 1 || p.Actions[0].Kind != KindTF {
		t.Fatalf("plan: %v %+v", err, p)
	}
	want := venvPy + " -m pip install --force-reinstall 'tensorflow[and-cuda]==2.18.*'"
	if a := p.Actions[0]; len(a.Commands) != 1 || a.Commands[0].String() != want || !gpu.Contains(a.Findings, "tf_cpu_only") ||
		!strings.Contains(a.Why, "CUDA 12.5") {
		t.Errorf("action %+v\nwant %s", a, want)
	}
	// The CPU package is removed first.
	p, _ = Make(report(t, tfVenv("2.17.1", "tensorflow-cpu")), matrix(t), Options{})
	if len(p.Actions) != 1 || len(p.Actions[0].Commands) != 2 ||
		p.Actions[0].Commands[0].String() != venvPy+" -m pip uninstall -y tensorflow-cpu" ||
		p.Actions[0].Commands[1].String() != venvPy+" -m pip install --force-reinstall 'tensorflow[and-cuda]==2.17.*'" {
		t.Errorf("tensorflow-cpu: %+v", p.Actions)
	}
	// A CUDA build without its libraries: the same command brings them.
	libs := tfVenv("2.18.0", "tensorflow")
	libs.Packages[0].CPUOnly, libs.Packages[0].CUDA, libs.Packages[0].CuDNN = false, "12.5", "9"
	p, _ = Make(report(t, libs), matrix(t), Options{})
	if len(p.Actions) != 1 || !gpu.Contains(p.Actions[0].Findings, "tf_gpu_libs_missing") || p.Actions[0].Commands[0].String() != want {
		t.Errorf("the libraries missing: %+v", p)
	}
	if !Fixable("tf_cpu_only") || !Fixable("tf_gpu_libs_missing") {
		t.Error("the TensorFlow findings are not offered a fix")
	}
}

func TestPlanTensorFlowNotFixable(t *testing.T) {
	notFixable := func(f *gpu.Facts, want string) {
		t.Helper()
		p, err := Make(doctor.Diagnose(f, matrix(t)), matrix(t), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range p.Actions {
			if a.Kind == KindTF {
				t.Errorf("planned %+v", a)
			}
		}
		var whys []string
		for _, u := range p.NotFixable {
			if strings.HasPrefix(u.ID, "tf_") && strings.Contains(u.Why, want) {
				return
			}
			whys = append(whys, u.ID+": "+u.Why)
		}
		t.Errorf("no TensorFlow finding not fixable for %q: %v", want, whys)
	}
	old := fixtest.Machine() // driver 450: CUDA 11.0, TF 2.18 needs 12.5
	old.NVML.DriverVersion, old.NVML.CUDADriverVersion = "450.80.02", "11.0"
	old.Pythons = []gpu.PythonEnv{tfVenv("2.18.0", "tensorflow")}
	notFixable(old, "which this driver does not run")
	f := fixtest.Machine()
	f.Pythons = []gpu.PythonEnv{tfVenv("2.12.0", "tensorflow")}
	notFixable(f, "predates the tensorflow[and-cuda] extra")
	win := fixtest.Machine()
	win.Host.OS = "windows"
	env := tfVenv("2.18.0", "tensorflow")
	env.Interpreter = `C:\Users\u\venv\Scripts\python.exe`
	win.Pythons = []gpu.PythonEnv{env}
	notFixable(win, "no GPU build for native Windows")
	old210 := fixtest.Machine()
	old210.Host.OS = "windows"
	env = tfVenv("2.10.1", "tensorflow")
	env.Interpreter = `C:\Users\u\venv\Scripts\python.exe`
	old210.Pythons = []gpu.PythonEnv{env}
	old210.Windows = &gpu.WindowsFacts{}
	notFixable(old210, "loads CUDA 11.2 and cuDNN 8.1 from the system")
}

func jaxVenv(version string) gpu.PythonEnv {
	env := cpuVenv()
	site := env.SitePackages[0]
	env.Packages = []gpu.Package{{Name: "jax", Version: version, Location: site},
		{Name: "jaxlib", Version: version, Location: site, CPUOnly: true, BuildNote: "no jax CUDA plugin wheel and no +cuda tag"}}
	return env
}

// A CPU-only JAX on Linux: jax[cuda12] or jax[cuda13] by the driver's
// CUDA, at the installed version; not on Windows, an old driver or an
// old JAX.
func TestPlanJAX(t *testing.T) {
	plan := func(driver, cuda, os string, env gpu.PythonEnv) Plan {
		t.Helper()
		f := fixtest.Machine()
		f.NVML.DriverVersion, f.NVML.CUDADriverVersion, f.Host.OS = driver, cuda, os
		f.Pythons = []gpu.PythonEnv{env}
		p, err := Make(doctor.Diagnose(f, matrix(t)), matrix(t), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct{ driver, cuda, version, want string }{
		{"560.35.03", "12.6", "0.7.1", venvPy + " -m pip install 'jax[cuda12]==0.7.1'"},
		// A CUDA 13 driver runs CUDA 12 builds: a JAX not surely with the
		// cuda13 extra gets cuda12.
		{"580.65.06", "13.0", "0.7.1", venvPy + " -m pip install 'jax[cuda12]==0.7.1'"},
		{"580.65.06", "13.0", "0.8.1", venvPy + " -m pip install 'jax[cuda13]==0.8.1'"},
		{"560.35.03", "12.6", "0.8.1", venvPy + " -m pip install 'jax[cuda12]==0.8.1'"}} {
		p := plan(c.driver, c.cuda, "linux", jaxVenv(c.version))
		if len(p.Actions) != 1 || p.Actions[0].Kind != KindJAX || p.Actions[0].Commands[0].String() != c.want ||
			!gpu.Contains(p.Actions[0].Findings, "jaxlib_cpu_only") {
			t.Errorf("driver %s: %+v\nwant %s", c.driver, p, c.want)
		}
	}
	for _, c := range []struct {
		driver, cuda, os, version, why string
	}{
		{"450.80.02", "11.0", "linux", "0.7.1", "need a driver for CUDA 12 or 13"},
		{"560.35.03", "12.6", "linux", "0.4.20", "predates the jax[cuda12] extra"},
		{"560.94", "12.6", "windows", "0.7.1", "WSL 2"}} {
		p := plan(c.driver, c.cuda, c.os, jaxVenv(c.version))
		var whys []string
		found := false
		for _, u := range p.NotFixable {
			whys = append(whys, u.ID+": "+u.Why)
			found = found || u.ID == "jaxlib_cpu_only" && strings.Contains(u.Why, c.why)
		}
		if p.Fixable() || !found {
			t.Errorf("%s %s JAX %s: actions %+v, not fixable %v; want %q", c.os, c.driver, c.version, p.Actions, whys, c.why)
		}
	}
	if !Fixable("jaxlib_cpu_only") {
		t.Error("the CPU-only JAX is not offered a fix")
	}
}
