// Package fixtest builds what the fix tests need without the internet: a
// folder of tiny fake wheels (torch, torchvision, torchaudio with +cpu and
// +cuXXX local versions whose version.py states the CUDA they were "built"
// with), pip reads it with --no-index --find-links, and throwaway virtual
// environments made by the system's python3 -m venv.
package fixtest

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"gpuwizard/gpu"
)

// Python is the interpreter the test environments are made with.
const Python = "/usr/bin/python3"

// Wheel is one fake wheel: a package whose <module>/version.py says its
// version and CUDA ("" for a CPU-only build).
type Wheel struct {
	Name, Version, CUDA string
	// Module is the folder it installs; "": Name. Two wheels with one
	// Module share files, as onnxruntime and onnxruntime-gpu do.
	Module string
	// Files are more files (path in the wheel → content).
	Files map[string]string
	// Extras are the optional requirements ("and-cuda" → "pkg==1.0").
	Extras map[string][]string
}

// Build writes the wheels into dir.
func Build(dir string, wheels ...Wheel) error {
	for _, w := range wheels {
		if err := write(dir, w); err != nil {
			return fmt.Errorf("fake wheel %s %s: %w", w.Name, w.Version, err)
		}
	}
	return nil
}

func write(dir string, w Wheel) error {
	cuda := "None"
	if w.CUDA != "" {
		cuda = "'" + w.CUDA + "'"
	}
	mod := w.Module
	if mod == "" {
		mod = w.Name
	}
	// A wheel's file name and dist-info spell a name with underscores.
	under := strings.ReplaceAll(w.Name, "-", "_")
	dist := under + "-" + w.Version + ".dist-info"
	files := [][2]string{
		{mod + "/__init__.py", "from .version import __version__\n"},
		{mod + "/version.py", fmt.Sprintf("__version__ = '%s'\ncuda = %s\ngit_version = 'fake'\nbuilt_by = '%s'\n", w.Version, cuda, w.Name)},
		{dist + "/METADATA", metadata(w)},
		{dist + "/WHEEL", "Wheel-Version: 1.0\nGenerator: gpuwizard-fixtest\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	for _, path := range sortedKeys(w.Files) {
		files = append(files, [2]string{path, w.Files[path]})
	}
	var rec strings.Builder
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	add := func(name, body string) error {
		f, err := z.Create(name)
		if err != nil {
			return err
		}
		_, err = f.Write([]byte(body))
		return err
	}
	for _, f := range files {
		sum := sha256.Sum256([]byte(f[1]))
		fmt.Fprintf(&rec, "%s,sha256=%s,%d\n", f[0], base64.RawURLEncoding.EncodeToString(sum[:]), len(f[1]))
		if err := add(f[0], f[1]); err != nil {
			return err
		}
	}
	rec.WriteString(dist + "/RECORD,,\n")
	if err := add(dist+"/RECORD", rec.String()); err != nil {
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, under+"-"+w.Version+"-py3-none-any.whl"), buf.Bytes(), 0o644)
}

// metadata is the wheel's METADATA, with its extras.
func metadata(w Wheel) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: a fake wheel of gpuwizard's tests\n", w.Name, w.Version)
	extras := make([]string, 0, len(w.Extras))
	for e := range w.Extras {
		extras = append(extras, e)
	}
	sort.Strings(extras)
	for _, e := range extras {
		fmt.Fprintf(&b, "Provides-Extra: %s\n", e)
		for _, req := range w.Extras[e] {
			fmt.Fprintf(&b, "Requires-Dist: %s ; extra == \"%s\"\n", req, e)
		}
	}
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Venv makes a virtual environment at dir with the system's python3 and
// installs the named requirements from the wheel folder index; it returns
// the environment's python.
func Venv(ctx context.Context, dir, index string, reqs ...string) (string, error) {
	if out, err := exec.CommandContext(ctx, Python, "-m", "venv", dir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s -m venv %s: %w: %s (Debian: apt-get install python3-venv)", Python, dir, err, out)
	}
	py := filepath.Join(dir, "bin", "python")
	if len(reqs) == 0 {
		return py, nil
	}
	args := append([]string{"-m", "pip", "install", "--no-index", "--find-links", index}, reqs...)
	cmd := exec.CommandContext(ctx, py, args...)
	cmd.Env = append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("installing %v: %w: %s", reqs, err, out)
	}
	return py, nil
}

// Freeze is py's pip freeze --all.
func Freeze(ctx context.Context, py string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, py, "-m", "pip", "freeze", "--all")
	cmd.Env = append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1")
	return cmd.Output()
}

// Machine is the facts of a machine with one RTX 3090 (compute capability
// 8.6) on driver 560.35.03 (CUDA 12.6); the Pythons are added by the
// caller.
func Machine() *gpu.Facts {
	return &gpu.Facts{Schema: gpu.FactsSchema, Origin: "live",
		Host: gpu.HostFacts{OS: "linux", Arch: "amd64"},
		NVML: gpu.NVMLFacts{Status: gpu.NVMLOK, DriverVersion: "560.35.03", CUDADriverVersion: "12.6",
			GPUs: []gpu.GPU{{Index: 0, Name: "NVIDIA GeForce RTX 3090", CC: "8.6", MemoryTotalMiB: 24576}}}}
}
