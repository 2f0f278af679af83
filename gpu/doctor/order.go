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
//   - then the rules' own order.
func (j *judge) sorted() []gpu.Finding {
	out := append([]scored(nil), j.out...)
	sort.SliceStable(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if tx, ty := tier(x), tier(y); tx != ty {
			return tx < ty
		}
		return findingRank(x.Finding) < findingRank(y.Finding)
	})
	fs := make([]gpu.Finding, len(out))
	for i, s := range out {
		fs[i] = s.Finding
	}
	return fs
}

// tier: strong error 0, strong warning 1, medium error 2, medium warning 3,
// weak error 4, weak warning 5, info 10, ok 11.
func tier(s scored) int {
	switch s.Severity {
	case gpu.SevInfo:
		return 10
	case gpu.SevOK:
		return 11
	}
	t := (3 - min(max(s.weight, 1), 3)) * 2
	if s.Severity == gpu.SevWarning {
		t++
	}
	return t
}

// machineBlockers are findings that make every other one moot: they come
// first within their tier whatever their cause.
var machineBlockers = map[string]bool{"no_nvidia_gpu": true, "macos_no_cuda": true}

func findingRank(f gpu.Finding) int {
	if machineBlockers[f.ID] {
		return -1
	}
	return f.Cause.Rank()
}
