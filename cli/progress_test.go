package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"gpuwizard/trainer"
)

// screen renders what a terminal of the given width shows for out: \r,
// \n, erase to the end of the line (ESC [K) and wrapping past the width.
func screen(out string, width int) []string {
	lines := [][]rune{nil}
	row, col := 0, 0
	for i := 0; i < len(out); {
		if strings.HasPrefix(out[i:], "\x1b[K") {
			if col < len(lines[row]) {
				lines[row] = lines[row][:col]
			}
			i += 3
			continue
		}
		r, n := utf8.DecodeRuneInString(out[i:])
		i += n
		switch r {
		case '\r':
			col = 0
		case '\n':
			row, col = row+1, 0
		default:
			if col == width {
				row, col = row+1, 0
				lines = append(lines, nil)
			}
			for len(lines[row]) < col {
				lines[row] = append(lines[row], ' ')
			}
			if col < len(lines[row]) {
				lines[row][col] = r
			} else {
				lines[row] = append(lines[row], r)
			}
			col++
		}
		for len(lines) <= row {
			lines = append(lines, nil)
		}
	}
	var s []string
	for _, l := range lines {
		if t := strings.TrimRight(string(l), " "); t != "" {
			s = append(s, t)
		}
	}
	return s
}

// On a terminal the progress line never wraps (it is cut to the width,
// with room for the terminal's ^C echo) and is erased before any other
// line: after a stop, no stale copy of the epoch's progress stays on the
// screen, and each epoch's line is there once.
func TestShowOnANarrowTerminal(t *testing.T) {
	const width = 60
	var errb bytes.Buffer
	env := Env{Stdout: io.Discard, Stderr: &errb, Terminal: true, Columns: func() int { return width }}
	events := make(chan trainer.Event, 64)
	events <- trainer.Event{Kind: trainer.EventStart, Device: "cpu", DeviceReason: "asked for", Message: "mlp on builtin", RunDir: "runs/train"}
	step := func(epoch, s int) trainer.Event {
		return trainer.Event{Kind: trainer.EventStep, Epoch: epoch, Epochs: 3, Step: s, Steps: 10, Loss: 0.5, Accuracy: 0.9, ImagesPerSec: 15000, ETA: 27 * time.Second}
	}
	for s := 1; s <= 10; s++ {
		events <- step(1, s)
	}
	events <- trainer.Event{Kind: trainer.EventEpoch, Epoch: 1, Epochs: 3, Loss: 0.5, Accuracy: 0.9, ValLoss: 0.4, ValAccuracy: 0.91, LR: 1e-3, Best: true}
	for s := 1; s <= 6; s++ {
		events <- step(2, s)
	}
	events <- trainer.Event{Kind: trainer.EventDone, Message: "stopped; resume with: gpuwizard train --resume runs/x"}
	close(events)
	show(events, env, false, false)

	out := errb.String()
	for _, seg := range strings.Split(out, "\r") {
		if strings.HasPrefix(seg, "epoch ") && strings.Contains(seg, "[") {
			if n := utf8.RuneCountInString(strings.TrimSuffix(seg, "\x1b[K")); n > width-2 {
				t.Errorf("a progress line of %d characters on a %d-column terminal: %q", n, width, seg)
			}
		}
	}
	lines := screen(out, width)
	var epochLines int
	for _, l := range lines {
		if strings.HasPrefix(l, "epoch 2/3 [") || strings.HasPrefix(l, "epoch 1/3 [") {
			t.Errorf("a stale progress line stays on the screen: %q\n%s", l, strings.Join(lines, "\n"))
		}
		if strings.HasPrefix(l, "epoch 1/3  train loss") {
			epochLines++
		}
	}
	if epochLines != 1 || lines[len(lines)-1] != "train: stopped; resume with: gpuwizard train --resume runs/x" {
		t.Errorf("the screen after a stop:\n%s", strings.Join(lines, "\n"))
	}
}

func TestFitWidth(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{{"epoch 1/3", 20, "epoch 1/3"}, {"epoch 1/3 [███]", 12, "epoch 1/3 […"}, {"abc", 0, ""}, {"abc", 3, "abc"}} {
		if got := fitWidth(c.in, c.n); got != c.want {
			t.Errorf("fitWidth(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
