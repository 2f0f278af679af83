package probe

import (
	"gpuwizard/gpu"
	"strings"

	"gpuwizard/gpu/nvml"
)

// Interpreter describes the Python at path (a path on the probed machine)
// the way Probe describes the interpreters it finds: prefix, kind, version,
// site-packages in import order, and the frameworks with their builds, all
// read statically (no Python is started). opts.Root, Home and Environ
// (PYTHONPATH, PYTHONNOUSERSITE) are those of the program that runs it: a
// running process's own environment gives its own sys.path. ok is false
// when path is not a file. With opts.GOOS empty, the path's form names the
// system (a drive letter or a UNC share: Windows; a leading slash: a Unix),
// else this program's: a Linux fake root read on Windows keeps Linux's
// rules.
func Interpreter(opts Options, path string) (env gpu.PythonEnv, ok bool) {
	if opts.GOOS == "" {
		opts.GOOS = systemOfPath(path)
	}
	opts.fill()
	p := newProber(opts)
	env, ok = p.sys.describePython(p, path)
	if !ok {
		return gpu.PythonEnv{}, false
	}
	env.FoundVia = []string{"running process"}
	p.readPackages(&env)
	return env, true
}

// NVMLStatus names an NVML return code the way Facts records it
// (gpu.NVMLOK, gpu.NVMLLibraryNotFound, ...).
func NVMLStatus(r nvml.Return) string { return nvmlStatus(r) }

// NVMLText is a readable form of an NVML return code; it never panics.
func NVMLText(r nvml.Return) string { return nvmlText(r) }

// systemOfPath is the system an absolute path's form belongs to ("" when
// it names none: a relative path).
func systemOfPath(path string) string {
	switch {
	case gpu.IsWindowsPath(path):
		return "windows"
	case strings.HasPrefix(path, "/"):
		return "linux"
	}
	return ""
}
