package probe

import (
	"context"
	"fmt"
	"gpuwizard/gpu"
	"os"
	"sort"
	"strings"
)

// cudaToolkitsDir is where NVIDIA's installer puts every toolkit
// (v11.8, v12.4...), under Program Files.
func (p *prober) cudaToolkitsDir() string {
	return p.sys.join(p.programFiles(), "NVIDIA GPU Computing Toolkit", "CUDA")
}

// probeWinToolkits finds CUDA toolkits: the nvcc.exe on PATH, the
// folders CUDA_PATH and CUDA_PATH_V* name, and those under Program Files.
func (p *prober) probeWinToolkits(ctx context.Context) (func(*gpu.Facts), error) {
	var dirs []string
	for _, n := range append([]string{"CUDA_PATH"}, p.sys.envNames(p.o.Environ)...) {
		if v := p.o.Environ[n]; strings.HasPrefix(n, "CUDA_PATH") && p.sys.isAbs(v) {
			dirs = append(dirs, p.sys.join(v))
		}
	}
	dirs = append(dirs, p.glob(p.sys.join(p.cudaToolkitsDir(), "v*"))...)
	return p.toolkits(ctx, "nvcc.exe", p.sys.key, dirs)
}

// probeWinLibraries lists the CUDA-family DLLs and where they lie: the
// folders of PATH (which LoadLibrary searches, as TensorFlow, ONNX
// Runtime and cuDNN load them), System32 (the driver's nvcuda.dll and
// nvml.dll), and, marked as not on PATH, the toolkits' bin folders and
// the cuDNN installer's folders: cuDNN 9 puts its DLLs in bin\<cuda>
// subfolders (bin\12.6\cudnn64_9.dll) that the PATH entry it adds, bin,
// does not reach. cudnn_version.h gives cuDNN's full version.
func (p *prober) probeWinLibraries(ctx context.Context) (func(*gpu.Facts), error) {
	var libs []gpu.Library
	seen := map[string]bool{}
	scan := func(dir, origin string) {
		if seen[p.sys.key(dir)] {
			return
		}
		seen[p.sys.key(dir)] = true
		ents, err := os.ReadDir(p.file(dir))
		if err != nil {
			return
		}
		for _, e := range ents {
			if name, v := gpu.DLLLibrary(e.Name()); name != "" && !e.IsDir() {
				libs = append(libs, gpu.Library{Name: name, Soname: e.Name(), Path: p.sys.join(dir, e.Name()), Version: v, Origin: origin})
			}
		}
	}
	for _, d := range p.pathDirs() {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("cuda libraries: %w", ErrTimeout)
		}
		scan(d, gpu.OriginPATH)
	}
	scan(p.system32(), gpu.OriginSystem32)
	for _, d := range p.glob(p.sys.join(p.cudaToolkitsDir(), "v*", "bin")) {
		scan(d, gpu.OriginToolkitOff)
	}
	cudnnRoot := p.sys.join(p.programFiles(), "NVIDIA", "CUDNN")
	for _, d := range append(p.glob(p.sys.join(cudnnRoot, "v*", "bin")), p.glob(p.sys.join(cudnnRoot, "v*", "bin", "*"))...) {
		scan(d, gpu.OriginCuDNNOff)
	}
	var headers []string
	for _, g := range []string{p.sys.join(p.cudaToolkitsDir(), "v*", "include", "cudnn_version.h"),
		p.sys.join(cudnnRoot, "v*", "include", "cudnn_version.h"), p.sys.join(cudnnRoot, "v*", "include", "*", "cudnn_version.h")} {
		headers = append(headers, p.glob(g)...)
	}
	libs = append(libs, p.cudnnHeaders(headers)...)
	sort.SliceStable(libs, func(i, j int) bool { return libs[i].Name < libs[j].Name })
	return func(f *gpu.Facts) { f.CUDA.Libraries = libs }, nil
}

// probeVCRuntime finds the Visual C++ runtime DLLs in System32 and, for
// every Python with torch, in the folders Windows searches for the
// imports of torch's DLLs: torch\lib, the interpreter's folder and, for
// a venv, its base Python's (pyvenv.cfg's home). A torch that misses one
// everywhere is a gap.
func (p *prober) probeVCRuntime(envs []gpu.PythonEnv) ([]gpu.RuntimeDLL, []gpu.RuntimeGap) {
	has := func(dir, name string) bool {
		st, err := os.Stat(p.file(p.sys.join(dir, name)))
		return err == nil && st.Mode().IsRegular()
	}
	all := []string{p.system32()}
	var gaps []gpu.RuntimeGap
	for _, e := range envs {
		pk, ok := e.Package("torch")
		if !ok {
			continue
		}
		dirs := p.existingDirs(append([]string{p.system32(), p.sys.join(pk.Location, "torch", "lib"), p.sys.dir(e.Interpreter)}, p.venvHome(e)...))
		all = append(all, dirs...)
		gap := gpu.RuntimeGap{Interpreter: e.Interpreter, Searched: dirs}
		for _, name := range gpu.VCRuntimeDLLs {
			found := false
			for _, d := range dirs {
				found = found || has(d, name)
			}
			if !found {
				gap.Missing = append(gap.Missing, name)
			}
		}
		if len(gap.Missing) > 0 {
			gaps = append(gaps, gap)
		}
	}
	all = p.existingDirs(all)
	dlls := make([]gpu.RuntimeDLL, 0, len(gpu.VCRuntimeDLLs))
	for _, name := range gpu.VCRuntimeDLLs {
		r := gpu.RuntimeDLL{Name: name}
		for _, d := range all {
			if has(d, name) {
				r.Found = append(r.Found, d)
			}
		}
		dlls = append(dlls, r)
	}
	return dlls, gaps
}

// venvHome is the folder of a venv's base Python (pyvenv.cfg's home):
// a venv's python.exe is a launcher, the DLLs lie with that Python.
func (p *prober) venvHome(e gpu.PythonEnv) []string {
	if e.Kind != "venv" {
		return nil
	}
	cfg, err := p.readFile(p.sys.join(e.Prefix, "pyvenv.cfg"), capSmall)
	if home := parseVenvCfg(cfg, err)["home"]; p.sys.isAbs(home) {
		return []string{home}
	}
	return nil
}

// condaLibraries lists the CUDA DLLs conda environments hold in their
// Library\bin (cudatoolkit, cudnn), which PATH reaches only while the
// environment is activated.
func (p *prober) condaLibraries(envs []gpu.PythonEnv) []gpu.Library {
	var libs []gpu.Library
	for _, e := range envs {
		if e.Kind != "conda" {
			continue
		}
		dir := p.sys.join(e.Prefix, "Library", "bin")
		ents, err := os.ReadDir(p.file(dir))
		if err != nil {
			continue
		}
		for _, ent := range ents {
			if name, v := gpu.DLLLibrary(ent.Name()); name != "" && !ent.IsDir() {
				libs = append(libs, gpu.Library{Name: name, Soname: ent.Name(), Path: p.sys.join(dir, ent.Name()), Version: v, Origin: gpu.OriginCondaEnv})
			}
		}
	}
	return libs
}
