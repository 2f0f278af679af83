package watch

import (
	"fmt"
	"io"
	"strings"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/internal/plural"
)

// Marks and colours of the text output (colour only on a terminal).
var (
	sevMark  = map[gpu.Severity]string{gpu.SevError: "✖", gpu.SevWarning: "▲", gpu.SevInfo: "●", gpu.SevOK: "✔"}
	sevColor = map[gpu.Severity]string{gpu.SevError: "\x1b[1;31m", gpu.SevWarning: "\x1b[1;33m", gpu.SevInfo: "\x1b[1;36m", gpu.SevOK: "\x1b[1;32m"}
)

const (
	ansiReset = "\x1b[0m"
	ansiDim   = "\x1b[2m"
	ansiBold  = "\x1b[1m"
)

// Severity is how the verdict of a state reads: ok on a GPU, a warning on
// a starved one, information while setting up, idle, not a training or
// ended, an error on the CPU and when the process cannot be read.
func (s State) Severity() gpu.Severity {
	switch s {
	case StateGPU:
		return gpu.SevOK
	case StateStarved:
		return gpu.SevWarning
	case StateExited, StateUnknown, StateSettingUp, StateIdle, StateNotTraining:
		return gpu.SevInfo
	}
	return gpu.SevError
}

// Line is the report in one line, for a live watch: the time since the
// watch began, the process, the verdict, and its CPU and GPU use.
func (r Report) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] PID %d", fmtElapsed(r.ElapsedS), r.PID)
	if r.Command != "" {
		b.WriteString(" (" + r.Command + ")")
	}
	b.WriteString(": " + r.Verdict)
	var use []string
	if r.CPU.Measured {
		use = append(use, fmt.Sprintf("CPU %.0f %%", r.CPU.Percent))
	}
	if r.CPU.Threads > 0 {
		use = append(use, plural.Count(r.CPU.Threads, "thread"))
	}
	if n := len(r.Processes); n > 1 {
		use = append(use, plural.Count(n, "process"))
	}
	if len(use) > 0 && r.State != StateExited {
		b.WriteString(" · " + strings.Join(use, ", "))
	}
	return gpu.Sanitize(b.String())
}

func fmtElapsed(s float64) string {
	d := time.Duration(s * float64(time.Second)).Round(time.Second)
	m := int(d / time.Minute)
	return fmt.Sprintf("%d:%02d", m, int((d%time.Minute)/time.Second))
}

func colorer(color bool) func(code, s string) string {
	return func(code, s string) string {
		s = gpu.Sanitize(s)
		if !color {
			return s
		}
		return code + s + ansiReset
	}
}

// WriteText writes the report for a person: the verdict, each finding with
// its evidence and fix (as the doctor writes them), then the evidence.
func (r Report) WriteText(w io.Writer, color bool) error {
	c := colorer(color)
	var b strings.Builder
	b.WriteString(c(sevColor[r.State.Severity()], r.Verdict) + "\n")
	if r.Command != "" && r.State != StateExited {
		b.WriteString(c(ansiDim, fmt.Sprintf("PID %d: %s", r.PID, r.Command)) + "\n")
	}
	b.WriteString("\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return r.WriteDetails(w, color)
}

// WriteDetails writes what follows the verdict in WriteText: the findings
// with their evidence and fix, then the evidence.
func (r Report) WriteDetails(w io.Writer, color bool) error {
	c := colorer(color)
	var b strings.Builder
	const indent = "            "
	for _, f := range r.Findings {
		label := fmt.Sprintf("%s %-8s", sevMark[f.Severity], strings.ToUpper(string(f.Severity)))
		b.WriteString(c(sevColor[f.Severity], label) + "   " + c(ansiBold, f.Title) + "\n")
		for _, e := range f.Evidence {
			b.WriteString(indent + c(ansiDim, e) + "\n")
		}
		for i, s := range f.Fix {
			prefix := "  "
			if i == 0 {
				prefix = "Fix: "
			}
			if s.Text != "" {
				b.WriteString(indent + prefix + gpu.Sanitize(s.Text) + "\n")
			}
			if s.Command != "" {
				b.WriteString(indent + "  " + c(ansiBold, "$ "+s.Command) + "\n")
			}
		}
		b.WriteString("\n")
	}
	if len(r.Evidence) > 0 {
		b.WriteString("Evidence\n")
		for _, e := range r.Evidence {
			k, v, ok := strings.Cut(e, ": ")
			if !ok || strings.Contains(k, " ") {
				b.WriteString("  " + gpu.Sanitize(e) + "\n")
				continue
			}
			fmt.Fprintf(&b, "  %-10s %s\n", gpu.Sanitize(k), gpu.Sanitize(v))
		}
	}
	if r.Summary != nil && r.State != StateExited {
		b.WriteString("\n" + gpu.Sanitize(r.Summary.Text) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
