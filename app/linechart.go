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

// Series is one line of a LineChart.
type Series struct {
	Name  string
	Color color.Color
	X, Y  []float64
}

// LineChart draws a few series with pooled canvas.Line segments: points
// are appended in batches and the chart is refreshed once per batch, at most
// ~10 times a second. Segments are decimated to about one per 2 pixels.
type LineChart struct {
	widget.BaseWidget
	Title string
	// YMin/YMax fix the vertical range; when equal the range follows the data.
	YMin, YMax float64
	// Format formats axis values.
	Format string

	mu     sync.Mutex
	series []*Series
}

// NewLineChart makes an empty chart.
func NewLineChart(title string, series ...*Series) *LineChart {
	c := &LineChart{Title: title, series: series, Format: "%.3g"}
	c.ExtendBaseWidget(c)
	return c
}

// Append adds one point to series i; call Refresh after a batch.
func (c *LineChart) Append(i int, x, y float64) {
	if math.IsNaN(y) || math.IsInf(y, 0) {
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

// CreateRenderer implements fyne.Widget.
func (c *LineChart) CreateRenderer() fyne.WidgetRenderer {
	r := &chartRenderer{c: c, title: canvas.NewText(c.Title, theme.Color(theme.ColorNameForeground)),
		bg:   canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground)),
		yMax: canvas.NewText("", theme.Color(theme.ColorNameDisabled)), yMin: canvas.NewText("", theme.Color(theme.ColorNameDisabled)),
		legend: canvas.NewText("", theme.Color(theme.ColorNameDisabled))}
	r.title.TextStyle.Bold = true
	r.title.TextSize = theme.TextSize() * 0.95
	for _, t := range []*canvas.Text{r.yMax, r.yMin, r.legend} {
		t.TextSize = theme.TextSize() * 0.8
	}
	r.bg.CornerRadius = theme.InputRadiusSize()
	return r
}

type chartRenderer struct {
	c                         *LineChart
	bg                        *canvas.Rectangle
	title, yMax, yMin, legend *canvas.Text
	keys                      []*canvas.Text
	lines                     [][]*canvas.Line // pooled per series
	size                      fyne.Size
}

func (r *chartRenderer) Destroy() {}

func (r *chartRenderer) MinSize() fyne.Size {
	return fyne.NewSize(200, 120)
}

func (r *chartRenderer) Objects() []fyne.CanvasObject {
	objs := []fyne.CanvasObject{r.bg, r.title, r.yMax, r.yMin}
	for _, k := range r.keys {
		objs = append(objs, k)
	}
	for _, ls := range r.lines {
		for _, l := range ls {
			objs = append(objs, l)
		}
	}
	return objs
}

func (r *chartRenderer) Refresh() {
	r.Layout(r.size)
	canvas.Refresh(r.c)
}

// Layout positions every segment; it is also where the data is drawn.
func (r *chartRenderer) Layout(size fyne.Size) {
	r.size = size
	c := r.c
	pad := theme.Padding()
	r.bg.Resize(size)
	r.title.Text = c.Title
	r.title.Move(fyne.NewPos(pad*2, pad))
	head := r.title.MinSize().Height + pad
	plotX, plotY := pad*2+52, head+pad
	plotW, plotH := size.Width-plotX-pad*2, size.Height-plotY-pad*2
	c.mu.Lock()
	defer c.mu.Unlock()
	// Legend keys, one per series, right-aligned in the title row.
	for len(r.keys) < len(c.series) {
		t := canvas.NewText("", color.Black)
		t.TextSize = theme.TextSize() * 0.8
		r.keys = append(r.keys, t)
		r.lines = append(r.lines, nil)
	}
	x := size.Width - pad*2
	for i := len(c.series) - 1; i >= 0; i-- {
		s := c.series[i]
		k := r.keys[i]
		k.Text, k.Color = "━ "+s.Name, s.Color
		k.Refresh()
		x -= k.MinSize().Width + pad*2
		k.Move(fyne.NewPos(x, pad+2))
	}
	// Ranges.
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, s := range c.series {
		for k := range s.X {
			xmin, xmax = math.Min(xmin, s.X[k]), math.Max(xmax, s.X[k])
			ymin, ymax = math.Min(ymin, s.Y[k]), math.Max(ymax, s.Y[k])
		}
	}
	if math.IsInf(xmin, 0) {
		xmin, xmax, ymin, ymax = 0, 1, 0, 1
	}
	if c.YMin != c.YMax {
		ymin, ymax = c.YMin, c.YMax
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	if ymax-ymin <= 1e-12*math.Max(1, math.Abs(ymax)) { // a flat series: pad by its magnitude
		pad := math.Abs(ymax) * 0.1
		if pad == 0 {
			pad = 0.5
		}
		ymin, ymax = ymin-pad, ymax+pad
	}
	r.yMax.Text, r.yMin.Text = fmt.Sprintf(c.Format, ymax), fmt.Sprintf(c.Format, ymin)
	r.yMax.Refresh()
	r.yMin.Refresh()
	r.yMax.Move(fyne.NewPos(pad*2, plotY-4))
	r.yMin.Move(fyne.NewPos(pad*2, plotY+plotH-r.yMin.MinSize().Height+4))
	px := func(v float64) float32 { return plotX + float32((v-xmin)/(xmax-xmin))*plotW }
	py := func(v float64) float32 { return plotY + plotH - float32((v-ymin)/(ymax-ymin))*plotH }
	maxSeg := int(plotW/2) + 1
	for i, s := range c.series {
		n := len(s.X)
		step := 1
		if n > maxSeg && maxSeg > 0 {
			step = (n + maxSeg - 1) / maxSeg
		}
		used := 0
		for k := step; k < n; k += step {
			if used == len(r.lines[i]) {
				l := canvas.NewLine(s.Color)
				l.StrokeWidth = 2
				r.lines[i] = append(r.lines[i], l)
			}
			l := r.lines[i][used]
			l.StrokeColor = s.Color
			l.Position1 = fyne.NewPos(px(s.X[k-step]), py(s.Y[k-step]))
			l.Position2 = fyne.NewPos(px(s.X[k]), py(s.Y[k]))
			l.Hidden = false
			used++
		}
		for _, l := range r.lines[i][used:] {
			l.Hidden = true
		}
	}
}
