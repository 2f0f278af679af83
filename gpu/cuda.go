package gpu

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

var nvccReleaseRE = regexp.MustCompile(`release ([0-9]+\.[0-9]+)(?:, V([0-9][0-9.]*))?`)

// ParseNvccVersion reads the version from `nvcc --version` output
// ("Cuda compilation tools, release 12.4, V12.4.131" → "12.4.131").
func ParseNvccVersion(out string) string {
	m := nvccReleaseRE.FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	if m[2] != "" {
		return strings.TrimRight(m[2], ".")
	}
	return m[1]
}

// probeToolkits finds CUDA toolkits: the nvcc on PATH and the usual folders.
func (p *prober) probeToolkits(ctx context.Context) (func(*Facts), error) {
	var kits []Toolkit
	seen := map[string]int{} // resolved folder → index in kits
	add := func(dir string, onPath bool) *Toolkit {
		real := p.realPath(dir)
		if i, ok := seen[real]; ok {
			kits[i].OnPath = kits[i].OnPath || onPath
			return nil
		}
		seen[real] = len(kits)
		kits = append(kits, Toolkit{Path: dir, OnPath: onPath})
		return &kits[len(kits)-1]
	}
	var errs []string
	if nvcc := p.lookPath("nvcc"); nvcc != "" {
		dir := filepath.Dir(filepath.Dir(nvcc))
		if t := add(dir, true); t != nil {
			t.Version = p.toolkitFileVersion(dir)
			if t.Version == "" {
				out, err := p.o.Runner.Run(ctx, nvcc, "--version")
				if err != nil {
					t.Error = err.Error()
					errs = append(errs, err.Error())
				}
				t.Version = ParseNvccVersion(string(out))
			}
		}
	}
	var dirs []string
	for _, pat := range []string{"/usr/local/cuda", "/usr/local/cuda-*", "/opt/cuda", "/usr/lib/cuda"} {
		m, _ := filepath.Glob(p.file(pat))
		for _, d := range m {
			dirs = append(dirs, p.unroot(d))
		}
	}
	for _, n := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if v := p.o.Environ[n]; v != "" && filepath.IsAbs(v) {
			dirs = append(dirs, v)
		}
	}
	for _, d := range dirs {
		if !p.exists(d+"/bin/nvcc") && !p.exists(d+"/version.json") && !p.exists(d+"/version.txt") {
			continue
		}
		if t := add(d, false); t != nil {
			t.Version = p.toolkitFileVersion(d)
		}
	}
	apply := func(f *Facts) { f.CUDA.Toolkits = kits }
	if len(errs) > 0 {
		return apply, fmt.Errorf("cuda toolkits: %s", strings.Join(errs, "; "))
	}
	return apply, nil
}

// toolkitFileVersion reads version.json (CUDA 11.1+) or version.txt.
func (p *prober) toolkitFileVersion(dir string) string {
	if b, err := p.readFile(dir + "/version.json"); err == nil {
		var v struct {
			CUDA struct {
				Version string `json:"version"`
			} `json:"cuda"`
		}
		if json.Unmarshal(b, &v) == nil && v.CUDA.Version != "" {
			if _, ok := ParseVersion(v.CUDA.Version); ok {
				return v.CUDA.Version
			}
		}
	}
	if b, err := p.readFile(dir + "/version.txt"); err == nil {
		s := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(b)), "CUDA Version"))
		if v, ok := ParseVersion(s); ok {
			return v.String()
		}
	}
	return ""
}

// realPath resolves links on the probed machine; it returns path unchanged
// when it cannot.
func (p *prober) realPath(path string) string {
	r, err := filepath.EvalSymlinks(p.file(path))
	if err != nil {
		return path
	}
	return p.unroot(r)
}

func (p *prober) unroot(path string) string {
	if p.o.Root == "/" {
		return path
	}
	rel, err := filepath.Rel(p.o.Root, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return path
	}
	return "/" + rel
}

// cudaLibNames are the libraries the doctor tracks, by file-name prefix.
var cudaLibNames = []string{"libcuda", "libcudart", "libcublas", "libcudnn", "libnvidia-ml", "libnvrtc"}

// libName returns the tracked library a file name belongs to ("libcudnn.so.9"
// → "libcudnn"; "libcudnn_ops.so.9" → "" as only the main one is tracked).
func libName(file string) string {
	base, _, ok := strings.Cut(file, ".so")
	if !ok {
		return ""
	}
	for _, n := range cudaLibNames {
		if base == n {
			return n
		}
	}
	return ""
}

// soVersion reads the version after ".so." in a file name.
func soVersion(file string) string {
	_, after, ok := strings.Cut(file, ".so.")
	if !ok {
		return ""
	}
	if _, ok := ParseVersion(after); !ok {
		return ""
	}
	return after
}

var ldconfigLineRE = regexp.MustCompile(`^\s*(\S+) \(([^)]*)\) => (\S+)`)

// ParseLdconfig reads `ldconfig -p` output into the tracked libraries.
func ParseLdconfig(out string) []Library {
	var libs []Library
	for _, line := range strings.Split(out, "\n") {
		m := ldconfigLineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := libName(m[1])
		if name == "" || (m[2] != "" && !strings.Contains(m[2], "64")) {
			continue // not tracked, or a 32-bit library
		}
		libs = append(libs, Library{Name: name, Soname: m[1], Path: m[3], Version: soVersion(m[1]), Origin: "ldconfig"})
	}
	return libs
}

// probeLibraries lists CUDA libraries the loader can see: the ldconfig
// cache, LD_LIBRARY_PATH, the toolkits' lib64, and WSL's driver folder.
func (p *prober) probeLibraries(ctx context.Context) (func(*Facts), error) {
	var libs []Library
	var errs []string
	ldconfig := p.lookPath("ldconfig")
	for _, c := range []string{"/sbin/ldconfig", "/usr/sbin/ldconfig"} {
		if ldconfig == "" && p.exists(c) {
			ldconfig = c
		}
	}
	if ldconfig != "" {
		out, err := p.o.Runner.Run(ctx, ldconfig, "-p")
		if err != nil {
			errs = append(errs, err.Error())
		}
		libs = append(libs, ParseLdconfig(string(out))...)
	} else {
		errs = append(errs, "ldconfig not found")
	}
	scan := func(dir, origin string) {
		ents, err := os.ReadDir(p.file(dir))
		if err != nil {
			return
		}
		for _, e := range ents {
			if n := libName(e.Name()); n != "" {
				libs = append(libs, Library{Name: n, Soname: e.Name(), Path: filepath.Join(dir, e.Name()), Version: soVersion(e.Name()), Origin: origin})
			}
		}
	}
	for _, d := range filepath.SplitList(p.o.Environ["LD_LIBRARY_PATH"]) {
		if filepath.IsAbs(d) {
			scan(d, "LD_LIBRARY_PATH")
		}
	}
	scan("/usr/lib/wsl/lib", "wsl")
	// Resolve each soname link to the real file: its name carries the full
	// version (libcudnn.so.8 → libcudnn.so.8.9.7).
	for i := range libs {
		real := p.realPath(libs[i].Path)
		if v := soVersion(filepath.Base(real)); len(v) > len(libs[i].Version) {
			libs[i].Version = v
		}
	}
	// cuDNN headers say the exact version even when the file names do not.
	headers, _ := filepath.Glob(p.file("/usr/include/cudnn_version*.h"))
	more, _ := filepath.Glob(p.file("/usr/include/*/cudnn_version*.h"))
	more2, _ := filepath.Glob(p.file("/usr/local/cuda*/include/cudnn_version.h"))
	headers = append(append(headers, more...), more2...)
	for _, h := range headers {
		b, err := os.ReadFile(h)
		if err != nil {
			continue
		}
		if v := ParseCudnnHeader(string(b)); v != "" {
			libs = append(libs, Library{Name: "libcudnn", Soname: "cudnn_version.h", Path: p.unroot(h), Version: v, Origin: "header"})
		}
	}
	sort.SliceStable(libs, func(i, j int) bool { return libs[i].Name < libs[j].Name })
	apply := func(f *Facts) { f.CUDA.Libraries = libs }
	if len(errs) > 0 {
		return apply, fmt.Errorf("cuda libraries: %s", strings.Join(errs, "; "))
	}
	return apply, nil
}

var cudnnDefineRE = regexp.MustCompile(`(?m)^\s*#\s*define\s+CUDNN_(MAJOR|MINOR|PATCHLEVEL)\s+([0-9]+)`)

// ParseCudnnHeader reads CUDNN_MAJOR/MINOR/PATCHLEVEL from cudnn_version.h.
func ParseCudnnHeader(src string) string {
	parts := map[string]string{}
	for _, m := range cudnnDefineRE.FindAllStringSubmatch(src, -1) {
		if _, dup := parts[m[1]]; !dup {
			parts[m[1]] = m[2]
		}
	}
	if parts["MAJOR"] == "" {
		return ""
	}
	v := parts["MAJOR"] + "." + orZero(parts["MINOR"]) + "." + orZero(parts["PATCHLEVEL"])
	return v
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}
