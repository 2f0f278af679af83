package app

import (
	"fmt"
	"image/color"
	"math"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Series is one line of a LineChart. A Points series (per-epoch
// validation) is drawn as markers joined by a thin line.
type Series struct {
	Name   string
	Color  color.Color
	Points bool
	X, Y   []float64
}

// LineChart draws a few series with pooled canvas objects: points are
// appended in batches and the chart is refreshed once per batch, at most
// ~10 times a second. Line segments are decimated to about one per 2
// pixels. The x axis is in epochs, with ticks; the y axis has 3 to 5 ticks
// at round numbers, with grid lines.
type LineChart struct {
	widget.BaseWidget
	Title string
	// YMin/YMax fix the vertical range; when equal the range follows the data.
	YMin, YMax float64
	// XMax is where the x axis ends at least (the planned epochs); the
	// axis starts at 0.
	XMax float64
	// XUnit names the x axis ("epoch").
	XUnit string
	// Format formats y tick labels; "" picks the digits from the tick step.
	Format string

	mu     sync.Mutex
	series []*Series
}

// NewLineChart makes an empty chart.
func NewLineChart(title string, series ...*Series) *LineChart {
	c := &LineChart{Title: title, series: series, XUnit: "epoch", XMax: 1}
	c.ExtendBaseWidget(c)
	return c
}

// Append adds one point to series i; call Refresh after a batch.
func (c *LineChart) Append(i int, x, y float64) {
	if math.IsNaN(y) || math.IsInf(y, 0) || math.IsNaN(x) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if i < len(c.series) {
		s := c.series[i]
		s.X, s.Y = append(s.X, x), append(s.Y, y)
	}
}

// Reset removes every point.
func (c *LineChart) Reset() {
	c.mu.Lock()
	for _, s := range c.series {
		s.X, s.Y = s.X[:0], s.Y[:0]
	}
	c.mu.Unlock()
	c.Refresh()
}

// Len is the number of points of series i.
func (c *LineChart) Len(i int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i >= len(c.series) {
		return 0
	}
	return len(c.series[i].X)
}

// niceTicks returns 3 to 5 round values (1, 2, 2.5 or 5 times a power of
// ten apart) that cover [lo, hi]: the first ≤ lo, the last ≥ hi.
func niceTicks(lo, hi float64) []float64 {
	if !(hi > lo) {
		hi = lo + 1
	}
	span := hi - lo
	for _, n := range []float64{4, 3, 5, 2, 6} {
		raw := span / n
		p := math.Pow(10, math.Floor(math.Log10(raw)))
		for _, m := range []float64{1, 2, 2.5, 5, 10} {
			step := m * p
			a := math.Floor(lo/step+1e-9) * step
			b := math.Ceil(hi/step-1e-9) * step
			k := int(math.Round((b-a)/step)) + 1
			if k >= 3 && k <= 5 {
				ticks := make([]float64, k)
				for i := range ticks {
					ticks[i] = a + float64(i)*step
					if math.Abs(ticks[i]) < step*1e-9 {
						ticks[i] = 0
					}
				}
				return ticks
			}
		}
	}
	return []float64{lo, (lo + hi) / 2, hi}
}

// tickText formats tick v of ticks step apart, the largest of magnitude
// top: as few digits as tell the ticks apart.
func tickText(format string, v, step, top float64) string {
	if format != "" {
		return fmt.Sprintf(format, v)
	}
	if v == 0 {
		return "0"
	}
	if top < 0.01 || top >= 1e6 { // 9.5e-04 and 1.0e-03
		k := int(math.Ceil(math.Log10(top/step) - 1e-9))
		return fmt.Sprintf("%.*e", min(max(k, 1), 3), v)
	}
	if step >= 1 {
		return fmt.Sprintf("%.0f", v)
	}
	d := int(math.Ceil(-math.Log10(step) - 1e-9))
	if math.Abs(step*math.Pow(10, float64(d))-math.Round(step*math.Pow(10, float64(d)))) > 1e-6 {
		d++ // 0.25 needs two decimals
	}
	return fmt.Sprintf("%.*f", d, v)
}

// xTicks returns the x axis's ticks for a run of xmax epochs: the axis
// ends at the run's end (xmax rounded up to whole epochs, at least 1),
// which is always the last tick; before it, round values (multiples of 1,
// 2, 5, 10, 20, 25, 50 … epochs) from 0, none closer to the end than half
// their step. At most 7 ticks.
func xTicks(xmax float64) []float64 {
	end := math.Ceil(xmax - 1e-9)
	if end < 1 {
		end = 1
	}
	step := 1.0
	for _, s := range []float64{1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000} {
		step = s
		if end/s <= 6 {
			break
		}
	}
	var t []float64
	for x := 0.0; x < end-step/2-1e-9; x += step {
		t = append(t, x)
	}
	return append(t, end)
}

// CreateRenderer implements fyne.Widget.
func (c *LineChart) CreateRenderer() fyne.WidgetRenderer {
	r := &chartRenderer{c: c, title: canvas.NewText(c.Title, theme.Color(theme.ColorNameForeground)),
		bg: canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))}
	r.title.TextStyle.Bold = true
	r.title.TextSize = theme.TextSize() * 0.95
	r.bg.CornerRadius = theme.InputRadiusSize()
	return r
}

type chartRenderer struct {
	c      *LineChart
	bg     *canvas.Rectangle
	title  *canvas.Text
	keys   []*canvas.Text
	labels []*canvas.Text     // tick labels, pooled
	grid   []*canvas.Line     // grid lines, pooled
	lines  [][]*canvas.Line   // pooled per series
	marks  [][]*canvas.Circle // pooled per Points series
	size   fyne.Size
	objs   []fyne.CanvasObject // rebuilt when the pools grow
	dirty  bool
}

func (r *chartRenderer) Destroy() {}

func (r *chartRenderer) MinSize() fyne.Size {
	return fyne.NewSize(220, 120)
}

func (r *chartRenderer) Objects() []fyne.CanvasObject {
	if r.objs == nil || r.dirty {
		objs := []fyne.CanvasObject{r.bg, r.title}
		for _, g := range r.grid {
			objs = append(objs, g)
		}
		for _, t := range r.labels {
			objs = append(objs, t)
		}
		for _, k := range r.keys {
			objs = append(objs, k)
		}
		for _, ls := range r.lines {
			for _, l := range ls {
				objs = append(objs, l)
			}
		}
		for _, ms := range r.marks {
			for _, m := range ms {
				objs = append(objs, m)
			}
		}
		r.objs, r.dirty = objs, false
	}
	return r.objs
}

func (r *chartRenderer) Refresh() {
	r.Layout(r.size)
	canvas.Refresh(r.c)
}

func (r *chartRenderer) label(i int) *canvas.Text {
	for len(r.labels) <= i {
		t := canvas.NewText("", theme.Color(theme.ColorNameForeground))
		t.TextSize = theme.TextSize() * 0.75
		r.labels = append(r.labels, t)
		r.dirty = true
	}
	t := r.labels[i]
	t.Hidden = false
	return t
}

func (r *chartRenderer) gridLine(i int) *canvas.Line {
	for len(r.grid) <= i {
		l := canvas.NewLine(theme.Color(theme.ColorNameSeparator))
		l.StrokeWidth = 1
		r.grid = append(r.grid, l)
		r.dirty = true
	}
	l := r.grid[i]
	l.Hidden = false
	return l
}

// Layout positions every object; it is also where the data is drawn.
func (r *chartRenderer) Layout(size fyne.Size) {
	r.size = size
	c := r.c
	pad := theme.Padding()
	r.bg.Resize(size)
	r.title.Text = c.Title
	r.title.Move(fyne.NewPos(pad*2, pad))
	head := r.title.MinSize().Height + pad
	c.mu.Lock()
	defer c.mu.Unlock()
	r.layoutKeys(size)
	// Ranges: x from 0 to the planned epochs (or the data, beyond).
	xmin, xmax := 0.0, math.Max(c.XMax, 1e-9)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, s := range c.series {
		for k := range s.X {
			xmax = math.Max(xmax, s.X[k])
			ymin, ymax = math.Min(ymin, s.Y[k]), math.Max(ymax, s.Y[k])
		}
	}
	if math.IsInf(ymin, 0) {
		ymin, ymax = 0, 1
	}
	if c.YMin != c.YMax {
		ymin, ymax = c.YMin, c.YMax
	}
	if ymax-ymin <= 1e-12*math.Max(1, math.Abs(ymax)) { // a flat series: pad by its magnitude
		p := math.Abs(ymax) * 0.1
		if p == 0 {
			p = 0.5
		}
		ymin, ymax = ymin-p, ymax+p
	}
	yt := niceTicks(ymin, ymax)
	if c.YMin != c.YMax { // a fixed range keeps its ends
		yt = niceTicks(c.YMin, c.YMax)
	}
	ymin, ymax = yt[0], yt[len(yt)-1]
	xt := xTicks(xmax)
	xmax = xt[len(xt)-1]

	// The plot: y labels on the left, x labels below.
	lh := float32(theme.TextSize() * 0.75 * 1.4)
	labelW := float32(0)
	texts := make([]string, len(yt))
	for i, v := range yt {
		texts[i] = tickText(c.Format, v, yt[1]-yt[0], math.Max(math.Abs(yt[0]), math.Abs(yt[len(yt)-1])))
		t := r.label(i)
		t.Text = texts[i]
		labelW = max(labelW, t.MinSize().Width)
	}
	plotX, plotY := pad*2+labelW+pad, head+pad+lh/2
	plotW, plotH := size.Width-plotX-pad*3, size.Height-plotY-pad-lh-2
	if plotW < 10 || plotH < 10 {
		plotW, plotH = max(plotW, 10), max(plotH, 10)
	}
	px := func(v float64) float32 { return plotX + float32((v-xmin)/(xmax-xmin))*plotW }
	py := func(v float64) float32 { return plotY + plotH - float32((v-ymin)/(ymax-ymin))*plotH }
	li, gi := 0, 0
	for i, v := range yt {
		t := r.label(li)
		li++
		t.Text = texts[i]
		t.Refresh()
		ms := t.MinSize()
		t.Move(fyne.NewPos(plotX-pad-ms.Width, py(v)-ms.Height/2))
		g := r.gridLine(gi)
		gi++
		g.Position1, g.Position2 = fyne.NewPos(plotX, py(v)), fyne.NewPos(plotX+plotW, py(v))
	}
	li, gi = r.layoutXAxis(xt, li, gi, px, plotY+plotH, size.Width)
	for _, t := range r.labels[li:] {
		t.Hidden = true
	}
	for _, g := range r.grid[gi:] {
		g.Hidden = true
	}
	r.drawSeries(int(plotW/2)+1, px, py)
}

// layoutKeys puts the legend keys, one per series, right-aligned in the
// title row (the chart's lock is held).
func (r *chartRenderer) layoutKeys(size fyne.Size) {
	c, pad := r.c, theme.Padding()
	for len(r.keys) < len(c.series) {
		t := canvas.NewText("", color.Black)
		t.TextSize = theme.TextSize() * 0.8
		r.keys = append(r.keys, t)
		r.lines = append(r.lines, nil)
		r.marks = append(r.marks, nil)
		r.dirty = true
	}
	x := size.Width - pad*2
	for i := len(c.series) - 1; i >= 0; i-- {
		s := c.series[i]
		k := r.keys[i]
		k.Text, k.Color = "━ "+s.Name, s.Color
		if s.Points {
			k.Text = "● " + s.Name
		}
		k.Refresh()
		x -= k.MinSize().Width + pad*2
		k.Move(fyne.NewPos(x, pad+2))
	}
}

// layoutXAxis puts the x ticks xt under the plot, whose bottom is at y,
// from label li and grid line gi on; it returns the next free ones. The
// last label (the run's end, with the unit) stays inside the chart's
// width, and hides the label before it when they would overlap.
func (r *chartRenderer) layoutXAxis(xt []float64, li, gi int, px func(float64) float32, y, width float32) (int, int) {
	c, pad := r.c, theme.Padding()
	var prev *canvas.Text // the previous x label
	prevRight := float32(0)
	for k, v := range xt {
		t := r.label(li)
		li++
		t.Text = fmt.Sprintf("%g", v)
		if k == len(xt)-1 && c.XUnit != "" {
			t.Text += " " + c.XUnit + "s"
			if v == 1 {
				t.Text = "1 " + c.XUnit
			}
		}
		t.Refresh()
		ms := t.MinSize()
		tx := px(v) - ms.Width/2
		if k == len(xt)-1 {
			tx = min(tx, width-pad-ms.Width)
			if prev != nil && k > 1 && tx < prevRight+pad { // the run's end is the label that must show
				prev.Hidden = true
			}
		}
		prev, prevRight = t, tx+ms.Width
		t.Move(fyne.NewPos(tx, y+2))
		g := r.gridLine(gi)
		gi++
		g.Position1, g.Position2 = fyne.NewPos(px(v), y), fyne.NewPos(px(v), y+4)
	}
	return li, gi
}

// drawSeries draws each series with pooled lines, decimated to maxSeg
// segments, and a Points series' markers when they are few enough (the
// chart's lock is held).
func (r *chartRenderer) drawSeries(maxSeg int, px, py func(float64) float32) {
	for i, s := range r.c.series {
		n := len(s.X)
		step := 1
		if n > maxSeg && maxSeg > 0 {
			step = (n + maxSeg - 1) / maxSeg
		}
		used := 0
		for k := step; k < n; k += step {
			if used == len(r.lines[i]) {
				l := canvas.NewLine(s.Color)
				r.lines[i] = append(r.lines[i], l)
				r.dirty = true
			}
			l := r.lines[i][used]
			l.StrokeColor = s.Color
			l.StrokeWidth = 2
			if s.Points {
				l.StrokeWidth = 1
			}
			l.Position1 = fyne.NewPos(px(s.X[k-step]), py(s.Y[k-step]))
			l.Position2 = fyne.NewPos(px(s.X[k]), py(s.Y[k]))
			l.Hidden = false
			used++
		}
		for _, l := range r.lines[i][used:] {
			l.Hidden = true
		}
		marks := 0
		if s.Points && n <= maxSeg {
			const rad = 3.5
			for k := 0; k < n; k++ {
				if marks == len(r.marks[i]) {
					r.marks[i] = append(r.marks[i], canvas.NewCircle(s.Color))
					r.dirty = true
				}
				m := r.marks[i][marks]
				m.FillColor = s.Color
				m.Move(fyne.NewPos(px(s.X[k])-rad, py(s.Y[k])-rad))
				m.Resize(fyne.NewSquareSize(2 * rad))
				m.Hidden = false
				marks++
			}
		}
		for _, m := range r.marks[i][marks:] {
			m.Hidden = true
		}
	}
}
