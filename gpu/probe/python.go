package probe

import (
	"bufio"
	"context"
	"gpuwizard/gpu"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// candidate is an interpreter path and how it was found.
type candidate struct {
	path    string
	via     string
	command string // the command name that runs it first on PATH ("python3"), or ""
}

// probePythons finds every interpreter a user may be running and reads its
// frameworks statically from site-packages: no Python is started.
func (p *prober) probePythons(ctx context.Context) (func(*gpu.Facts), error) {
	envs, err := p.findPythons(ctx)
	return func(f *gpu.Facts) { f.Pythons = envs }, err
}

// findPythons describes every interpreter the system's candidates name,
// one environment per prefix, and reads their packages. The error says
// what could not be asked (the py launcher that failed); the
// environments found are returned with it.
func (p *prober) findPythons(ctx context.Context) ([]gpu.PythonEnv, error) {
	cands, err := p.sys.pythonCandidates(ctx, p)
	var envs []gpu.PythonEnv
	index := map[string]int{} // prefix (its key) → position in envs
	for _, c := range cands {
		if ctx.Err() != nil {
			break
		}
		env, ok := p.sys.describePython(p, c.path)
		if !ok {
			continue
		}
		i, seen := index[p.sys.key(env.Prefix)]
		if !seen {
			i = len(envs)
			index[p.sys.key(env.Prefix)] = i
			envs = append(envs, env)
		}
		e := &envs[i]
		if !gpu.Contains(e.FoundVia, c.via) {
			e.FoundVia = append(e.FoundVia, c.via)
		}
		if c.command != "" && !gpu.Contains(e.Commands, c.command) {
			e.Commands = append(e.Commands, c.command)
		}
	}
	for i := range envs {
		p.readPackages(&envs[i])
	}
	return envs, err
}

var (
	pythonNameRE    = regexp.MustCompile(`^python3(\.[0-9]+)?$`)
	pythonVersionRE = regexp.MustCompile(`python([0-9]+\.[0-9]+)$`)
)

// linuxPythonCandidates lists interpreter paths in the order a user
// meets them: the commands on PATH first, then environments on disk.
func (p *prober) linuxPythonCandidates() []candidate {
	var out []candidate
	home, cwd := p.o.Home, p.o.Cwd
	// The commands a user types, resolved the way the shell does.
	for _, name := range []string{"python", "python3"} {
		for i, hit := range p.lookPathAll(name) {
			cmd := ""
			if i == 0 {
				cmd = name
			}
			out = append(out, candidate{p.resolveShim(hit, name), "PATH (" + name + ")", cmd})
		}
	}
	for _, dir := range p.pathDirs() {
		if strings.Contains(dir, "/.pyenv/shims") {
			continue
		}
		ents, _ := os.ReadDir(p.file(dir))
		for _, e := range ents {
			if pythonNameRE.MatchString(e.Name()) && e.Name() != "python3" {
				out = append(out, candidate{p.sys.join(dir, e.Name()), "PATH (" + e.Name() + ")", ""})
			}
		}
	}
	// The interpreter behind `yolo`, from its script's first line.
	if yolo := p.lookPath("yolo"); yolo != "" {
		if py := p.shebangInterpreter(yolo); py != "" {
			out = append(out, candidate{py, "yolo entry point (" + yolo + ")", "yolo"})
		}
	}
	if v := p.o.Environ["VIRTUAL_ENV"]; v != "" {
		out = append(out, candidate{p.sys.join(v, "bin", "python"), "VIRTUAL_ENV", ""})
	}
	if v := p.o.Environ["CONDA_PREFIX"]; v != "" {
		out = append(out, candidate{p.sys.join(v, "bin", "python"), "CONDA_PREFIX", ""})
	}
	if cwd != "" {
		for _, v := range []string{".venv", "venv"} {
			out = append(out, candidate{p.sys.join(cwd, v, "bin", "python"), "./" + v, ""})
		}
	}
	var globs []string
	if home != "" {
		j := p.sys.join
		globs = append(globs,
			j(home, ".venv*", "bin", "python"), j(home, "venv*", "bin", "python"), j(home, ".virtualenvs", "*", "bin", "python"),
			j(home, ".pyenv", "versions", "*", "bin", "python"), j(home, ".pyenv", "versions", "*", "envs", "*", "bin", "python"))
		for _, c := range []string{"miniconda3", "anaconda3", "miniforge3", "mambaforge", "micromamba", ".conda"} {
			globs = append(globs, j(home, c, "bin", "python"), j(home, c, "envs", "*", "bin", "python"))
		}
	}
	for _, c := range []string{"/opt/conda", "/opt/miniconda3", "/opt/anaconda3"} {
		globs = append(globs, p.sys.join(c, "bin", "python"), p.sys.join(c, "envs", "*", "bin", "python"))
	}
	for _, g := range globs {
		for _, hit := range p.glob(g) {
			out = append(out, candidate{hit, "on disk", ""})
		}
	}
	out = append(out, candidate{"/usr/bin/python3", "system", ""})
	return out
}

// resolveShim turns a pyenv shim into the interpreter it would run; other
// paths come back unchanged.
func (p *prober) resolveShim(path, name string) string {
	if !strings.Contains(path, "/.pyenv/shims/") {
		return path
	}
	root := p.sys.dir(p.sys.dir(path))
	version := ""
	if v := p.o.Environ["PYENV_VERSION"]; v != "" {
		version = v
	} else {
		for dir := p.o.Cwd; dir != "" && version == ""; dir = p.sys.dir(dir) {
			if b, err := p.readFile(p.sys.join(dir, ".python-version"), capSmall); err == nil {
				version = string(b)
			}
			if dir == "/" || dir == "." {
				break
			}
		}
		if version == "" {
			if b, err := p.readFile(p.sys.join(root, "version"), capSmall); err == nil {
				version = string(b)
			}
		}
	}
	version = strings.TrimSpace(strings.SplitN(strings.SplitN(version, "\n", 2)[0], ":", 2)[0])
	if version == "" || version == "system" {
		for _, hit := range p.lookPathAll(name) {
			if !strings.Contains(hit, "/.pyenv/shims/") {
				return hit
			}
		}
		return path
	}
	return p.sys.join(root, "versions", version, "bin", name)
}

// shebangInterpreter reads "#!/path/python" (or "#!/usr/bin/env python3").
func (p *prober) shebangInterpreter(script string) string {
	fh, err := p.openFile(script)
	if err != nil {
		return ""
	}
	defer fh.Close()
	line, _ := bufio.NewReader(io.LimitReader(fh, capLine)).ReadString('\n')
	if !strings.HasPrefix(line, "#!") {
		return ""
	}
	fields := strings.Fields(line[2:])
	if len(fields) == 0 {
		return ""
	}
	if p.sys.base(fields[0]) == "env" {
		for _, f := range fields[1:] {
			if !strings.HasPrefix(f, "-") {
				return p.resolveShim(p.lookPath(f), f)
			}
		}
		return ""
	}
	return fields[0]
}

// describeUnixPython finds an interpreter's prefix, kind, version and
// site-packages folders without running it, in a Unix layout.
func (p *prober) describeUnixPython(path string) (gpu.PythonEnv, bool) {
	if path == "" {
		return gpu.PythonEnv{}, false
	}
	st, err := os.Stat(p.file(path))
	if err != nil || st.IsDir() {
		return gpu.PythonEnv{}, false
	}
	env := gpu.PythonEnv{Interpreter: path, Kind: "other"}
	venvRoot := p.sys.dir(p.sys.dir(path))
	cfg, cfgErr := p.readFile(p.sys.join(venvRoot, "pyvenv.cfg"), capSmall)
	real := p.realPath(path)
	if cfgErr == nil {
		env.Prefix, env.Kind = venvRoot, "venv"
	} else {
		env.Prefix = p.sys.dir(p.sys.dir(real))
		switch {
		case p.exists(p.sys.join(env.Prefix, "conda-meta")):
			env.Kind = "conda"
		case strings.Contains(env.Prefix, "/.pyenv/versions/"):
			env.Kind = "pyenv"
		case env.Prefix == "/usr" || env.Prefix == "/usr/local" || env.Prefix == "/":
			env.Kind = "system"
		}
	}
	if m := pythonVersionRE.FindStringSubmatch(p.sys.base(real)); m != nil {
		env.Version = m[1]
	}
	kv := parseVenvCfg(cfg, cfgErr)
	if env.Version == "" {
		env.Version = venvCfgVersion(kv)
	}
	if env.Version == "" {
		m := p.glob(p.sys.join(env.Prefix, "lib", "python3.*"))
		sort.Strings(m)
		if len(m) > 0 {
			env.Version = strings.TrimPrefix(p.sys.base(m[len(m)-1]), "python")
		}
	}
	env.SitePackages = p.siteDirs(env, kv)
	return env, true
}

// parseVenvCfg reads pyvenv.cfg's "key = value" lines; nothing when it
// could not be read.
func parseVenvCfg(cfg []byte, err error) map[string]string {
	kv := map[string]string{}
	if err != nil {
		return kv
	}
	for _, line := range strings.Split(string(cfg), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if ok {
			kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return kv
}

// venvCfgVersion is the Python version a pyvenv.cfg names ("3.12").
func venvCfgVersion(kv map[string]string) string {
	for _, k := range []string{"version", "version_info"} {
		if mm := gpu.MajorMinor(kv[k]); mm != "" {
			return mm
		}
	}
	return ""
}

// siteDirs lists the folders Python would import packages from, in
// sys.path order, keeping only those that exist.
func (p *prober) siteDirs(env gpu.PythonEnv, cfg map[string]string) []string {
	var dirs []string
	dirs = append(dirs, p.pythonPath()...)
	v := env.Version
	userSite := env.Kind != "venv" && p.o.Environ["PYTHONNOUSERSITE"] == ""
	if userSite && p.o.Home != "" && v != "" {
		dirs = append(dirs, p.sys.join(p.o.Home, ".local", "lib", "python"+v, "site-packages"))
	}
	prefixes := []string{env.Prefix}
	if env.Kind == "venv" && strings.EqualFold(cfg["include-system-site-packages"], "true") && cfg["home"] != "" {
		prefixes = append(prefixes, p.sys.dir(cfg["home"]))
	}
	for _, pre := range prefixes {
		if pre == "" {
			continue // no prefix: a relative folder would be read from the working folder
		}
		dirs = append(dirs, p.sys.join(pre, "lib", "python"+v, "site-packages"))
		if pre == "/usr" || pre == "/usr/local" {
			dirs = append(dirs, p.sys.join("/usr/local/lib", "python"+v, "dist-packages"), "/usr/lib/python3/dist-packages", p.sys.join("/usr/lib", "python"+v, "dist-packages"))
		}
	}
	return p.existingDirs(dirs)
}

// pythonPath are the absolute folders of PYTHONPATH, which come first on
// every interpreter's sys.path.
func (p *prober) pythonPath() []string {
	var dirs []string
	for _, d := range p.sys.splitList(p.o.Environ["PYTHONPATH"]) {
		if p.sys.isAbs(d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// existingDirs keeps the folders that exist, once each, in order.
func (p *prober) existingDirs(dirs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range dirs {
		if seen[p.sys.key(d)] {
			continue
		}
		seen[p.sys.key(d)] = true
		if st, err := os.Stat(p.file(d)); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

var distInfoRE = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9_.]*?)-([0-9][^-]*?)(?:-py[0-9.]+)?(?:-[a-z0-9_]+)*\.(?:dist|egg)-info$`)

// readPackages lists the frameworks and nvidia-* wheels in each site folder.
func (p *prober) readPackages(env *gpu.PythonEnv) {
	seen := map[string]bool{}
	for _, dir := range env.SitePackages {
		ents, err := os.ReadDir(p.file(dir))
		if err != nil {
			continue
		}
		found := map[string]bool{}
		for _, e := range ents {
			m := distInfoRE.FindStringSubmatch(e.Name())
			if m == nil {
				continue
			}
			name := gpu.NormalizeName(m[1])
			if !gpu.Interesting(name) || found[name] {
				continue
			}
			found[name] = true
			pk := gpu.Package{Name: name, Version: m[2], Location: dir, Shadowed: seen[name]}
			seen[name] = true
			env.Packages = append(env.Packages, pk)
		}
		// A source or conda install may have the module without metadata.
		if !found["torch"] {
			if b, err := p.readFile(p.sys.join(dir, "torch", "version.py"), capSource); err == nil {
				if v := pyAssign(string(b), "__version__"); v != "" {
					env.Packages = append(env.Packages, gpu.Package{Name: "torch", Version: v, Location: dir, Shadowed: seen["torch"]})
					seen["torch"] = true
				}
			}
		}
	}
	for i := range env.Packages {
		p.buildFacts(env, &env.Packages[i])
	}
}

var pyAssignRE = regexp.MustCompile(`(?m)^([A-Za-z_][A-Za-z0-9_]*)\s*(?::\s*[A-Za-z_.\[\] ]+)?=\s*(?:'([^']*)'|"([^"]*)"|(None|True|False))`)

// pyAssign reads `name = 'value'` (or `name: Optional[str] = 'value'`)
// from a Python source; None reads as "".
func pyAssign(src, name string) string {
	for _, m := range pyAssignRE.FindAllStringSubmatch(src, -1) {
		if m[1] == name {
			return m[2] + m[3]
		}
	}
	return ""
}

func pyAssigned(src, name string) bool {
	for _, m := range pyAssignRE.FindAllStringSubmatch(src, -1) {
		if m[1] == name {
			return true
		}
	}
	return false
}

var buildInfoRE = regexp.MustCompile(`['"](cuda_version|cudnn_version|is_cuda_build|is_rocm_build)['"]\s*[:,]\s*(?:'([^']*)'|"([^"]*)"|(True|False))`)

// buildFacts reads a framework's CUDA build from its files.
func (p *prober) buildFacts(env *gpu.PythonEnv, pk *gpu.Package) {
	switch pk.Name {
	case "torch", "torchvision":
		tag := gpu.LocalTag(pk.Version)
		src, err := p.readFile(p.sys.join(pk.Location, pk.Name, "version.py"), capSource)
		if err == nil && pyAssigned(string(src), "cuda") {
			s := string(src)
			pk.CUDA = pyAssign(s, "cuda")
			pk.ROCm = pyAssign(s, "hip")
			if v := pyAssign(s, "__version__"); v != "" {
				pk.Version = v
			}
			pk.CPUOnly = pk.CUDA == "" && pk.ROCm == ""
			pk.BuildNote = pk.Name + "/version.py"
		} else {
			switch {
			case tag == "cpu":
				pk.CPUOnly, pk.BuildNote = true, "version tag +cpu"
			case gpu.VariantCUDA(tag) != "":
				pk.CUDA, pk.BuildNote = gpu.VariantCUDA(tag), "version tag +"+tag
			}
		}
		if pk.Name == "torch" && !pk.CPUOnly {
			pk.CuDNN = p.torchCudnn(env, pk)
		}
	case "tensorflow", "tensorflow-gpu", "tf-nightly", "tensorflow-intel":
		src, err := p.readFile(p.sys.join(pk.Location, "tensorflow", "python", "platform", "build_info.py"), capSource)
		if err != nil {
			return
		}
		info := map[string]string{}
		for _, m := range buildInfoRE.FindAllStringSubmatch(string(src), -1) {
			info[m[1]] = m[2] + m[3] + m[4]
		}
		pk.BuildNote = "tensorflow/python/platform/build_info.py"
		// Windows builds name them as their DLLs do: "64_112" is CUDA 11.2.
		pk.CUDA, pk.CuDNN = gpu.DLLNumberVersion(info["cuda_version"]), gpu.DLLNumberVersion(info["cudnn_version"])
		pk.CPUOnly = info["is_cuda_build"] == "False" || (info["is_cuda_build"] == "" && pk.CUDA == "")
	case "tensorflow-cpu":
		pk.CPUOnly, pk.BuildNote = true, "tensorflow-cpu package"
	case "jaxlib":
		tag := gpu.LocalTag(pk.Version)
		if strings.HasPrefix(tag, "cuda") {
			pk.CUDA = strings.TrimPrefix(strings.SplitN(tag, ".", 2)[0], "cuda")
			pk.BuildNote = "version tag +" + tag
		}
		// Newer JAX puts CUDA in a plugin wheel: jax-cuda12-plugin, jax-cuda13-plugin.
		for _, o := range env.Packages {
			if strings.HasPrefix(o.Name, "jax-cuda") && strings.HasSuffix(o.Name, "-plugin") && !o.Shadowed {
				pk.CUDA = strings.TrimSuffix(strings.TrimPrefix(o.Name, "jax-cuda"), "-plugin")
				pk.BuildNote = o.Name + " " + o.Version
			}
		}
		if pk.CUDA == "" {
			pk.CPUOnly, pk.BuildNote = true, "no jax CUDA plugin wheel and no +cuda tag"
		}
	}
}

// torchCudnn says which cuDNN a CUDA torch will load: the nvidia-cudnn
// wheel in the same environment, or the copy bundled in torch/lib.
func (p *prober) torchCudnn(env *gpu.PythonEnv, pk *gpu.Package) string {
	for _, o := range env.Packages {
		if strings.HasPrefix(o.Name, "nvidia-cudnn-cu") && !o.Shadowed {
			return o.Version
		}
	}
	return p.sys.torchCuDNN(p, p.sys.join(pk.Location, "torch", "lib"))
}
