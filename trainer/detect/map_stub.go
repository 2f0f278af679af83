package detect

import "sort"

// This file stands in for the data side's map.go (branch detb) until it
// lands: delete it at the merge. It computes the same figures plainly
// (COCO's 101-point AP at IoU .50:.05:.95, greedy matching by score), so
// that this branch's runs report real numbers.

// Evaluate scores preds[i] (image i's detections) against truths[i].
func Evaluate(preds [][]Detection, truths [][]Object, classes []string) Metrics {
	m := Metrics{Images: len(truths)}
	var f1Curves [][]prPoint
	for c, name := range classes {
		ca, curve := classAP(preds, truths, c)
		ca.Class = name
		m.Objects += ca.Objects
		if ca.Objects == 0 {
			continue
		}
		m.PerClass = append(m.PerClass, ca)
		f1Curves = append(f1Curves, curve)
	}
	if len(m.PerClass) == 0 {
		return m
	}
	for _, ca := range m.PerClass {
		m.MAP50 += ca.AP50 / float64(len(m.PerClass))
		m.MAP5095 += ca.AP5095 / float64(len(m.PerClass))
	}
	bestF1(&m, f1Curves)
	return m
}

// prPoint is a class's precision and recall at a score threshold.
type prPoint struct{ p, r float64 }

const confSteps = 1000

type scored struct {
	img   int
	score float32
	box   Box
}

// classAP is class c's AP50, AP50-95 and its precision-recall at IoU .5
// on a grid of score thresholds.
func classAP(preds [][]Detection, truths [][]Object, c int) (ClassAP, []prPoint) {
	var ps []scored
	gts := make([][]Box, len(truths))
	n := 0
	for i := range truths {
		for _, o := range truths[i] {
			if o.Class == c {
				gts[i] = append(gts[i], o.Box)
				n++
			}
		}
		if i < len(preds) {
			for _, d := range preds[i] {
				if d.Class == c {
					ps = append(ps, scored{i, d.Score, d.Box})
				}
			}
		}
	}
	ca := ClassAP{Objects: n}
	if n == 0 {
		return ca, nil
	}
	sort.SliceStable(ps, func(a, b int) bool { return ps[a].score > ps[b].score })
	var curve []prPoint
	for t := 0; t < 10; t++ {
		tp := match(ps, gts, 0.5+0.05*float32(t))
		ap := ap101(tp, n)
		ca.AP5095 += ap / 10
		if t == 0 {
			ca.AP50 = ap
			curve = prCurve(ps, tp, n)
		}
	}
	return ca, curve
}

// match marks each prediction (best first) a true positive when it
// overlaps an unmatched truth of its image by at least thr (the best
// such truth).
func match(ps []scored, gts [][]Box, thr float32) []bool {
	used := make([][]bool, len(gts))
	for i := range gts {
		used[i] = make([]bool, len(gts[i]))
	}
	tp := make([]bool, len(ps))
	for k, p := range ps {
		best, bi := thr, -1
		for j, g := range gts[p.img] {
			if v := IoU(p.box, g); !used[p.img][j] && v >= best {
				best, bi = v, j
			}
		}
		if bi >= 0 {
			used[p.img][bi], tp[k] = true, true
		}
	}
	return tp
}

// ap101 is COCO's 101-point interpolated AP of a ranked list.
func ap101(tp []bool, n int) float64 {
	prec, rec := make([]float64, len(tp)), make([]float64, len(tp))
	hits := 0
	for k, t := range tp {
		if t {
			hits++
		}
		prec[k], rec[k] = float64(hits)/float64(k+1), float64(hits)/float64(n)
	}
	for k := len(prec) - 2; k >= 0; k-- {
		prec[k] = max(prec[k], prec[k+1])
	}
	var s float64
	k := 0
	for i := 0; i <= 100; i++ {
		r := float64(i) / 100
		for k < len(rec) && rec[k] < r {
			k++
		}
		if k < len(rec) {
			s += prec[k]
		}
	}
	return s / 101
}

// prCurve is the precision and recall at each score threshold of the
// grid (at IoU .5).
func prCurve(ps []scored, tp []bool, n int) []prPoint {
	curve := make([]prPoint, confSteps)
	k, hits := 0, 0
	for i := 0; i < confSteps; i++ {
		conf := float32(confSteps-1-i) / confSteps // descending
		for k < len(ps) && ps[k].score >= conf {
			if tp[k] {
				hits++
			}
			k++
		}
		p := 1.0
		if k > 0 {
			p = float64(hits) / float64(k)
		}
		curve[confSteps-1-i] = prPoint{p, float64(hits) / float64(n)}
	}
	return curve
}

// bestF1 sets the threshold where the mean F1 over classes is best, and
// each class's and the mean precision and recall there.
func bestF1(m *Metrics, curves [][]prPoint) {
	best, bi := -1.0, 0
	for i := 0; i < confSteps; i++ {
		var f float64
		for _, c := range curves {
			if s := c[i].p + c[i].r; s > 0 {
				f += 2 * c[i].p * c[i].r / s
			}
		}
		if f /= float64(len(curves)); f > best {
			best, bi = f, i
		}
	}
	m.F1, m.Threshold = best, float64(bi)/confSteps
	for k := range m.PerClass {
		pt := curves[k][bi]
		m.PerClass[k].Precision, m.PerClass[k].Recall = pt.p, pt.r
		m.Precision += pt.p / float64(len(curves))
		m.Recall += pt.r / float64(len(curves))
	}
}
