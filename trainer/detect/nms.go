package detect

import (
	"math"
	"sort"
)

// MaxNMSCandidates is the most detections NMS looks at: the highest
// scores (an untrained head can propose a box in every cell).
const MaxNMSCandidates = 30000

// Area is the box's area (0 for an empty or inverted box).
func (b Box) Area() float32 {
	return max(b.X2-b.X1, 0) * max(b.Y2-b.Y1, 0)
}

// IoU is the intersection over union of two boxes (0 when they do not
// overlap, or when both are empty).
func IoU(a, b Box) float32 {
	return float32(iou64(a, b))
}

// iou64 is IoU in float64, as the metrics compute it; 0 for boxes with
// coordinates that are not numbers.
func iou64(a, b Box) float64 {
	w := math.Min(float64(a.X2), float64(b.X2)) - math.Max(float64(a.X1), float64(b.X1))
	h := math.Min(float64(a.Y2), float64(b.Y2)) - math.Max(float64(a.Y1), float64(b.Y1))
	if !(w > 0) || !(h > 0) {
		return 0
	}
	inter := w * h
	union := area64(a) + area64(b) - inter
	if r := inter / union; r >= 0 && r <= 1 {
		return r
	}
	return 0
}

func area64(b Box) float64 {
	return math.Max(float64(b.X2)-float64(b.X1), 0) * math.Max(float64(b.Y2)-float64(b.Y1), 0)
}

// NMS is non-maximum suppression per class: the detections by falling
// score (the first MaxNMSCandidates), each kept unless a kept detection of
// the same class overlaps it by an IoU above iou; at most maxPerImage are
// kept (0 or less: no limit). Detections with a score that is not a number
// are dropped. The result is a new slice, highest score first; dets is not
// changed.
func NMS(dets []Detection, iou float32, maxPerImage int) []Detection {
	order := make([]int, 0, len(dets))
	for i, d := range dets {
		if !math.IsNaN(float64(d.Score)) {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return dets[order[a]].Score > dets[order[b]].Score })
	if len(order) > MaxNMSCandidates {
		order = order[:MaxNMSCandidates]
	}
	limit := maxPerImage
	if limit <= 0 {
		limit = len(order)
	}
	var out []Detection
	byClass := map[int][]int{} // class → indices in out
	for _, i := range order {
		if len(out) >= limit {
			break
		}
		d := dets[i]
		keep := true
		for _, k := range byClass[d.Class] {
			if IoU(d.Box, out[k].Box) > iou {
				keep = false
				break
			}
		}
		if keep {
			byClass[d.Class] = append(byClass[d.Class], len(out))
			out = append(out, d)
		}
	}
	return out
}
