package doctor

import (
	"sort"

	"gpuwizard/gpu"
)

// sorted orders the findings for a person, the most likely root cause
// first:
//   - errors and warnings before information, and within them the
//     strongest evidence first: a cause the facts or an error text prove
//     outranks a symptom that several causes produce, whatever their order;
//   - at equal strength, errors before warnings, then the machine blockers
//     (no NVIDIA GPU at all, macOS), then the order of the chain (driver,
//     CUDA version, wheel, cuDNN, then code: gpu.Causes);
//   - the differential's likely causes (for a report where nothing proves
//     a cause) in their own tier, after what medium evidence proves and
//     before weak error texts, in the order it weighed them;
//   - then the rules' own order.
func (j *judge) sorted() []gpu.Finding {
	out := append([]scored(nil), j.out...)
	sort.SliceStable(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if tx, ty := tier(x), tier(y); tx != ty {
			return tx < ty
		}
		if x.order != y.order {
			return abs(x.order) < abs(y.order) // a tier holds orders of one sign: the likely 1, 2, 3; the possible -1, -2, -3
		}
		return findingRank(x.Finding) < findingRank(y.Finding)
	})
	fs := make([]gpu.Finding, len(out))
	for i, s := range out {
		fs[i] = s.Finding
	}
	return fs
}

// tier: strong error 0, strong warning 2, medium error 4, medium warning
// 6, the differential 7, weak error 8, weak warning 10, info 20, ok 22.
func tier(s scored) int {
	switch {
	case s.Severity == gpu.SevInfo:
		return 20
	case s.Severity == gpu.SevOK:
		return 22
	case s.order > 0:
		return 7
	case s.order < 0:
		return 11
	}
	t := (3 - min(max(s.weight, 1), 3)) * 4
	if s.Severity == gpu.SevWarning {
		t += 2
	}
	return t
}

// machineBlockers are findings that make every other one moot: they come
// first within their tier whatever their cause.
var machineBlockers = map[string]bool{"no_nvidia_gpu": true, "macos_no_cuda": true, "report_no_nvidia_gpu": true}

func findingRank(f gpu.Finding) int {
	if machineBlockers[f.ID] {
		return -1
	}
	return f.Cause.Rank()
}

func abs(n int) int { return max(n, -n) }
