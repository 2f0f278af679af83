// Package fix applies the fixes the doctor names that can be applied
// safely inside one Python environment: the framework wheel (a CPU-only,
// ROCm or wrong-CUDA torch, a build without kernels for the GPU, with
// torchvision and torchaudio matched), a user-site copy that shadows the
// environment's, two builds installed in one environment (onnxruntime
// beside onnxruntime-gpu, paddlepaddle beside paddlepaddle-gpu,
// tensorflow-cpu beside tensorflow) and, on Linux, a CPU-only TensorFlow
// (tensorflow[and-cuda] of its minor version) or JAX (jax[cuda12] or
// jax[cuda13], by the driver's CUDA). Drivers, Secure Boot,
// containers and code are never changed: those findings are listed as not
// fixable, with the reason.
//
// A Plan says which interpreter, the exact commands (always that
// interpreter's own pip, never a global one, never sudo), what is removed
// and installed, and why. Execute records the environment first
// (pip freeze, conda list --explicit) under ~/gpuwizard/fixes/<time>/, runs
// the commands, puts the environment back when one fails, and checks again
// through the doctor; Undo restores a recorded freeze exactly.
package fix

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
	"gpuwizard/gpu/doctor"
)

// Kinds of action.
const (
	KindWheel    = "torch_wheel"    // replace torch (and its companions) with the advised build
	KindUserSite = "user_site_copy" // remove the user-site copy that shadows the environment's
)

// wheelFindings are the doctor's findings a torch wheel replacement fixes.
var wheelFindings = map[string]bool{"torch_cpu_only": true, "torch_rocm_build": true,
	"arch_not_in_torch_build": true, "arch_outside_build": true, "arch_via_ptx": true,
	"driver_too_old_for_torch": true, "torchvision_mismatch": true, "torch_without_cudnn": true}

// companions are the packages reinstalled with torch, so that they match it.
var companions = []string{"torchvision", "torchaudio"}

// Command is one program run with its arguments (no shell).
type Command struct {
	Args []string `json:"args"`
}

// String is the command as a person would type it.
func (c Command) String() string {
	q := make([]string, len(c.Args))
	for i, a := range c.Args {
		q[i] = gpu.ShellQuote(a)
	}
	return strings.Join(q, " ")
}

// Action is one change: the findings it fixes, why, what it removes and
// installs, and the commands.
type Action struct {
	Kind     string   `json:"kind"`
	Findings []string `json:"findings"` // the doctor's finding IDs
	Why      string   `json:"why"`
	Remove   []string `json:"remove,omitempty"` // "torch 2.5.1+cpu"
	// UserSite are the user-site copies removed ("torch==2.5.1+cpu"), which
	// undo puts back with pip install --user (the freeze cannot tell them
	// from the environment's).
	UserSite []string `json:"user_site,omitempty"`
	Install  []string `json:"install,omitempty"` // "torch==2.9.*"
	// Index is where this action's wheels come from, when not the plan's.
	Index    string    `json:"index,omitempty"`
	Commands []Command `json:"commands"`
}

// Unfixable is a finding this package does not change, and why.
type Unfixable struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Why   string `json:"why"`
}

// Plan is what a fix will do to one Python environment.
type Plan struct {
	Interpreter string      `json:"interpreter"`
	Prefix      string      `json:"prefix"`
	EnvKind     string      `json:"env_kind"` // "venv", "conda", ...
	Index       string      `json:"index"`    // where the wheels come from
	Actions     []Action    `json:"actions"`
	NotFixable  []Unfixable `json:"not_fixable,omitempty"`
}

// Fixable says whether the plan changes anything.
func (p Plan) Fixable() bool { return len(p.Actions) > 0 }

// FindingIDs are the IDs of the findings the plan fixes.
func (p Plan) FindingIDs() []string {
	var ids []string
	for _, a := range p.Actions {
		ids = append(ids, a.Findings...)
	}
	return ids
}

// Options say which environment to fix and where the wheels come from.
type Options struct {
	// Interpreter is the Python to fix; "": the one `python` (or
	// `python3`) runs.
	Interpreter string
	// IndexURL replaces the wheel index (a mirror, or a local folder of
	// wheels, which pip then reads with --no-index --find-links); "": the
	// doctor's (PyTorch's own index for the advised build).
	IndexURL string
	// Home is the user's home folder (the user site, the fixes folder).
	Home string
}

// Make plans the fixes of report r (a doctor report of this machine) that
// can be applied to the chosen environment.
func Make(r gpu.Report, m *compat.Matrix, o Options) (Plan, error) {
	env, err := target(r.Facts, o.Interpreter)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Interpreter: env.Interpreter, Prefix: env.Prefix, EnvKind: env.Kind}
	var wheel, shadow, tf, jax []gpu.Finding
	for _, f := range r.Findings {
		if f.Severity == gpu.SevOK || f.Severity == gpu.SevInfo {
			continue
		}
		_, _, conflict := conflictOf(f, env)
		switch why := notFixableWhy(r.Facts, f, env, conflict); {
		case why != "":
			p.NotFixable = append(p.NotFixable, Unfixable{ID: f.ID, Title: f.Title, Why: why})
		case conflict:
			p.addConflict(env, o.IndexURL, f)
		case f.ID == "torch_installed_twice":
			shadow = append(shadow, f)
		case tfFindings[f.ID]:
			tf = append(tf, f)
		case f.ID == jaxFinding:
			jax = append(jax, f)
		default:
			wheel = append(wheel, f)
		}
	}
	p.add(shadow, func() (Action, string) { return userSiteAction(env, o.Home, shadow) })
	p.add(tf, func() (Action, string) { return tfAction(r.Facts, m, env, o.IndexURL, tf) })
	p.add(jax, func() (Action, string) { return jaxAction(r.Facts, m, env, o.IndexURL, jax) })
	p.add(wheel, func() (Action, string) {
		a, index, why := wheelAction(r.Facts, m, env, o.IndexURL, wheel)
		p.Index = index
		return a, why
	})
	return p, nil
}

// add plans the action that fixes findings fs, or lists them as not
// fixable with the reason build gives; nothing when fs is empty.
func (p *Plan) add(fs []gpu.Finding, build func() (Action, string)) {
	if len(fs) == 0 {
		return
	}
	if a, why := build(); why != "" {
		p.NotFixable = append(p.NotFixable, unfixables(fs, why)...)
	} else {
		p.Actions = append(p.Actions, a)
	}
}

// notFixableWhy is why finding f is not changed on this machine, in env,
// "" when a plan may fix it.
func notFixableWhy(facts *gpu.Facts, f gpu.Finding, env gpu.PythonEnv, conflict bool) string {
	if why := jaxNotFixableWhy(facts, f.ID); why != "" {
		return why
	}
	if why := tfNotFixableWhy(facts, f.ID); why != "" && !conflict {
		return why
	}
	return unfixableWhy(f, env)
}

// target is the environment to fix: the one named, else the one `python`
// runs.
func target(f *gpu.Facts, interpreter string) (gpu.PythonEnv, error) {
	if f == nil {
		return gpu.PythonEnv{}, fmt.Errorf("the doctor's report has no facts: run gpuwizard doctor on this machine")
	}
	for _, e := range f.Pythons {
		if interpreter != "" && samePath(e.Interpreter, interpreter) {
			return e, nil
		}
	}
	if interpreter != "" {
		return gpu.PythonEnv{}, fmt.Errorf("the doctor did not find the Python %s: give the path of a python executable (gpuwizard fix --python PATH)", interpreter)
	}
	for _, cmd := range []string{"python", "python3"} {
		for _, e := range f.Pythons {
			if gpu.Contains(e.Commands, cmd) {
				return e, nil
			}
		}
	}
	return gpu.PythonEnv{}, fmt.Errorf("no `python` or `python3` on PATH: name the environment to fix with --python PATH")
}

func samePath(a, b string) bool {
	if a == b {
		return true
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// unfixableWhy is why finding f is not changed in env, "" when it can be.
func unfixableWhy(f gpu.Finding, env gpu.PythonEnv) string {
	_, _, conflict := conflictOf(f, env)
	switch {
	case wheelFindings[f.ID] || f.ID == "torch_installed_twice" || conflict || tfFindings[f.ID] || f.ID == jaxFinding:
		if !aboutInterpreter(f, env.Interpreter) {
			return "it is about another Python; fix that one with: gpuwizard fix --python PATH"
		}
		if env.Kind == "system" {
			return "this is the system's Python, which the distribution manages (pip must not change it): make a virtual environment, as the doctor's fix says"
		}
		return ""
	}
	switch f.Cause {
	case gpu.CauseDriverMissing, gpu.CauseDriverTooOld:
		return "gpuwizard never changes the driver (it needs root and often a reboot): follow the doctor's steps"
	case gpu.CauseWSLOrContainer:
		return "the container or WSL setup is outside this Python environment: follow the doctor's steps"
	case gpu.CauseDeviceSelection, gpu.CauseOutOfMemory, gpu.CauseDeviceMismatchInCode:
		return "it is in your code, shell or job settings, which gpuwizard never edits"
	case gpu.CauseCudnnProblem, gpu.CauseTFGPULibs:
		return "libraries outside the wheels (cuDNN on the loader's path, TensorFlow's CUDA libraries found only in an activated environment): not applied automatically yet"
	}
	return "no automatic fix for this finding: follow the doctor's steps"
}

func anyContains(list []string, s string) bool {
	for _, x := range list {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

func unfixables(fs []gpu.Finding, why string) []Unfixable {
	out := make([]Unfixable, len(fs))
	for i, f := range fs {
		out[i] = Unfixable{ID: f.ID, Title: f.Title, Why: why}
	}
	return out
}

func ids(fs []gpu.Finding) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		if !gpu.Contains(out, f.ID) {
			out = append(out, f.ID)
		}
	}
	return out
}

// wheelAction replaces torch and the companions installed with it by the
// doctor's advised build, from its index or the one given.
func wheelAction(f *gpu.Facts, m *compat.Matrix, env gpu.PythonEnv, indexURL string, fs []gpu.Finding) (Action, string, string) {
	if by := installer(env, "torch"); by != "" && by != "pip" && by != "uv" {
		return Action{}, "", "torch in this environment was installed by " + by + ", not pip; replacing it with pip would leave " + by + "'s records wrong: remove it with " + by + " first (conda remove pytorch), or use a virtual environment"
	}
	adv, known := doctor.WheelAdvice(f, m, env.Version)
	if !known {
		return Action{}, "", "the GPUs or the driver are unknown, so no build can be chosen safely: run gpuwizard doctor where NVML answers"
	}
	if !adv.OK {
		return Action{}, "", "no official PyTorch wheel runs on every GPU here with this driver (" + adv.Reason + ")"
	}
	a := Action{Kind: KindWheel, Findings: ids(fs),
		Why: fmt.Sprintf("torch %s built for %s is the newest official wheel that runs on every GPU here with this driver (the doctor's advice)", adv.Torch, adv.Variant)}
	specs := []string{"torch==" + adv.Torch + ".*"}
	if pk, ok := env.Package("torch"); ok {
		a.Remove = append(a.Remove, "torch "+pk.Version)
	}
	for _, name := range companions {
		pk, ok := env.Package(name)
		if !ok {
			continue
		}
		a.Remove = append(a.Remove, name+" "+pk.Version)
		switch name {
		case "torchvision":
			specs = append(specs, "torchvision=="+adv.TorchVision+".*")
		case "torchaudio": // torchaudio 2.x follows torch's version
			specs = append(specs, "torchaudio=="+adv.Torch+".*")
		}
	}
	a.Install = specs
	args := append([]string{env.Interpreter, "-m", "pip", "install", "--force-reinstall"}, specs...)
	index := adv.IndexURL
	if indexURL != "" {
		index = indexURL
	}
	args = append(args, indexArgs(index)...)
	a.Commands = []Command{{Args: args}}
	return a, index, ""
}

// installer is the tool that installed a package (its dist-info's
// INSTALLER file: "pip", "conda", "uv"), "" when it does not say.
func installer(env gpu.PythonEnv, name string) string {
	pk, ok := env.Package(name)
	if !ok || pk.Location == "" {
		return ""
	}
	m, _ := filepath.Glob(filepath.Join(pk.Location, name+"-*.dist-info", "INSTALLER"))
	if under := strings.ReplaceAll(name, "-", "_"); under != name {
		more, _ := filepath.Glob(filepath.Join(pk.Location, under+"-*.dist-info", "INSTALLER"))
		m = append(m, more...)
	}
	for _, f := range m {
		st, err := os.Lstat(f)
		if err != nil || !st.Mode().IsRegular() || st.Size() > 256 {
			continue
		}
		if b, err := os.ReadFile(f); err == nil {
			return strings.ToLower(strings.TrimSpace(string(b)))
		}
	}
	return ""
}

// indexArgs are pip's arguments for an index: a local folder of wheels is
// read with --no-index --find-links, anything else is an index URL.
func indexArgs(index string) []string {
	if dir, ok := strings.CutPrefix(index, "file://"); ok {
		return []string{"--no-index", "--find-links", dir}
	}
	if st, err := os.Stat(index); err == nil && st.IsDir() {
		return []string{"--no-index", "--find-links", index}
	}
	return []string{"--index-url", index}
}

// userSiteAction removes the torch family from the user site when that
// copy is the one imported and shadows the environment's own.
func userSiteAction(env gpu.PythonEnv, home string, fs []gpu.Finding) (Action, string) {
	if env.Kind == "venv" {
		return Action{}, "a virtual environment does not read the user site; the copies are both inside it: follow the doctor's steps"
	}
	var first gpu.Package
	for _, pk := range env.Packages {
		if pk.Name == "torch" {
			first = pk
			break
		}
	}
	if home == "" || !isUnder(first.Location, filepath.Join(home, ".local")) {
		return Action{}, "the copy imported first is not in your user site (~/.local), so removing one would change the environment itself: follow the doctor's steps"
	}
	a := Action{Kind: KindUserSite, Findings: ids(fs),
		Why: "the copy of torch in your user site (" + first.Location + ") is imported before the environment's own; removing it lets the environment's build run"}
	names := []string{}
	for _, pk := range env.Packages {
		if pk.Location == first.Location && (pk.Name == "torch" || gpu.Contains(companions, pk.Name)) && !pk.Shadowed {
			names = append(names, pk.Name)
			a.Remove = append(a.Remove, pk.Name+" "+pk.Version+" (user site)")
			a.UserSite = append(a.UserSite, pk.Name+"=="+pk.Version)
		}
	}
	a.Commands = []Command{{Args: append([]string{env.Interpreter, "-m", "pip", "uninstall", "-y"}, names...)}}
	return a, ""
}

func isUnder(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Fixable says whether a finding of the doctor is one a plan may fix (in
// the right environment): the window offers "Fix it" on those.
func Fixable(id string) bool {
	_, conflict := conflictRules[id]
	return wheelFindings[id] || id == "torch_installed_twice" || conflict || tfFindings[id] || id == jaxFinding
}
