package probe

import (
	"context"
	"fmt"
	"gpuwizard/gpu"
	"os"
	"regexp"
	"sort"
	"strings"
)

// probeWinPythons finds the Pythons (winPythonCandidates), then what
// Windows adds to them: the py launcher, the Store's python alias, the
// Visual C++ runtime torch needs, and the CUDA DLLs of conda
// environments (added to the libraries, whose source applies first).
func (p *prober) probeWinPythons(ctx context.Context) (func(*gpu.Facts), error) {
	envs, err := p.findPythons(ctx)
	launcher := p.pyLauncher()
	alias, store := p.pythonAlias()
	runtime, gaps := p.probeVCRuntime(envs)
	conda := p.condaLibraries(envs)
	return func(f *gpu.Facts) {
		f.Pythons = envs
		f.CUDA.Libraries = append(f.CUDA.Libraries, conda...)
		w := winFacts(f)
		w.PyLauncher, w.PythonAlias, w.StorePython = launcher, alias, store
		w.Runtime, w.RuntimeGaps = runtime, gaps
	}, err
}

// pyLauncher is the py.exe a user runs: on PATH, else where its
// installers put it (for all users: %SystemRoot%; for one user: under
// %LOCALAPPDATA%\Programs\Python\Launcher).
func (p *prober) pyLauncher() string {
	if py := p.lookPath("py"); py != "" {
		return py
	}
	cands := []string{p.sys.join(p.systemRoot(), "py.exe")}
	if la := p.localAppData(); la != "" {
		cands = append(cands, p.sys.join(la, "Programs", "Python", "Launcher", "py.exe"))
	}
	for _, c := range cands {
		if p.exists(c) {
			return c
		}
	}
	return ""
}

// isStoreAlias says whether path is one of the Microsoft Store's "App
// execution aliases" (an empty stand-in under ...\Microsoft\WindowsApps).
func (p *prober) isStoreAlias(path string) bool {
	return strings.HasSuffix(p.sys.key(p.sys.dir(path)), `\microsoft\windowsapps`)
}

// pythonAlias is the Store's python.exe alias when it is the first python
// on PATH, and whether a Store Python is installed behind it (its
// package folder under %LOCALAPPDATA%\Packages).
func (p *prober) pythonAlias() (alias string, store bool) {
	hits := p.lookPathAll("python")
	if len(hits) == 0 || !p.isStoreAlias(hits[0]) {
		return "", false
	}
	if la := p.localAppData(); la != "" {
		store = len(p.glob(p.sys.join(la, "Packages", "PythonSoftwareFoundation.Python.3*"))) > 0
	}
	return hits[0], store
}

// winPythonCandidates lists the interpreters a Windows user may run:
// python and python3 on PATH, the py launcher's list, the active venv
// and conda environment, the project's venvs, then python.org installs,
// conda's base and environments and pyenv-win's versions on disk.
func (p *prober) winPythonCandidates(ctx context.Context) ([]candidate, error) {
	var out []candidate
	for _, name := range []string{"python", "python3"} {
		first := true
		for _, hit := range p.lookPathAll(name) {
			if p.isStoreAlias(hit) {
				continue // an empty stand-in: the Store Python is not read through it
			}
			cmd := ""
			if first {
				cmd, first = name, false
			}
			out = append(out, candidate{hit, "PATH (" + name + ")", cmd})
		}
	}
	launched, err := p.pyLauncherPythons(ctx)
	out = append(out, launched...)
	if v := p.o.Environ["VIRTUAL_ENV"]; p.sys.isAbs(v) {
		out = append(out, candidate{p.sys.join(v, "Scripts", "python.exe"), "VIRTUAL_ENV", ""})
	}
	if v := p.o.Environ["CONDA_PREFIX"]; p.sys.isAbs(v) {
		out = append(out, candidate{p.sys.join(v, "python.exe"), "CONDA_PREFIX", ""})
	}
	if cwd := p.o.Cwd; p.sys.isAbs(cwd) {
		for _, v := range []string{".venv", "venv", "env"} {
			out = append(out, candidate{p.sys.join(cwd, v, "Scripts", "python.exe"), `.\` + v, ""})
		}
		// ComfyUI's portable build keeps its own Python beside the app.
		out = append(out, candidate{p.sys.join(cwd, "python_embeded", "python.exe"), `.\python_embeded`, ""})
	}
	for _, g := range p.winPythonGlobs() {
		for _, hit := range p.glob(g) {
			out = append(out, candidate{hit, "on disk", ""})
		}
	}
	return out, err
}

// winPythonGlobs are where Windows Pythons live on disk.
func (p *prober) winPythonGlobs() []string {
	var globs []string
	if la := p.localAppData(); la != "" {
		globs = append(globs, p.sys.join(la, "Programs", "Python", "Python3*", "python.exe"))
	}
	globs = append(globs, p.sys.join(p.programFiles(), "Python3*", "python.exe"), `C:\Python3*\python.exe`)
	conda := []string{"miniconda3", "anaconda3", "miniforge3", "mambaforge"}
	var condaRoots []string
	if home := p.o.Home; home != "" {
		for _, c := range conda {
			condaRoots = append(condaRoots, p.sys.join(home, c))
		}
		globs = append(globs, p.sys.join(home, ".venv*", "Scripts", "python.exe"), p.sys.join(home, "venv*", "Scripts", "python.exe"),
			p.sys.join(home, ".virtualenvs", "*", "Scripts", "python.exe"),
			p.sys.join(home, ".pyenv", "pyenv-win", "versions", "*", "python.exe"))
	}
	if la := p.localAppData(); la != "" {
		for _, c := range conda {
			condaRoots = append(condaRoots, p.sys.join(la, c))
		}
	}
	for _, c := range conda {
		condaRoots = append(condaRoots, p.sys.join(p.winEnvDir("PROGRAMDATA", `C:\ProgramData`), c))
	}
	for _, r := range condaRoots {
		globs = append(globs, p.sys.join(r, "python.exe"), p.sys.join(r, "envs", "*", "python.exe"))
	}
	return globs
}

// pyLauncherPythons runs `py -0p` and lists the interpreters it knows,
// each with the command that runs it ("py -3.12"; the default one also
// "py").
func (p *prober) pyLauncherPythons(ctx context.Context) ([]candidate, error) {
	py := p.pyLauncher()
	if py == "" {
		return nil, nil
	}
	out, err := p.o.Runner.Run(ctx, py, "-0p")
	var cands []candidate
	for _, e := range ParsePyList(string(out)) {
		c := candidate{path: e.Path, via: "py launcher (" + e.Tag + ")", command: e.Command()}
		if e.Tag == "" {
			c.via = "py launcher (active venv)"
		}
		cands = append(cands, c)
		if e.Default && e.Tag != "" {
			cands = append(cands, candidate{path: e.Path, via: c.via, command: "py"})
		}
	}
	if err != nil && len(cands) == 0 {
		return nil, fmt.Errorf("the py launcher's list (%s -0p): %w", py, err)
	}
	return cands, nil
}

// PyEntry is one interpreter of `py -0p`.
type PyEntry struct {
	Tag     string // "-V:3.12", "-3.9-64", "-V:ContinuumAnalytics/Anaconda39-64"
	Path    string
	Default bool // marked with * (what plain `py` runs)
}

// Command is what runs the entry through the launcher: "py -3.12" (a
// python.org Python's tag), "py -V:Company/Tag", or "py" for the active
// venv (which has no tag).
func (e PyEntry) Command() string {
	tag := e.Tag
	if tag == "" {
		return "py"
	}
	if v, ok := strings.CutPrefix(tag, "-V:"); ok && pyVersionTagRE.MatchString(v) {
		tag = "-" + v
	}
	return "py " + tag
}

var (
	// pyListRE reads a line of `py -0p` (the launcher of Python 3.11
	// and later: " -V:3.12 *        C:\...\python.exe"; older ones:
	// " -3.9-64        C:\...\python.exe *"; an active venv has no tag).
	pyListRE       = regexp.MustCompile(`^\s*(-\S+)?\s*(\*\s+)?((?:[A-Za-z]:\\|\\\\)\S.*?)(\s+\*)?\s*$`)
	pyVersionTagRE = regexp.MustCompile(`^\d+(\.\d+)?(-(32|64|arm64))?$`)
)

// ParsePyList reads `py -0p` output; lines naming no path (the "Active
// venv" line, the heading of old launchers) are skipped.
func ParsePyList(out string) []PyEntry {
	var list []PyEntry
	for _, line := range strings.Split(strings.ReplaceAll(out, "\r", ""), "\n") {
		m := pyListRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		list = append(list, PyEntry{Tag: m[1], Path: m[3], Default: m[2] != "" || m[4] != ""})
	}
	return list
}

var (
	winPythonDLLRE = regexp.MustCompile(`(?i)^python3(\d+)\.dll$`)
	winPythonDirRE = regexp.MustCompile(`(?i)python3(\d+)$`)
)

// describeWinPython reads a Windows interpreter's layout without running
// it: a venv has Scripts\python.exe and pyvenv.cfg one folder up; any
// other Python (python.org, conda, pyenv-win, embedded) has python.exe
// in its prefix, its packages in Lib\site-packages and python3NN.dll
// beside it, which gives the version.
func (p *prober) describeWinPython(path string) (gpu.PythonEnv, bool) {
	if path == "" || p.isStoreAlias(path) {
		return gpu.PythonEnv{}, false
	}
	st, err := os.Stat(p.file(path))
	if err != nil || st.IsDir() {
		return gpu.PythonEnv{}, false
	}
	env := gpu.PythonEnv{Interpreter: path, Kind: "other", Prefix: p.sys.dir(path)}
	venvRoot := p.sys.dir(env.Prefix)
	cfg, cfgErr := p.readFile(p.sys.join(venvRoot, "pyvenv.cfg"), capSmall)
	if cfgErr == nil && strings.EqualFold(p.sys.base(env.Prefix), "Scripts") {
		env.Prefix, env.Kind = venvRoot, "venv"
	} else {
		cfgErr = os.ErrNotExist
		switch {
		case p.exists(p.sys.join(env.Prefix, "conda-meta")):
			env.Kind = "conda"
		case strings.Contains(p.sys.key(env.Prefix), `\.pyenv\`):
			env.Kind = "pyenv"
		}
	}
	kv := parseVenvCfg(cfg, cfgErr)
	env.Version = venvCfgVersion(kv)
	if env.Version == "" {
		env.Version = p.winPythonVersion(env.Prefix)
	}
	env.SitePackages = p.winSiteDirs(env, kv)
	return env, true
}

// winPythonVersion reads the version from python3NN.dll in the prefix
// ("python312.dll" → 3.12), else from the folder's name (Python312).
func (p *prober) winPythonVersion(prefix string) string {
	var vs []string
	for _, f := range p.glob(p.sys.join(prefix, "python3*.dll")) {
		if m := winPythonDLLRE.FindStringSubmatch(p.sys.base(f)); m != nil {
			vs = append(vs, m[1])
		}
	}
	if m := winPythonDirRE.FindStringSubmatch(p.sys.base(prefix)); len(vs) == 0 && m != nil {
		vs = append(vs, m[1])
	}
	if len(vs) == 0 {
		return ""
	}
	sort.Slice(vs, func(i, j int) bool { return len(vs[i]) < len(vs[j]) || len(vs[i]) == len(vs[j]) && vs[i] < vs[j] })
	return "3." + vs[len(vs)-1]
}

// winSiteDirs lists the folders a Windows Python imports packages from,
// in sys.path order: PYTHONPATH, the user site under %APPDATA% (not for
// a venv), the prefix's Lib\site-packages, and for a venv that includes
// the system site, its base Python's (pyvenv.cfg's home is that
// Python's folder on Windows).
func (p *prober) winSiteDirs(env gpu.PythonEnv, cfg map[string]string) []string {
	dirs := p.pythonPath()
	v := strings.ReplaceAll(env.Version, ".", "")
	if ad := p.appData(); env.Kind != "venv" && p.o.Environ["PYTHONNOUSERSITE"] == "" && ad != "" && v != "" {
		dirs = append(dirs, p.sys.join(ad, "Python", "Python"+v, "site-packages"))
	}
	dirs = append(dirs, p.sys.join(env.Prefix, "Lib", "site-packages"))
	if env.Kind == "venv" && strings.EqualFold(cfg["include-system-site-packages"], "true") && p.sys.isAbs(cfg["home"]) {
		dirs = append(dirs, p.sys.join(cfg["home"], "Lib", "site-packages"))
	}
	return p.existingDirs(dirs)
}
