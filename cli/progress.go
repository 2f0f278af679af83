package cli

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// progressLine is one line of progress on a terminal, redrawn in place. It
// is cut to the terminal's width less two columns: a line that wraps (or
// that the terminal's "^C" echo makes wrap) cannot be erased in place, and
// its first row stayed on the screen as a stale copy of the epoch's line.
type progressLine struct {
	w       io.Writer
	columns func() int // the terminal's width; 0 or nil: 80
	shown   bool
	last    time.Time
}

// progressEvery is the least time between two redraws.
const progressEvery = 100 * time.Millisecond

// draw shows text in place of the line, at most every progressEvery unless
// force.
func (p *progressLine) draw(text string, force bool) {
	now := time.Now()
	if !force && p.shown && now.Sub(p.last) < progressEvery {
		return
	}
	p.last, p.shown = now, true
	// \r and erase-to-end-of-line: what the line held before goes.
	io.WriteString(p.w, "\r"+fitWidth(text, p.width()-2)+"\x1b[K")
}

// clear erases the line, so that the next text starts on a clean one.
func (p *progressLine) clear() {
	if p.shown {
		io.WriteString(p.w, "\r\x1b[K")
		p.shown = false
	}
}

func (p *progressLine) width() int {
	if p.columns != nil {
		if n := p.columns(); n > 0 {
			return n
		}
	}
	return 80
}

// fitWidth cuts s to at most n characters (each counts one column).
func fitWidth(s string, n int) string {
	if n < 1 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// stepBar is the progress of an epoch in words and a bar:
// "epoch 2/10 [████······] 47/85 loss 0.3040 acc 90.8% 1535 img/s ETA 27s"
// (a negative acc is left out: a detector has none).
func stepBar(epoch, epochs, step, steps int, loss, acc, ips float64, eta time.Duration) string {
	const width = 20
	done := 0
	if steps > 0 {
		done = min(width, width*step/steps)
	}
	bar := strings.Repeat("█", done) + strings.Repeat("·", width-done)
	accuracy := fmt.Sprintf(" acc %.1f%%", 100*acc)
	if acc < 0 { // a detector: no accuracy
		accuracy = ""
	}
	return fmt.Sprintf("epoch %d/%d [%s] %d/%d loss %.4f%s %.0f img/s ETA %s",
		epoch, epochs, bar, step, steps, loss, accuracy, ips, eta.Round(time.Second))
}
