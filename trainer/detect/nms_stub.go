package detect

import "sort"

// This file stands in for the data side's nms.go (branch detb) until it
// lands: delete it at the merge.

// NMS keeps, class by class, the best-scoring boxes that overlap no
// better one by more than iou, at most maxPerImage in all, best first.
func NMS(dets []Detection, iou float32, maxPerImage int) []Detection {
	sorted := append([]Detection(nil), dets...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Score > sorted[j].Score })
	var keep []Detection
	for _, d := range sorted {
		if len(keep) >= maxPerImage {
			break
		}
		ok := true
		for _, k := range keep {
			if k.Class == d.Class && IoU(k.Box, d.Box) > iou {
				ok = false
				break
			}
		}
		if ok {
			keep = append(keep, d)
		}
	}
	return keep
}

// IoU is the intersection over union of two boxes (0 when either is
// empty).
func IoU(a, b Box) float32 {
	iw := min(a.X2, b.X2) - max(a.X1, b.X1)
	ih := min(a.Y2, b.Y2) - max(a.Y1, b.Y1)
	if iw <= 0 || ih <= 0 {
		return 0
	}
	in := iw * ih
	u := (a.X2-a.X1)*(a.Y2-a.Y1) + (b.X2-b.X1)*(b.Y2-b.Y1) - in
	if u <= 0 {
		return 0
	}
	return in / u
}
