package compat

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"gpuwizard/assets"
	"gpuwizard/gpu"
)

// ErrMatrix is returned (wrapped) when the compatibility matrix is invalid.
var ErrMatrix = errors.New("gpu: compatibility matrix")

// Matrix is the compatibility matrix embedded from assets/compat.yaml.
type Matrix struct {
	Schema         int               `yaml:"schema"`
	Sources        map[string]string `yaml:"sources"`
	CUDAFamilies   []CUDAFamily      `yaml:"cuda_families"`
	ToolkitDrivers []ToolkitDriver   `yaml:"toolkit_drivers"`
	Architectures  []Architecture    `yaml:"architectures"`
	GPUs           []GPUName         `yaml:"gpus"`
	ToolkitArchs   []ToolkitArchs    `yaml:"toolkit_archs"`
	FrameworkMin   []FrameworkMinCC  `yaml:"framework_min_cc"`
	Torch          []TorchRelease    `yaml:"torch"`
	TensorFlow     []TFRelease       `yaml:"tensorflow"`
}

// ToolkitArchs is the range of compute capabilities a CUDA release (and
// those after it, up to the next row) can build kernels for.
type ToolkitArchs struct {
	CUDA   string `yaml:"cuda"`
	MinCC  string `yaml:"min_cc"`
	MaxCC  string `yaml:"max_cc"`
	Source string `yaml:"source"`
}

// FrameworkMinCC is the oldest GPU a framework's official binaries support.
type FrameworkMinCC struct {
	Framework string `yaml:"framework"`
	CC        string `yaml:"cc"`
	Source    string `yaml:"source"`
}

// CUDAFamily is the driver floor of one CUDA major version.
type CUDAFamily struct {
	Major         string `yaml:"major"`
	DriverLinux   string `yaml:"driver_linux"`
	DriverWindows string `yaml:"driver_windows"`
	Source        string `yaml:"source"`
}

// ToolkitDriver is the driver a full toolkit release wants.
type ToolkitDriver struct {
	CUDA          string `yaml:"cuda"`
	DriverLinux   string `yaml:"driver_linux"`
	DriverWindows string `yaml:"driver_windows"`
	Source        string `yaml:"source"`
}

// Architecture is a GPU generation and its end of support.
type Architecture struct {
	Name             string   `yaml:"name"`
	CC               []string `yaml:"cc"`
	LastDriverBranch string   `yaml:"last_driver_branch"`
	LastDriverCUDA   string   `yaml:"last_driver_cuda"`
	LastTorch        string   `yaml:"last_torch"`
	LastTorchVariant string   `yaml:"last_torch_variant"`
	MinDriverLinux   string   `yaml:"min_driver_linux"` // the first driver branch that knows these GPUs`
	Source           string   `yaml:"source"`
}

// GPUName maps a GPU name pattern to its compute capability.
type GPUName struct {
	Pattern string `yaml:"pattern"`
	CC      string `yaml:"cc"`
	Source  string `yaml:"source"`
	re      *regexp.Regexp
}

// TorchRelease is one PyTorch release and its official CUDA wheels.
type TorchRelease struct {
	Version     string         `yaml:"version"`
	TorchVision string         `yaml:"torchvision"`
	Python      string         `yaml:"python"`
	PyPILinux   string         `yaml:"pypi_linux"`
	Source      string         `yaml:"source"`
	Variants    []TorchVariant `yaml:"variants"`
}

// TorchVariant is one CUDA wheel index of a release.
type TorchVariant struct {
	Name   string `yaml:"name"` // "cu126"
	CUDA   string `yaml:"cuda"`
	Archs  string `yaml:"archs"` // "5.0;6.0;..."
	PTX    string `yaml:"ptx"`   // archs that also ship PTX
	Source string `yaml:"source"`
}

// TFRelease is one TensorFlow release's tested GPU build.
type TFRelease struct {
	Version string `yaml:"version"`
	CUDA    string `yaml:"cuda"`
	CuDNN   string `yaml:"cudnn"`
	Source  string `yaml:"source"`
}

// LoadMatrix parses and checks the embedded matrix.
func LoadMatrix() (*Matrix, error) {
	return ParseMatrix(assets.CompatYAML)
}

// ParseMatrix parses a matrix and checks that every row names a known
// source and every version parses.
func ParseMatrix(data []byte) (*Matrix, error) {
	var m Matrix
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMatrix, err)
	}
	var problems []string
	src := func(where, s string) {
		if _, ok := m.Sources[s]; !ok {
			problems = append(problems, fmt.Sprintf("%s: source %q is not in sources", where, s))
		}
	}
	ver := func(where, s string) {
		if _, ok := gpu.ParseVersion(s); !ok {
			problems = append(problems, fmt.Sprintf("%s: %q is not a version", where, s))
		}
	}
	for _, f := range m.CUDAFamilies {
		src("cuda_families "+f.Major, f.Source)
		ver("cuda_families "+f.Major, f.DriverLinux)
	}
	for _, t := range m.ToolkitDrivers {
		src("toolkit_drivers "+t.CUDA, t.Source)
		ver("toolkit_drivers "+t.CUDA, t.DriverLinux)
	}
	for _, a := range m.Architectures {
		src("architectures "+a.Name, a.Source)
		for _, cc := range a.CC {
			ver("architectures "+a.Name, cc)
		}
	}
	for i := range m.GPUs {
		g := &m.GPUs[i]
		src("gpus "+g.Pattern, g.Source)
		re, err := regexp.Compile("(?i)" + g.Pattern)
		if err != nil {
			problems = append(problems, fmt.Sprintf("gpus %q: %v", g.Pattern, err))
			continue
		}
		g.re = re
	}
	for _, t := range m.ToolkitArchs {
		src("toolkit_archs "+t.CUDA, t.Source)
		ver("toolkit_archs "+t.CUDA, t.CUDA)
		ver("toolkit_archs "+t.CUDA, t.MinCC)
		ver("toolkit_archs "+t.CUDA, t.MaxCC)
	}
	for _, f := range m.FrameworkMin {
		src("framework_min_cc "+f.Framework, f.Source)
		ver("framework_min_cc "+f.Framework, f.CC)
	}
	for _, r := range m.Torch {
		src("torch "+r.Version, r.Source)
		ver("torch "+r.Version, r.Version)
		for _, v := range r.Variants {
			where := "torch " + r.Version + " " + v.Name
			src(where, v.Source)
			if gpu.VariantCUDA(v.Name) != gpu.MajorMinor(v.CUDA) {
				problems = append(problems, fmt.Sprintf("%s: cuda %q does not match the name", where, v.CUDA))
			}
			for _, a := range SplitArchs(v.Archs + ";" + v.PTX) {
				ver(where, a)
			}
		}
	}
	for _, t := range m.TensorFlow {
		src("tensorflow "+t.Version, t.Source)
		ver("tensorflow "+t.Version, t.CUDA)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrMatrix, strings.Join(problems, "; "))
	}
	return &m, nil
}

// BuildRange is the range of compute capabilities a build made with CUDA
// cuda can have kernels for (SASS), from the newest toolkit row at or
// below it.
func (m *Matrix) BuildRange(cuda string) (minCC, maxCC string, ok bool) {
	v, vok := gpu.ParseVersion(cuda)
	if !vok {
		return "", "", false
	}
	var best *ToolkitArchs
	for i := range m.ToolkitArchs {
		t := &m.ToolkitArchs[i]
		if tv := gpu.MustVersion(t.CUDA); tv.Compare(v) <= 0 && (best == nil || tv.Compare(gpu.MustVersion(best.CUDA)) > 0) {
			best = t
		}
	}
	if best == nil {
		return "", "", false
	}
	return best.MinCC, best.MaxCC, true
}

// MinCC is the oldest compute capability framework's official binaries
// support ("" unknown).
func (m *Matrix) MinCC(framework string) string {
	for _, f := range m.FrameworkMin {
		if f.Framework == framework {
			return f.CC
		}
	}
	return ""
}

// MinDriver is the oldest Linux driver that supports a GPU of compute
// capability cc ("" unknown).
func (m *Matrix) MinDriver(cc string) string {
	if a, ok := m.Arch(cc); ok {
		return a.MinDriverLinux
	}
	return ""
}

// TFRelease returns the tested GPU build of a TensorFlow release
// ("2.3.1" → the 2.3 row).
func (m *Matrix) TFRelease(version string) (TFRelease, bool) {
	mm := gpu.MajorMinor(version)
	for _, t := range m.TensorFlow {
		if t.Version == mm {
			return t, true
		}
	}
	return TFRelease{}, false
}

// SplitArchs splits an arch list written "5.0;6.0" (or with commas or
// spaces).
func SplitArchs(s string) []string {
	var out []string
	for _, a := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
		out = append(out, a)
	}
	return out
}

// FamilyFloor returns the minimum driver for CUDA family major (Linux or
// Windows), or "" when the family is unknown.
func (m *Matrix) FamilyFloor(major int, windows bool) string {
	for _, f := range m.CUDAFamilies {
		if gpu.MustVersion(f.Major).Major() == major {
			if windows {
				return f.DriverWindows
			}
			return f.DriverLinux
		}
	}
	return ""
}

// Arch returns the architecture of a compute capability.
func (m *Matrix) Arch(cc string) (Architecture, bool) {
	v := gpu.MustVersion(cc)
	for _, a := range m.Architectures {
		for _, c := range a.CC {
			if gpu.MustVersion(c).Compare(v) == 0 {
				return a, true
			}
		}
	}
	return Architecture{}, false
}

// CCForName guesses a compute capability from a GPU's marketing name,
// as tools print it or a person writes it ("RTX5090", "gtx1080ti").
func (m *Matrix) CCForName(name string) string {
	name = seriesNumberRE.ReplaceAllString(name, "$1 $2")
	for _, g := range m.GPUs {
		if g.re != nil && g.re.MatchString(name) {
			return g.CC
		}
	}
	return ""
}

// seriesNumberRE is a series written against its number ("RTX5090"),
// which the name patterns want apart.
var seriesNumberRE = regexp.MustCompile(`(?i)\b(RTX|GTX|GT)(\d)`)

// TorchRelease finds the release of a torch version ("2.1.0+cu121" → 2.1).
func (m *Matrix) TorchRelease(version string) (TorchRelease, bool) {
	mm := gpu.MajorMinor(version)
	for _, r := range m.Torch {
		if r.Version == mm {
			return r, true
		}
	}
	return TorchRelease{}, false
}

// TorchVariant finds the wheel variant of an installed torch: by its local
// tag (+cu121), or, for an untagged Linux PyPI wheel, by its CUDA version.
func (m *Matrix) TorchVariant(version, cuda string) (TorchRelease, TorchVariant, bool) {
	r, ok := m.TorchRelease(version)
	if !ok {
		return r, TorchVariant{}, false
	}
	name := gpu.LocalTag(version)
	if gpu.VariantCUDA(name) == "" {
		name = gpu.CUDAVariant(cuda)
	}
	for _, v := range r.Variants {
		if v.Name == name {
			return r, v, true
		}
	}
	return r, TorchVariant{}, false
}

// ArchCoverage says whether a build runs on a GPU of compute capability cc.
type ArchCoverage struct {
	Covered bool
	ViaPTX  bool   // only through JIT compilation of PTX
	Reason  string // why not, in words
}

// Covers applies the binary compatibility rule to archs written "X.Y":
// SASS for sm_XY runs on
// X.Z with Z ≥ Y (same major only); PTX for compute_XY is JIT-compiled for
// any newer CC by a driver at least as new as the build's CUDA.
func Covers(sass, ptx []string, cc, driverCUDA, buildCUDA string) ArchCoverage {
	want, ok := gpu.ParseVersion(cc)
	if !ok {
		return ArchCoverage{Covered: true, Reason: "compute capability unknown"}
	}
	for _, a := range sass {
		v, ok := gpu.ParseVersion(a)
		if ok && v.Major() == want.Major() && v.Minor() <= want.Minor() {
			return ArchCoverage{Covered: true}
		}
	}
	for _, a := range ptx {
		v, ok := gpu.ParseVersion(a)
		if ok && v.Compare(want) <= 0 {
			if driverCUDA != "" && buildCUDA != "" && !gpu.VersionAtLeast(driverCUDA, buildCUDA) {
				return ArchCoverage{Reason: fmt.Sprintf("only PTX for %s, and the driver (CUDA %s) is older than the build (CUDA %s), so it cannot JIT-compile it", a, driverCUDA, buildCUDA)}
			}
			return ArchCoverage{Covered: true, ViaPTX: true}
		}
	}
	return ArchCoverage{Reason: fmt.Sprintf("no kernels for compute capability %s (the build has %s)", cc, strings.Join(sass, ", "))}
}
