package watch

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
	"gpuwizard/gpu/doctor"
	"gpuwizard/gpu/probe"
)

// identity is what the training process is: its command line,
// environment, program and loaded libraries. It is read again when the
// process execs (env VAR=… python, a pyenv shim, bash -c 'exec …' start
// as one program and become another under the same PID).
type identity struct {
	pid        int
	start      uint64
	cmdline    []string
	comm       string
	exe, cwd   string
	exeErr     error
	environ    map[string]string
	environErr error
	foreign    bool     // another user's process (or its owner unknown)
	files      []string // its mapped files
	mapsErr    error
	before     []string // the command lines it ran before its last exec, oldest first
}

// lead follows a worker or a rank up to the training's main process: a
// DataLoader worker (a forked copy) to its parent, a multiprocessing
// worker past its fork server, a torchrun rank to torchrun. The reasons are
// kept for the report.
func (w *Watcher) lead(main proc) proc {
	for range 6 {
		if main.PPID <= 1 {
			break
		}
		parent, err := w.src.proc(main.PPID)
		if err != nil {
			break
		}
		why := w.childOf(main, parent)
		if why == "" {
			break
		}
		w.led = append(w.led, fmt.Sprintf("PID %d is %s PID %d (%s)", main.PID, why, parent.PID, shortCommand(parent.Cmdline, parent.Comm)))
		main = parent
	}
	w.pid = main.PID
	return main
}

// childOf says what c is to its parent when it is part of the parent's
// training ("a DataLoader worker (a forked copy) of", "rank 1 of
// torchrun,"), or "".
func (w *Watcher) childOf(c, parent proc) string {
	if !trainerLike(parent) {
		return ""
	}
	switch workerKind(c.Cmdline) {
	case "resource tracker":
		return "multiprocessing's resource tracker, started by"
	case "fork server":
		return "multiprocessing's fork server, started by"
	case "spawned worker":
		return "a multiprocessing worker (spawned) of"
	}
	if len(c.Cmdline) > 0 && slices.Equal(c.Cmdline, parent.Cmdline) {
		return "a DataLoader worker (a forked copy) of"
	}
	if isLauncher(parent) {
		env, _ := w.src.environ(c.PID)
		for _, k := range []string{"RANK", "LOCAL_RANK"} {
			if r := env[k]; r != "" {
				return "rank " + r + " of " + programName(parent) + ","
			}
		}
	}
	return ""
}

// workerKind names a multiprocessing helper from its command line:
// "resource tracker", "fork server", "spawned worker" or "".
func workerKind(cmdline []string) string {
	cmd := strings.Join(cmdline, " ")
	switch {
	case strings.Contains(cmd, "multiprocessing.resource_tracker"):
		return "resource tracker"
	case strings.Contains(cmd, "multiprocessing.forkserver"):
		return "fork server"
	case strings.Contains(cmd, "multiprocessing.spawn") || strings.Contains(cmd, "spawn_main"):
		return "spawned worker"
	}
	return ""
}

// launchers start one training process per GPU (ranks).
var launchers = []string{"torchrun", "torch.distributed.run", "torch.distributed.launch", "accelerate", "deepspeed"}

func isLauncher(p proc) bool {
	for i, a := range p.Cmdline {
		if i > 3 {
			break
		}
		b := programBase(a)
		for _, l := range launchers {
			if b == l || a == l {
				return true
			}
		}
	}
	return slices.Contains(launchers, p.Comm)
}

// programBase is a program path's base name in lower case, without .exe
// (a Windows path's too).
func programBase(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		p = p[i+1:]
	}
	return strings.TrimSuffix(strings.ToLower(p), ".exe")
}

// programName is the program a process runs, for people: "torchrun",
// "python3".
func programName(p proc) string {
	if len(p.Cmdline) > 0 {
		if len(p.Cmdline) > 1 && isPythonName(programBase(p.Cmdline[0])) && !strings.HasPrefix(p.Cmdline[1], "-") {
			if b := programBase(p.Cmdline[1]); !strings.HasSuffix(b, ".py") {
				return b // a console script: python .../bin/torchrun
			}
		}
		return programBase(p.Cmdline[0])
	}
	return p.Comm
}

func isPythonName(b string) bool {
	return strings.HasPrefix(b, "python") || strings.HasPrefix(b, "pypy")
}

// trainerNames are programs that train: Python and its training commands,
// and gpuwizard's own trainer.
var trainerNames = []string{"yolo", "ultralytics", "torchrun", "accelerate", "deepspeed", "lightning"}

// pythonLike reports whether the process runs Python (or one of its
// training commands).
func pythonLike(p proc) bool {
	if isPythonName(strings.ToLower(p.Comm)) || slices.Contains(trainerNames, p.Comm) || strings.HasPrefix(p.Comm, "pt_") {
		return true
	}
	for i, a := range p.Cmdline {
		if i > 1 {
			break
		}
		if b := programBase(a); isPythonName(b) || slices.Contains(trainerNames, b) {
			return true
		}
	}
	return false
}

// gpuwizardTrain reports whether the process is `gpuwizard train`.
func gpuwizardTrain(p proc) bool {
	return len(p.Cmdline) > 1 && programBase(p.Cmdline[0]) == "gpuwizard" && p.Cmdline[1] == "train"
}

// trainerLike reports whether the process may train: Python, a training
// command, gpuwizard train.
func trainerLike(p proc) bool { return pythonLike(p) || gpuwizardTrain(p) }

// identify finds the tree's training process (the watched one, or under a
// wrapper the first descendant that loaded a framework or runs Python)
// and reads its identity: again when it is another process, or the same
// PID after an exec.
func (w *Watcher) identify(ms []member, now time.Time) {
	fresh := w.due(w.mapsAt, now) || ms[0].PID != w.mainPID
	if fresh {
		w.mainFiles, w.mainErr = w.src.modules(ms[0].PID)
		w.mainPID, w.mapsAt = ms[0].PID, now
	}
	f := w.focus(ms, w.mainFiles)
	exe, exeErr := w.src.exe(f.PID)
	switch {
	case f.PID != w.id.pid || f.StartTime != w.id.start:
		w.id = identity{pid: f.PID, start: f.StartTime}
		w.readIdentity(f, exe, exeErr)
		fresh = true
	case len(f.Cmdline) > 0 && !slices.Equal(f.Cmdline, w.id.cmdline) || exeErr == nil && w.id.exeErr == nil && exe != w.id.exe:
		before := append(slices.Clone(w.id.before), shortCommand(w.id.cmdline, w.id.comm))
		w.id = identity{pid: f.PID, start: f.StartTime, before: before}
		w.readIdentity(f, exe, exeErr)
		fresh = true
	}
	if !fresh {
		return
	}
	files, err := w.mainFiles, w.mainErr
	if f.PID != ms[0].PID || w.mainPID != ms[0].PID {
		files, err = w.src.modules(f.PID)
	}
	switch {
	case err == nil && len(files) > 0:
		w.id.files, w.id.mapsErr = files, nil
	case err == nil:
		// An empty map: the process is exiting (a live one maps at least
		// its program); keep what it had loaded.
	case w.id.files == nil:
		w.id.mapsErr = err
	}
}

// Reading a process's maps is most of a reading's cost (the kernel writes
// out every mapping of a torch process): they are read at every reading
// while the watch settles, then every mapsRefresh (imports and CUDA's
// start happen in the first seconds; a new or exec'd process is read at
// once).
const settleReads = 15 * time.Second

// due reports whether what was read at last is to be read again now.
func (w *Watcher) due(last, now time.Time) bool {
	return last.IsZero() || now.Sub(w.started) < settleReads || now.Sub(last) >= mapsRefresh
}

// focus picks the training process of the tree: the watched process when
// it loaded a framework or CUDA; else the first descendant that loaded one
// (under a shell, a launcher or a Jupyter server); else the first that
// runs Python or trains; else the watched process.
func (w *Watcher) focus(ms []member, mainFiles []string) proc {
	if hasFramework(mainFiles) {
		return ms[0].proc
	}
	for _, m := range ms[1:] {
		if ci := w.children[m.PID]; ci != nil && hasFramework(ci.files) {
			return m.proc
		}
	}
	for _, m := range ms {
		if trainerLike(m.proc) {
			return m.proc
		}
	}
	return ms[0].proc
}

// hasFramework reports whether the files hold a framework or CUDA library.
func hasFramework(files []string) bool {
	for _, f := range files {
		if libKind(f) != "" {
			return true
		}
	}
	return false
}

// readIdentity reads the process's program, folder and environment.
func (w *Watcher) readIdentity(f proc, exe string, exeErr error) {
	w.id.cmdline, w.id.comm = f.Cmdline, f.Comm
	if len(w.id.cmdline) == 0 && f.PID == w.asked && len(w.command) > 0 {
		w.id.cmdline = w.command
	}
	w.id.exe, w.id.exeErr = exe, exeErr
	if cr, ok := w.src.(cwdReader); ok {
		w.id.cwd, _ = cr.cwd(f.PID)
	}
	w.id.environ, w.id.environErr = w.src.environ(f.PID)
	or, ok := w.src.(ownerReader)
	w.id.foreign = !ok || !or.ownedBySelf(f)
}

// probeEnviron is the environment the doctor's probe judges: the
// process's own, except that the programs the probe runs (nvcc,
// ldconfig) are looked up on watch's own PATH when the process belongs to
// another user: its PATH may lead to any program that user wrote, and
// watch (root, or an administrator) must not run it.
func (w *Watcher) probeEnviron() map[string]string {
	env := w.id.environ
	if env == nil || !w.id.foreign {
		return env
	}
	env = maps.Clone(env)
	delete(env, "PATH")
	if own, ok := os.LookupEnv("PATH"); ok {
		env["PATH"] = own
	}
	return env
}

// libs lists the libraries of interest the tree has loaded: the training
// process's first, then its children's that it lacks.
func (w *Watcher) libs() libSet {
	var out libSet
	seen := map[string]bool{}
	add := func(pid int, files []string) {
		for _, f := range files {
			if k := libKind(f); k != "" && !seen[k] {
				seen[k] = true
				out = append(out, Lib{Kind: k, Path: f, PID: pid})
			}
		}
	}
	add(w.id.pid, w.id.files)
	pids := make([]int, 0, len(w.children))
	for pid := range w.children {
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	alive := map[int]bool{}
	for _, m := range w.last.members {
		alive[m.PID] = true
	}
	for _, pid := range pids {
		if alive[pid] {
			add(pid, w.children[pid].files)
		}
	}
	return out
}

// allFiles is every mapped file of the tree (for finding site-packages).
func (w *Watcher) allFiles() []string {
	files := slices.Clone(w.id.files)
	for _, ci := range w.children {
		files = append(files, ci.files...)
	}
	return files
}

// isPython reports whether the training process runs a Python
// interpreter: its program, its name or a libpython it mapped.
func (w *Watcher) isPython() bool {
	if isPythonName(programBase(w.id.exe)) || isPythonName(strings.ToLower(w.id.comm)) {
		return true
	}
	if len(w.id.cmdline) > 0 && isPythonName(programBase(w.id.cmdline[0])) {
		return true
	}
	for _, f := range w.id.files {
		if b := programBase(f); strings.HasPrefix(b, "libpython3") || strings.HasPrefix(b, "python3") && strings.HasSuffix(b, ".dll") {
			return true
		}
	}
	return false
}

// interpreter finds the Python the process runs, as the doctor reads it:
// the candidate whose site-packages holds the framework it loaded. A
// process that does not run Python has none.
func (w *Watcher) interpreter() *gpu.PythonEnv {
	if !w.isPython() {
		w.interp, w.interpTried, w.interpKey = nil, false, ""
		return nil
	}
	site := ""
	for _, pkg := range []string{"torch", "tensorflow", "jaxlib", "ultralytics"} {
		if site = frameworkSite(w.allFiles(), pkg); site != "" {
			break
		}
	}
	cands := w.interpreterCandidates()
	key := site + "\x00" + strings.Join(cands, "\x00")
	if w.interpTried && key == w.interpKey {
		return w.interp
	}
	w.interpTried, w.interpKey = true, key
	opts := probe.Options{Root: w.o.Root, Environ: w.id.environ, Home: w.id.environ["HOME"], Cwd: w.id.cwd}
	if opts.Environ == nil {
		opts.Environ = map[string]string{}
	}
	var firstEnv *gpu.PythonEnv
	for _, c := range cands {
		env, ok := probe.Interpreter(opts, c)
		if !ok {
			continue
		}
		if site == "" || gpu.Contains(env.SitePackages, site) {
			w.interp = &env
			return w.interp
		}
		if firstEnv == nil {
			firstEnv = &env
		}
	}
	w.interp = firstEnv
	return w.interp
}

// interpreterCandidates lists the paths that may be the process's Python:
// argv[0] as it was started when it names a Python (a venv's bin/python
// keeps the venv, which the resolved exe loses), the environment's venv or
// conda prefix, and exe.
func (w *Watcher) interpreterCandidates() []string {
	var out []string
	add := func(p string) {
		if p != "" && !gpu.Contains(out, p) {
			out = append(out, p)
		}
	}
	env := w.id.environ
	if len(w.id.cmdline) > 0 && isPythonName(programBase(w.id.cmdline[0])) {
		a0 := w.id.cmdline[0]
		switch {
		case isAbsAny(a0):
			add(a0)
		case strings.ContainsAny(a0, `/\`) && w.id.cwd != "":
			add(joinLike(w.id.cwd, a0))
		default:
			for _, dir := range splitPathList(env["PATH"]) {
				if p := joinLike(dir, a0); isAbsAny(dir) && w.src.isFile(p) {
					add(p)
					break
				}
			}
		}
	}
	for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if prefix := env[v]; prefix != "" {
			add(prefixPython(prefix, v == "CONDA_PREFIX"))
		}
	}
	if isPythonName(programBase(w.id.exe)) {
		add(w.id.exe)
	}
	return out
}

// isAbsAny reports whether p is absolute on Unix or on Windows.
func isAbsAny(p string) bool {
	return strings.HasPrefix(p, "/") || len(p) > 2 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') || strings.HasPrefix(p, `\\`)
}

// windowsStyle reports whether a path of the watched machine is a Windows
// one (the watched machine's own style, whatever runs the watch).
func windowsStyle(p string) bool { return len(p) > 1 && p[1] == ':' || strings.HasPrefix(p, `\\`) }

// joinLike joins a folder and a name in the folder's own style.
func joinLike(dir, name string) string {
	if windowsStyle(dir) {
		return strings.TrimRight(dir, `\/`) + `\` + strings.ReplaceAll(name, "/", `\`)
	}
	return path.Join(dir, name)
}

// splitPathList splits PATH in the style of its entries (";" on Windows).
func splitPathList(s string) []string {
	if strings.Contains(s, ";") || windowsStyle(s) {
		return strings.Split(s, ";")
	}
	return strings.Split(s, ":")
}

// prefixPython is the Python of a venv or conda prefix: bin/python, or
// Scripts\python.exe (venv) and python.exe (conda) on Windows.
func prefixPython(prefix string, conda bool) string {
	switch {
	case !windowsStyle(prefix):
		return path.Join(prefix, "bin", "python")
	case conda:
		return joinLike(prefix, "python.exe")
	}
	return joinLike(prefix, `Scripts\python.exe`)
}

// doctor returns the machine's facts and the doctor's report on them, with
// the process's interpreter as the only Python. The machine is probed
// again only when the process's environment changed (an exec).
func (w *Watcher) doctor(ctx context.Context) (*gpu.Facts, *gpu.Report) {
	if w.facts == nil || !maps.Equal(w.factsEnv, w.id.environ) {
		w.facts, w.factsEnv, w.diag = w.o.machine(ctx, w.probeEnviron()), w.id.environ, nil
	}
	if w.matrix == nil && w.matrixErr == nil {
		if w.o.Matrix != nil {
			w.matrix = w.o.Matrix
		} else {
			w.matrix, w.matrixErr = compat.LoadMatrix()
		}
	}
	if w.matrix == nil || w.facts == nil {
		return w.facts, nil
	}
	env := w.interpreter()
	want := ""
	if env != nil {
		want = env.Interpreter
	}
	have := ""
	if w.diag != nil && len(w.diag.Facts.Pythons) > 0 {
		have = w.diag.Facts.Pythons[0].Interpreter
	}
	if w.diag == nil || want != have {
		f := *w.facts
		f.Pythons = nil
		if env != nil {
			f.Pythons = []gpu.PythonEnv{*env}
		}
		rep := doctor.Diagnose(&f, w.matrix)
		w.diag = &rep
	}
	return w.facts, w.diag
}
