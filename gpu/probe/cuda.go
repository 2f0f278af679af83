package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"gpuwizard/gpu"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// probeToolkits finds CUDA toolkits: the nvcc on PATH and the usual folders.
func (p *prober) probeToolkits(ctx context.Context) (func(*gpu.Facts), error) {
	var dirs []string
	for _, pat := range []string{"/usr/local/cuda", "/usr/local/cuda-*", "/opt/cuda", "/usr/lib/cuda"} {
		dirs = append(dirs, p.glob(pat)...)
	}
	for _, n := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if v := p.o.Environ[n]; v != "" && p.sys.isAbs(v) {
			dirs = append(dirs, v)
		}
	}
	return p.toolkits(ctx, "nvcc", p.realPath, dirs)
}

// toolkits lists the CUDA toolkits: the one whose nvcc is on PATH, then
// each of dirs that holds bin/nvcc (named nvcc on the probed system),
// version.json or version.txt. key names a folder once (its resolved
// path; on Windows, its case-folded form), so a toolkit found twice is one.
func (p *prober) toolkits(ctx context.Context, nvcc string, key func(string) string, dirs []string) (func(*gpu.Facts), error) {
	var kits []gpu.Toolkit
	seen := map[string]int{} // key of the folder → index in kits
	add := func(dir string, onPath bool) *gpu.Toolkit {
		k := key(dir)
		if i, ok := seen[k]; ok {
			kits[i].OnPath = kits[i].OnPath || onPath
			return nil
		}
		seen[k] = len(kits)
		kits = append(kits, gpu.Toolkit{Path: dir, OnPath: onPath})
		return &kits[len(kits)-1]
	}
	var errs []string
	if exe := p.lookPath("nvcc"); exe != "" {
		dir := p.sys.dir(p.sys.dir(exe))
		if t := add(dir, true); t != nil {
			t.Version = p.toolkitFileVersion(dir)
			if t.Version == "" {
				out, err := p.o.Runner.Run(ctx, exe, "--version")
				if err != nil {
					t.Error = err.Error()
					errs = append(errs, err.Error())
				}
				t.Version = gpu.ParseNvccVersion(string(out))
			}
		}
	}
	for _, d := range dirs {
		if !p.exists(p.sys.join(d, "bin", nvcc)) && !p.exists(p.sys.join(d, "version.json")) && !p.exists(p.sys.join(d, "version.txt")) {
			continue
		}
		if t := add(d, false); t != nil {
			t.Version = p.toolkitFileVersion(d)
		}
	}
	apply := func(f *gpu.Facts) { f.CUDA.Toolkits = kits }
	if len(errs) > 0 {
		return apply, fmt.Errorf("cuda toolkits: %s", strings.Join(errs, "; "))
	}
	return apply, nil
}

// toolkitFileVersion reads version.json (CUDA 11.1+) or version.txt.
func (p *prober) toolkitFileVersion(dir string) string {
	if b, err := p.readFile(p.sys.join(dir, "version.json"), capSmall); err == nil {
		var v struct {
			CUDA struct {
				Version string `json:"version"`
			} `json:"cuda"`
		}
		if json.Unmarshal(b, &v) == nil && v.CUDA.Version != "" {
			if _, ok := gpu.ParseVersion(v.CUDA.Version); ok {
				return v.CUDA.Version
			}
		}
	}
	if b, err := p.readFile(p.sys.join(dir, "version.txt"), capSmall); err == nil {
		s := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(b)), "CUDA Version"))
		if v, ok := gpu.ParseVersion(s); ok {
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

// probeLibraries lists CUDA libraries the loader can see: the ldconfig
// cache, LD_LIBRARY_PATH, the toolkits' lib64, and WSL's driver folder.
func (p *prober) probeLibraries(ctx context.Context) (func(*gpu.Facts), error) {
	var libs []gpu.Library
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
		libs = append(libs, gpu.ParseLdconfig(string(out))...)
	} else {
		errs = append(errs, "ldconfig not found")
	}
	scan := func(dir, origin string) {
		ents, err := os.ReadDir(p.file(dir))
		if err != nil {
			return
		}
		for _, e := range ents {
			if n := gpu.LibName(e.Name()); n != "" {
				libs = append(libs, gpu.Library{Name: n, Soname: e.Name(), Path: p.sys.join(dir, e.Name()), Version: gpu.SoVersion(e.Name()), Origin: origin})
			}
		}
	}
	for _, d := range p.sys.splitList(p.o.Environ["LD_LIBRARY_PATH"]) {
		if p.sys.isAbs(d) {
			scan(d, "LD_LIBRARY_PATH")
		}
	}
	scan("/usr/lib/wsl/lib", "wsl")
	// Resolve each soname link to the real file: its name carries the full
	// version (libcudnn.so.8 → libcudnn.so.8.9.7).
	for i := range libs {
		real := p.realPath(libs[i].Path)
		if v := gpu.SoVersion(p.sys.base(real)); len(v) > len(libs[i].Version) {
			libs[i].Version = v
		}
	}
	// cuDNN headers say the exact version even when the file names do not.
	var headers []string
	for _, g := range []string{"/usr/include/cudnn_version*.h", "/usr/include/*/cudnn_version*.h", "/usr/local/cuda*/include/cudnn_version.h"} {
		headers = append(headers, p.glob(g)...)
	}
	libs = append(libs, p.cudnnHeaders(headers)...)
	sort.SliceStable(libs, func(i, j int) bool { return libs[i].Name < libs[j].Name })
	apply := func(f *gpu.Facts) { f.CUDA.Libraries = libs }
	if len(errs) > 0 {
		return apply, fmt.Errorf("cuda libraries: %s", strings.Join(errs, "; "))
	}
	return apply, nil
}

// cudnnHeaders reads the cuDNN version of each cudnn_version.h.
func (p *prober) cudnnHeaders(headers []string) []gpu.Library {
	var libs []gpu.Library
	for _, h := range headers {
		b, err := p.readFile(h, capSource)
		if err != nil {
			continue
		}
		if v := gpu.ParseCudnnHeader(string(b)); v != "" {
			libs = append(libs, gpu.Library{Name: "libcudnn", Soname: "cudnn_version.h", Path: h, Version: v, Origin: "header"})
		}
	}
	return libs
}
