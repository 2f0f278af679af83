package detect

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// How Evaluate scores a detector, in the definitions of pycocotools'
// COCOeval and Ultralytics' val:
//
//   - Matching (COCOeval.evaluateImg), per image and class, at each IoU
//     threshold t of 0.50, 0.55, …, 0.95: the detections, by falling score,
//     each take the ground-truth box not yet taken whose IoU with it is
//     highest and at least t (a tie goes to the later box); a detection
//     that takes none is a false positive.
//   - AP (COCOeval.accumulate): per class, the detections of every image
//     by falling score (a stable sort, images in order); precision and
//     recall after each; precision made non-increasing from the right;
//     AP is the mean of the precision at the 101 recall points 0, 0.01, …,
//     1 (at each, the precision where recall first reaches it; 0 when it
//     never does). mAP50 is AP at t = 0.50, mAP50-95 the mean over the ten
//     thresholds; both are means over the classes that have objects (a
//     class with objects and no detections counts 0; one without
//     objects does not count).
//   - Precision and recall (Ultralytics' ap_per_class): per class, at
//     t = 0.50, recall and precision as functions of the score threshold
//     (linear interpolation over 1,000 thresholds from 0 to 1); F1 at each
//     threshold, averaged over the classes with objects and smoothed with
//     a moving average over a tenth of the range; the threshold of the
//     highest smoothed F1 gives each class's precision, recall and F1.
//
// The detections are scored as given (no cap per image: NMS has capped
// them). Ultralytics' own mAP matches by IoU first and integrates the 101
// points with the trapezoid rule: its figures differ from these in the
// second or third decimal.

// NumIoUThresholds is how many IoU thresholds mAP50-95 averages.
const NumIoUThresholds = 10

// iouThresholds are 0.50, 0.55, …, 0.95, computed as numpy's
// linspace(0.5, 0.95, 10) computes them (as pycocotools takes them).
func iouThresholds() [NumIoUThresholds]float64 {
	var t [NumIoUThresholds]float64
	step := (0.95 - 0.5) / float64(NumIoUThresholds-1)
	for i := range t {
		t[i] = float64(i)*step + 0.5
	}
	t[NumIoUThresholds-1] = 0.95
	return t
}

// scored is one detection as the metrics see it: its score and whether it
// matched a ground-truth box at each IoU threshold.
type scored struct {
	score float64
	tp    [NumIoUThresholds]bool
}

// Evaluate scores detections against the ground truth: preds[i] and
// truths[i] are image i's (in the same pixels), classes the dataset's
// names. See the comment above for the definitions. Detections of a
// class outside classes, or whose score is not a number, are ignored.
// Metrics.Split is left for the caller to name.
func Evaluate(preds [][]Detection, truths [][]Object, classes []string) Metrics {
	nc := len(classes)
	thr := iouThresholds()
	npos := make([]int, nc)
	perClass := make([][]scored, nc)
	n := max(len(preds), len(truths))
	for i := 0; i < n; i++ {
		var p []Detection
		var g []Object
		if i < len(preds) {
			p = preds[i]
		}
		if i < len(truths) {
			g = truths[i]
		}
		matchImage(p, g, thr, npos, perClass)
	}
	m := Metrics{Images: n}
	var pCurves, rCurves [][]float64
	for c := 0; c < nc; c++ {
		m.Objects += npos[c]
		if npos[c] == 0 {
			continue
		}
		dets := perClass[c]
		sort.SliceStable(dets, func(a, b int) bool { return dets[a].score > dets[b].score })
		ca := ClassAP{Class: classes[c], Objects: npos[c]}
		for t := range thr {
			ap := averagePrecision(dets, t, npos[c])
			if t == 0 {
				ca.AP50 = ap
			}
			ca.AP5095 += ap / NumIoUThresholds
		}
		pc, rc := prCurves(dets, npos[c])
		pCurves, rCurves = append(pCurves, pc), append(rCurves, rc)
		m.PerClass = append(m.PerClass, ca)
	}
	if len(m.PerClass) == 0 {
		return m
	}
	bestF1(&m, pCurves, rCurves)
	for _, ca := range m.PerClass {
		m.MAP50 += ca.AP50 / float64(len(m.PerClass))
		m.MAP5095 += ca.AP5095 / float64(len(m.PerClass))
	}
	return m
}

// matchImage matches one image's detections to its ground truth, class
// by class, at each threshold, and adds them to perClass; npos counts the
// ground truth. Classes outside 0..len(npos)-1 are ignored.
func matchImage(preds []Detection, truths []Object, thr [NumIoUThresholds]float64, npos []int, perClass [][]scored) {
	nc := len(npos)
	gts := map[int][]Box{}
	for _, o := range truths {
		if o.Class >= 0 && o.Class < nc {
			gts[o.Class] = append(gts[o.Class], o.Box)
			npos[o.Class]++
		}
	}
	dets := map[int][]Detection{}
	for _, d := range preds {
		if d.Class >= 0 && d.Class < nc && !math.IsNaN(float64(d.Score)) {
			dets[d.Class] = append(dets[d.Class], d)
		}
	}
	for c, ds := range dets {
		sort.SliceStable(ds, func(a, b int) bool { return ds[a].Score > ds[b].Score })
		gt := gts[c]
		var taken [NumIoUThresholds][]bool
		for t := range taken {
			taken[t] = make([]bool, len(gt))
		}
		ious := make([]float64, len(gt))
		for _, d := range ds {
			for g, b := range gt {
				ious[g] = iou64(d.Box, b)
			}
			s := scored{score: float64(d.Score)}
			for t := range thr {
				best, m := min(thr[t], 1-1e-10), -1
				for g := range gt {
					if taken[t][g] || ious[g] < best {
						continue
					}
					best, m = ious[g], g
				}
				if m >= 0 {
					taken[t][m], s.tp[t] = true, true
				}
			}
			perClass[c] = append(perClass[c], s)
		}
	}
}

// recallPoints is how many recall points AP samples.
const recallPoints = 101

// averagePrecision is COCO's AP of one class at threshold t: dets sorted
// by falling score, npos > 0 ground-truth boxes.
func averagePrecision(dets []scored, t, npos int) float64 {
	nd := len(dets)
	if nd == 0 {
		return 0
	}
	rc, pr := make([]float64, nd), make([]float64, nd)
	tp, fp := 0.0, 0.0
	for i, d := range dets {
		if d.tp[t] {
			tp++
		} else {
			fp++
		}
		rc[i] = tp / float64(npos)
		pr[i] = tp / (tp + fp + epsilon)
	}
	for i := nd - 1; i > 0; i-- {
		pr[i-1] = max(pr[i-1], pr[i])
	}
	var sum float64
	for k := 0; k < recallPoints; k++ {
		r := float64(k) * 0.01 // numpy's linspace(0, 1, 101), as pycocotools takes it
		if k == recallPoints-1 {
			r = 1
		}
		i := sort.SearchFloat64s(rc, r) // the first recall ≥ r
		if i < nd {
			sum += pr[i]
		}
	}
	return sum / recallPoints
}

// epsilon is numpy's spacing(1), which pycocotools adds to precision's
// denominator.
const epsilon = 2.220446049250313e-16

// curvePoints is how many score thresholds the precision and recall
// curves are sampled at (0 to 1).
const curvePoints = 1000

// curveX is score threshold i of the curves: numpy's linspace(0, 1, 1000).
func curveX(i int) float64 {
	if i == curvePoints-1 {
		return 1
	}
	return float64(i) * (1.0 / (curvePoints - 1))
}

// prCurves are one class's precision and recall at IoU 0.50 as functions
// of the score threshold (Ultralytics' p_curve and r_curve): at each
// threshold, interpolated linearly between the detections' scores; above
// the highest score, precision 1 and recall 0. A class without
// detections has both 0.
func prCurves(dets []scored, npos int) (p, r []float64) {
	p, r = make([]float64, curvePoints), make([]float64, curvePoints)
	if len(dets) == 0 {
		return p, r
	}
	negScore := make([]float64, len(dets)) // rising, as interp needs
	prec, rec := make([]float64, len(dets)), make([]float64, len(dets))
	tp, fp := 0.0, 0.0
	for i, d := range dets {
		if d.tp[0] {
			tp++
		} else {
			fp++
		}
		negScore[i] = -d.score
		rec[i] = tp / (float64(npos) + 1e-16)
		prec[i] = tp / (tp + fp)
	}
	for i := range p {
		x := -curveX(i)
		r[i] = interp(x, negScore, rec, 0)
		p[i] = interp(x, negScore, prec, 1)
	}
	return p, r
}

// interp is numpy's interp(x, xp, fp, left=left) for rising xp: left
// before xp[0], the last value after xp's end, else linear between the
// last xp[j] ≤ x and the next.
func interp(x float64, xp, fp []float64, left float64) float64 {
	n := len(xp)
	switch {
	case x < xp[0]:
		return left
	case x >= xp[n-1]:
		return fp[n-1]
	}
	j := sort.Search(n, func(i int) bool { return xp[i] > x }) - 1
	if xp[j+1] == xp[j] {
		return fp[j]
	}
	return fp[j] + (fp[j+1]-fp[j])*(x-xp[j])/(xp[j+1]-xp[j])
}

// bestF1 sets the precision, recall and F1 of m and of each class at the
// score threshold of the highest smoothed mean F1.
func bestF1(m *Metrics, pCurves, rCurves [][]float64) {
	nc := len(pCurves)
	mean := make([]float64, curvePoints)
	f1 := make([][]float64, nc)
	for c := range pCurves {
		f1[c] = make([]float64, curvePoints)
		for i := range mean {
			p, r := pCurves[c][i], rCurves[c][i]
			f1[c][i] = 2 * p * r / (p + r + 1e-16)
			mean[i] += f1[c][i]
		}
	}
	for i := range mean {
		mean[i] /= float64(nc)
	}
	best := argmax(smooth(mean, 0.1))
	m.Threshold = curveX(best)
	for c := range m.PerClass {
		m.PerClass[c].Precision, m.PerClass[c].Recall = pCurves[c][best], rCurves[c][best]
		m.Precision += pCurves[c][best] / float64(nc)
		m.Recall += rCurves[c][best] / float64(nc)
		m.F1 += f1[c][best] / float64(nc)
	}
}

// smooth is a moving average over a window of about frac of y's length
// (odd), y's ends repeated past them (Ultralytics' smooth).
func smooth(y []float64, frac float64) []float64 {
	nf := int(roundHalfEven(float64(len(y))*frac*2))/2 + 1
	half := nf / 2
	out := make([]float64, len(y))
	for i := range y {
		var s float64
		for k := i - half; k <= i+half; k++ {
			s += y[min(max(k, 0), len(y)-1)] * (1 / float64(nf))
		}
		out[i] = s
	}
	return out
}

// roundHalfEven rounds as Python's round does.
func roundHalfEven(v float64) float64 {
	r := float64(int64(v + 0.5))
	if r-v == 0.5 && int64(r)%2 != 0 {
		r--
	}
	return r
}

// argmax is the index of the first largest value.
func argmax(y []float64) int {
	best := 0
	for i, v := range y {
		if v > y[best] {
			best = i
		}
	}
	return best
}

// Summary is the metrics in one line: mAP50-95, mAP50, and precision and
// recall at the best-F1 threshold.
func (m *Metrics) Summary() string {
	return fmt.Sprintf("mAP50-95 %.3f · mAP50 %.3f · precision %.3f, recall %.3f at score ≥ %.2f (best F1 %.3f) · %d images, %d objects",
		m.MAP5095, m.MAP50, m.Precision, m.Recall, m.Threshold, m.F1, m.Images, m.Objects)
}

// Table is the per-class table as text, after the summary line: one row a
// class with objects, the mean last. Class names are written as they
// are: the caller escapes what it prints to a terminal.
func (m *Metrics) Table() string {
	var b strings.Builder
	split := m.Split
	if split == "" {
		split = "evaluation"
	}
	fmt.Fprintf(&b, "%s: %s\n", split, m.Summary())
	w := len("class")
	for _, c := range m.PerClass {
		w = max(w, len([]rune(c.Class)))
	}
	fmt.Fprintf(&b, "  %-*s %8s %8s %8s %9s %8s\n", w, "class", "objects", "AP50", "AP50-95", "precision", "recall")
	for _, c := range m.PerClass {
		fmt.Fprintf(&b, "  %-*s %8d %8.3f %8.3f %9.3f %8.3f\n", w, c.Class, c.Objects, c.AP50, c.AP5095, c.Precision, c.Recall)
	}
	fmt.Fprintf(&b, "  %-*s %8d %8.3f %8.3f %9.3f %8.3f\n", w, "all", m.Objects, m.MAP50, m.MAP5095, m.Precision, m.Recall)
	return b.String()
}
