package app

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// crumb is one step of the breadcrumbs: text that goes to its step when
// tapped, while that step can be reached from here (a hand cursor says
// so); otherwise it is plain, greyed text.
type crumb struct {
	widget.Label
	step  int
	onTap func(step int)
	live  bool // tapping navigates
}

var (
	_ fyne.Tappable      = (*crumb)(nil)
	_ desktop.Cursorable = (*crumb)(nil)
)

func newCrumb(text string, step int, onTap func(int)) *crumb {
	c := &crumb{step: step, onTap: onTap}
	c.Text = text
	c.ExtendBaseWidget(c)
	return c
}

// Tapped implements fyne.Tappable.
func (c *crumb) Tapped(*fyne.PointEvent) {
	if c.live && c.onTap != nil {
		c.onTap(c.step)
	}
}

// Cursor implements desktop.Cursorable.
func (c *crumb) Cursor() desktop.Cursor {
	if c.live {
		return desktop.PointerCursor
	}
	return desktop.DefaultCursor
}

// set shows the crumb as the current step (bold, highlighted), a step
// that can be reached (normal text, tappable), or one that cannot yet
// (greyed).
func (c *crumb) set(current, live bool) {
	c.live = live && !current
	c.TextStyle = fyne.TextStyle{Bold: current}
	switch {
	case current:
		c.Importance = widget.HighImportance
	case c.live:
		c.Importance = widget.MediumImportance
	default:
		c.Importance = widget.LowImportance
	}
	c.Refresh()
}
