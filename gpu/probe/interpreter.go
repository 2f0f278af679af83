package probe

import (
	"gpuwizard/gpu"

	"gpuwizard/gpu/nvml"
)

// Interpreter describes the Python at path (a path on the probed machine)
// the way Probe describes the interpreters it finds: prefix, kind, version,
// site-packages in import order, and the frameworks with their builds, all
// read statically (no Python is started). opts.Root, Home and Environ
// (PYTHONPATH, PYTHONNOUSERSITE) are those of the program that runs it: a
// running process's own environment gives its own sys.path. ok is false
// when path is not a file.
func Interpreter(opts Options, path string) (env gpu.PythonEnv, ok bool) {
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
