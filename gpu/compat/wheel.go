package compat

import (
	"fmt"
	"gpuwizard/gpu"
	"strings"
)

// WheelAdvice is the newest official PyTorch wheel that runs on every GPU
// of a machine with its driver, and why newer ones do not.
type WheelAdvice struct {
	OK          bool     `json:"ok"`
	Torch       string   `json:"torch,omitempty"`
	TorchVision string   `json:"torchvision,omitempty"`
	Variant     string   `json:"variant,omitempty"`
	IndexURL    string   `json:"index_url,omitempty"`
	Rejected    []string `json:"rejected,omitempty"` // why newer wheels do not fit
	Reason      string   `json:"reason,omitempty"`   // why none fits
}

// WheelQuery is what the joint solver needs to know.
type WheelQuery struct {
	DriverVersion string   // "550.54.15"; "" unknown
	DriverCUDA    string   // "12.4"; "" unknown
	CCs           []string // every GPU's compute capability
	GPUNames      []string // same order, for the explanations
	Windows       bool
	Python        string // "3.11"; "" unknown
}

// PipCommand installs the advised wheel with python, where no torch is.
func (a WheelAdvice) PipCommand(python string) string { return a.pip(python, "") }

// ReinstallCommand replaces an installed torch that cannot work with the
// advised wheel.
func (a WheelAdvice) ReinstallCommand(python string) string {
	return a.pip(python, "--force-reinstall ")
}

func (a WheelAdvice) pip(python, flags string) string {
	if !a.OK {
		return ""
	}
	if python == "" {
		python = "python3"
	}
	return fmt.Sprintf("%s -m pip install %storch==%s.* torchvision==%s.* --index-url %s",
		gpu.CommandWord(python), flags, a.Torch, a.TorchVision, a.IndexURL)
}

// pythonInRange checks "3.11" against "3.10-3.14".
func pythonInRange(py, rng string) bool {
	if py == "" || rng == "" {
		return true
	}
	lo, hi, _ := strings.Cut(rng, "-")
	v := gpu.MustVersion(py)
	if v == nil {
		return true
	}
	if l := gpu.MustVersion(lo); l != nil && v.Compare(l) < 0 {
		return false
	}
	if h := gpu.MustVersion(hi); h != nil && v.Compare(h) > 0 {
		return false
	}
	return true
}

// DriverRuns says whether a driver runs a CUDA build, and why not.
func (m *Matrix) DriverRuns(q WheelQuery, cuda string) (bool, string) {
	major := gpu.MustVersion(cuda).Major()
	floor := m.FamilyFloor(major, q.Windows)
	if q.DriverVersion != "" && floor != "" {
		if !gpu.VersionAtLeast(q.DriverVersion, floor) {
			return false, fmt.Sprintf("CUDA %d builds need driver ≥ %s; this driver is %s", major, floor, q.DriverVersion)
		}
		return true, ""
	}
	if q.DriverCUDA != "" {
		if gpu.MustVersion(q.DriverCUDA).Major() < major {
			return false, fmt.Sprintf("CUDA %d builds need a driver for CUDA %d (≥ %s); this driver supports CUDA %s", major, major, floor, q.DriverCUDA)
		}
	}
	return true, ""
}

// AdviseTorch solves driver × every GPU's compute capability × OS × Python
// for the newest official PyTorch wheel.
func (m *Matrix) AdviseTorch(q WheelQuery) WheelAdvice {
	var rejected []string
	seen := map[string]bool{}
	reject := func(s string) {
		if !seen[s] {
			seen[s] = true
			rejected = append(rejected, s)
		}
	}
	for _, r := range m.Torch {
		if !pythonInRange(q.Python, r.Python) {
			reject(fmt.Sprintf("torch %s needs Python %s (this one is %s)", r.Version, r.Python, q.Python))
			continue
		}
		for _, v := range r.Variants {
			if ok, why := m.DriverRuns(q, v.CUDA); !ok {
				reject(v.Name + " wheels: " + why)
				continue
			}
			sass, ptx := SplitArchs(v.Archs), SplitArchs(v.PTX)
			bad := ""
			for i, cc := range q.CCs {
				if c := Covers(sass, ptx, cc, q.DriverCUDA, v.CUDA); !c.Covered {
					name := "GPU"
					if i < len(q.GPUNames) && q.GPUNames[i] != "" {
						name = q.GPUNames[i]
					}
					bad = fmt.Sprintf("%s wheels have no kernels for %s (compute capability %s)", v.Name, name, cc)
					break
				}
			}
			if bad != "" {
				reject(bad)
				continue
			}
			return WheelAdvice{OK: true, Torch: r.Version, TorchVision: r.TorchVision, Variant: v.Name,
				IndexURL: "https://download.pytorch.org/whl/" + v.Name, Rejected: trimReasons(rejected)}
		}
	}
	return WheelAdvice{Rejected: trimReasons(rejected), Reason: "no official PyTorch wheel runs on every GPU with this driver"}
}

// trimReasons keeps the explanations short: one line per distinct cause.
func trimReasons(rs []string) []string {
	if len(rs) > 4 {
		rs = append(rs[:4:4], fmt.Sprintf("(%d more)", len(rs)-4))
	}
	return rs
}
