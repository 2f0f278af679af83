package trainer

import (
	"fmt"
	"math"
	"strings"

	"gpuwizard/internal/plural"
	"gpuwizard/internal/printable"
)

// accumulator gathers predictions into Metrics.
type accumulator struct {
	classes   int
	n         int
	loss      float64
	top1      int
	top5      int
	confusion [][]int
}

func newAccumulator(classes int) *accumulator {
	a := &accumulator{classes: classes, confusion: make([][]int, classes)}
	for i := range a.confusion {
		a.confusion[i] = make([]int, classes)
	}
	return a
}

// add scores one example's logits against its label.
func (a *accumulator) add(logits []float32, label int) {
	best := argmax(logits)
	mx := logits[best]
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v - mx))
	}
	loss := -(float64(logits[label]-mx) - math.Log(sum))
	rank := 0
	for _, v := range logits {
		if v > logits[label] {
			rank++
		}
	}
	a.n++
	a.loss += loss
	if best == label {
		a.top1++
	}
	if rank < 5 {
		a.top5++
	}
	a.confusion[label][best]++
}

func (a *accumulator) metrics(split string, names []string) Metrics {
	m := Metrics{Split: split, Images: a.n, Confusion: a.confusion}
	if a.n == 0 {
		return m
	}
	m.Loss = a.loss / float64(a.n)
	m.Accuracy = float64(a.top1) / float64(a.n)
	m.Top5 = float64(a.top5) / float64(a.n)
	for c := 0; c < a.classes; c++ {
		tp := a.confusion[c][c]
		var predicted, actual int
		for k := 0; k < a.classes; k++ {
			predicted += a.confusion[k][c]
			actual += a.confusion[c][k]
		}
		cm := ClassMetrics{Class: names[c], Support: actual}
		if predicted > 0 {
			cm.Precision = float64(tp) / float64(predicted)
		}
		if actual > 0 {
			cm.Recall = float64(tp) / float64(actual)
		}
		if cm.Precision+cm.Recall > 0 {
			cm.F1 = 2 * cm.Precision * cm.Recall / (cm.Precision + cm.Recall)
		}
		m.PerClass = append(m.PerClass, cm)
	}
	return m
}

// Table is the per-class table and confusion matrix as text.
func (m Metrics) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s, accuracy %.2f%%, top-5 %.2f%%, loss %.4f\n", m.Split, plural.Count(m.Images, "image"), 100*m.Accuracy, 100*m.Top5, m.Loss)
	fmt.Fprintf(&b, "  %-14s %9s %9s %9s %8s\n", "class", "precision", "recall", "f1", "support")
	for _, c := range m.PerClass {
		fmt.Fprintf(&b, "  %-14s %9.3f %9.3f %9.3f %8d\n", trunc(c.Class, 14), c.Precision, c.Recall, c.F1, c.Support)
	}
	if len(m.Confusion) <= 12 {
		b.WriteString("  confusion (rows: true class, columns: predicted)\n")
		for i, row := range m.Confusion {
			fmt.Fprintf(&b, "  %-8s", trunc(m.PerClass[i].Class, 8))
			for _, v := range row {
				fmt.Fprintf(&b, " %5d", v)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// trunc is a class name for a table column of n characters: escaped
// (printable), then cut with an ellipsis.
func trunc(s string, n int) string {
	s = printable.String(s)
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
