package gpu

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// severity marks for text output.
var sevMark = map[Severity]string{SevError: "✖", SevWarning: "▲", SevInfo: "●", SevOK: "✔"}

// ANSI colours, used only when writing to a terminal.
var sevColor = map[Severity]string{SevError: "\x1b[1;31m", SevWarning: "\x1b[1;33m", SevInfo: "\x1b[1;36m", SevOK: "\x1b[1;32m"}

const (
	ansiReset = "\x1b[0m"
	ansiDim   = "\x1b[2m"
	ansiBold  = "\x1b[1m"
)

// WriteText writes the report for a person: the verdict, then each finding
// with its evidence and fix, aligned; colour only when color is true.
func (r Report) WriteText(w io.Writer, color bool) error {
	// Every text is sanitized: facts may come from a file or a paste, and
	// nothing in them may drive the terminal.
	c := func(code, s string) string {
		s = Sanitize(s)
		if !color {
			return s
		}
		return code + s + ansiReset
	}
	var b strings.Builder
	verdictColor := sevColor[SevError]
	if r.Ready {
		verdictColor = sevColor[SevOK]
	}
	b.WriteString(c(verdictColor, r.Verdict) + "\n\n")
	const indent = "            "
	prompt, _ := r.shell()
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
				b.WriteString(indent + prefix + Sanitize(s.Text) + "\n")
			}
			if s.Command != "" {
				b.WriteString(indent + "  " + c(ansiBold, prompt+s.Command) + "\n")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString(Sanitize(r.Facts.Summary()))
	_, err := io.WriteString(w, b.String())
	return err
}

// shell is the prompt the text shows before a fix's command, and the
// Markdown language of its code block: PowerShell's on Windows (its fixes
// are PowerShell commands), a POSIX shell's elsewhere.
func (r Report) shell() (prompt, lang string) {
	if r.Facts != nil && r.Facts.Host.OS == "windows" {
		return "PS> ", "powershell"
	}
	return "$ ", "sh"
}

// WriteMarkdown writes the report for an issue or a forum post.
func (r Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	_, lang := r.shell()
	b.WriteString("## gpuwizard doctor\n\n**" + r.Verdict + "**\n\n")
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "### %s %s: %s\n\n", sevMark[f.Severity], f.Severity, f.Title)
		fmt.Fprintf(&b, "`%s` · cause `%s`\n\n", f.ID, f.Cause)
		if len(f.Evidence) > 0 {
			b.WriteString("Evidence:\n\n```\n" + strings.Join(f.Evidence, "\n") + "\n```\n\n")
		}
		if len(f.Fix) > 0 {
			b.WriteString("Fix:\n\n")
			for i, s := range f.Fix {
				if s.Text != "" {
					fmt.Fprintf(&b, "%d. %s\n", i+1, s.Text)
				} else {
					fmt.Fprintf(&b, "%d.\n", i+1)
				}
				if s.Command != "" {
					b.WriteString("   ```" + lang + "\n   " + s.Command + "\n   ```\n")
				}
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("<details><summary>Facts</summary>\n\n```\n" + r.Facts.Summary() + "```\n</details>\n")
	_, err := io.WriteString(w, Sanitize(b.String()))
	return err
}

// WriteJSON writes {"ready", "verdict", "findings", "facts"}.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Summary is a short text of the facts: what was found, source by source.
func (f *Facts) Summary() string {
	if f == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("Facts\n")
	row := func(k, v string) { fmt.Fprintf(&b, "  %-14s %s\n", k, v) }
	host := f.Host.OS
	if host == "" {
		host = "unknown"
	}
	if f.Host.Arch != "" {
		host += "/" + f.Host.Arch
	}
	if f.Host.DistroName != "" {
		host += ", " + f.Host.DistroName
	}
	if f.Host.Kernel != "" {
		host += ", kernel " + f.Host.Kernel
	}
	if f.Host.WSL > 0 {
		host += fmt.Sprintf(", WSL %d", f.Host.WSL)
	}
	if f.Host.Container != "" {
		host += ", container " + f.Host.Container
	}
	row("system", host)
	var pci []string
	for _, d := range f.PCI {
		if d.IsGPU() {
			pci = append(pci, fmt.Sprintf("%s %s (driver %s)", d.Address, d.Device, OrUnknown(d.Driver)))
		}
	}
	if len(pci) > 0 {
		row("PCI", strings.Join(pci, "; "))
	} else if st, ok := f.Source("pci"); ok && st.OK {
		row("PCI", "no NVIDIA GPU") // when it could not be read, "unanswered" says why
	}
	nv := f.NVML.Status
	if f.NVML.DriverVersion != "" {
		nv = fmt.Sprintf("driver %s, CUDA %s", f.NVML.DriverVersion, f.NVML.CUDADriverVersion)
	}
	if nv != "" {
		row("NVML", nv)
	}
	if len(f.Driver.Modules) > 0 {
		row("modules", strings.Join(f.Driver.Modules, " "))
	}
	for _, g := range f.NVML.GPUs {
		row(fmt.Sprintf("GPU %d", g.Index), fmt.Sprintf("%s, CC %s, %d/%d MiB used", g.Name, g.CC, g.MemoryUsedMiB, g.MemoryTotalMiB))
	}
	for _, r := range f.Windows.summaryRows(f.NVML.GPUs) {
		row(r[0], r[1])
	}
	var kits []string
	for _, t := range f.CUDA.Toolkits {
		kits = append(kits, OrUnknown(t.Version)+" at "+t.Path)
	}
	if len(kits) > 0 {
		row("CUDA toolkits", strings.Join(kits, "; "))
	}
	libs := map[string]bool{}
	var libList []string
	for _, l := range f.CUDA.Libraries {
		s := l.Soname
		if l.Version != "" && l.Version != SoVersion(l.Soname) {
			s += " (" + l.Version + ")"
		}
		if !libs[s] {
			libs[s] = true
			libList = append(libList, s)
		}
	}
	if len(libList) > 0 {
		row("libraries", strings.Join(libList, ", "))
	}
	for _, e := range f.Env {
		if e.Set && (strings.HasPrefix(e.Name, "CUDA_") || e.Name == "NVIDIA_VISIBLE_DEVICES") {
			row(e.Name, quoteValue(e.Value))
		}
	}
	var bare []string
	for _, e := range f.Pythons {
		if len(e.Commands) == 0 && len(e.Packages) == 0 {
			bare = append(bare, e.Interpreter)
			continue
		}
		var pk []string
		for _, p := range e.Packages {
			if !strings.HasPrefix(p.Name, "nvidia-") && !p.Shadowed {
				pk = append(pk, p.Name+" "+p.Version)
			}
		}
		desc := e.Kind + " " + e.Version
		if len(e.Commands) > 0 {
			desc += " ← " + strings.Join(e.Commands, ", ")
		}
		if len(pk) > 0 {
			desc += ": " + strings.Join(pk, ", ")
		} else {
			desc += ": no framework"
		}
		row("python", e.Interpreter+" ("+desc+")")
	}
	if len(bare) > 0 {
		row("python", fmt.Sprintf("%d more without frameworks: %s", len(bare), strings.Join(bare, ", ")))
	}
	var slow []string
	for _, s := range f.Sources {
		if !s.OK {
			slow = append(slow, s.Name+": "+s.Error)
		}
	}
	if len(slow) > 0 {
		row("unanswered", strings.Join(slow, "; "))
	}
	for _, s := range f.Skipped {
		row("skipped", s.Reason)
	}
	return b.String()
}

// quoteValue shows an environment value in double quotes, escaped (Go's
// way) only when it holds a quote or what a terminal would not show: a
// Windows path keeps its single backslashes.
func quoteValue(v string) string {
	if strings.ContainsRune(v, '"') || strings.IndexFunc(v, func(r rune) bool { return !strconv.IsPrint(r) }) >= 0 {
		return strconv.Quote(v)
	}
	return `"` + v + `"`
}
