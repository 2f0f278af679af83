package fix

import (
	"fmt"
	"strings"

	"gpuwizard/gpu"
)

// KindConflict removes the CPU package installed beside the GPU one and
// reinstalls the GPU one (the two share files, so removing one breaks the
// other).
const KindConflict = "conflicting_builds"

// conflictRule is a GPU package and the CPU packages that must not be
// installed beside it.
type conflictRule struct {
	gpu string
	cpu []string
}

// conflictRules are the doctor's findings of two builds in one environment.
// tf_cpu_only is one only when tensorflow is installed beside a CPU package.
var conflictRules = map[string]conflictRule{
	"onnxruntime_cpu_and_gpu_packages":  {gpu: "onnxruntime-gpu", cpu: []string{"onnxruntime"}},
	"paddlepaddle_cpu_and_gpu_packages": {gpu: "paddlepaddle-gpu", cpu: []string{"paddlepaddle"}},
	"tf_cpu_only":                       {gpu: "tensorflow", cpu: []string{"tensorflow-cpu", "tensorflow-intel"}},
}

// conflictOf is the rule of finding f in env, with the CPU packages
// installed there; ok is false when f is not two builds in env.
func conflictOf(f gpu.Finding, env gpu.PythonEnv) (conflictRule, []gpu.Package, bool) {
	rule, ok := conflictRules[f.ID]
	if !ok {
		return conflictRule{}, nil, false
	}
	if _, has := env.Package(rule.gpu); !has {
		return conflictRule{}, nil, false
	}
	var cpu []gpu.Package
	for _, name := range rule.cpu {
		if pk, has := env.Package(name); has {
			cpu = append(cpu, pk)
		}
	}
	return rule, cpu, len(cpu) > 0
}

// conflictAction uninstalls the CPU packages of finding f and
// force-reinstalls the GPU one at its installed version (without its
// dependencies, which are installed already), both with env's own pip;
// why is set when it cannot be done.
func conflictAction(env gpu.PythonEnv, indexURL string, f gpu.Finding) (a Action, why string) {
	rule, cpu, _ := conflictOf(f, env)
	keep, _ := env.Package(rule.gpu)
	names := []string{rule.gpu}
	for _, pk := range cpu {
		names = append(names, pk.Name)
	}
	for _, n := range names {
		if by := installer(env, n); by != "" && by != "pip" && by != "uv" {
			return Action{}, n + " in this environment was installed by " + by + ", not pip; changing it with pip would leave " + by + "'s records wrong: remove the CPU package with " + by + ", or use a virtual environment"
		}
	}
	if keep.Version == "" {
		return Action{}, "the installed version of " + rule.gpu + " is unknown, so it cannot be reinstalled as it is: follow the doctor's steps"
	}
	a = Action{Kind: KindConflict, Findings: []string{f.ID}, Index: orPyPI(indexURL),
		Why: fmt.Sprintf("%s is installed beside %s and its files win the import; removing the CPU package and reinstalling %s %s (the two share files) leaves only the GPU build",
			strings.Join(names[1:], " and "), rule.gpu, rule.gpu, keep.Version)}
	uninstall := []string{env.Interpreter, "-m", "pip", "uninstall", "-y"}
	for _, pk := range cpu {
		a.Remove = append(a.Remove, pk.Name+" "+pk.Version)
		uninstall = append(uninstall, pk.Name)
	}
	spec := rule.gpu + "==" + keep.Version
	a.Install = []string{spec + " (reinstalled)"}
	install := []string{env.Interpreter, "-m", "pip", "install", "--force-reinstall", "--no-deps", spec}
	if indexURL != "" {
		install = append(install, indexArgs(indexURL)...)
	}
	a.Commands = []Command{{Args: uninstall}, {Args: install}}
	return a, ""
}

func orPyPI(index string) string {
	if index == "" {
		return "PyPI, pip's default index"
	}
	return index
}

// addConflict plans the action of finding f, or adds f to the same action
// planned for another finding (two CPU-only TensorFlow packages are two
// findings with one fix).
func (p *Plan) addConflict(env gpu.PythonEnv, indexURL string, f gpu.Finding) {
	a, why := conflictAction(env, indexURL, f)
	if why != "" {
		p.NotFixable = append(p.NotFixable, Unfixable{ID: f.ID, Title: f.Title, Why: why})
		return
	}
	for i, b := range p.Actions {
		if b.Kind == KindConflict && sameCommands(a.Commands, b.Commands) {
			if !gpu.Contains(b.Findings, f.ID) {
				p.Actions[i].Findings = append(p.Actions[i].Findings, f.ID)
			}
			return
		}
	}
	p.Actions = append(p.Actions, a)
}

func sameCommands(a, b []Command) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].String() != b[i].String() {
			return false
		}
	}
	return true
}
