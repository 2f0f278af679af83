// Package corpus reads the real reports kept under gpu/testdata/corpus:
// each file has a header (its source URL, the root cause the thread
// settled, a sentence on how, the formats it holds), a line "---", then
// the text as it was pasted.
package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gpuwizard/gpu"
)

// Report is one real report.
type Report struct {
	Name    string // file name without .txt
	Part    string // "tuning" or "heldout"
	Source  string // the thread's URL
	Cause   gpu.Cause
	Settled string
	Formats []string
	Text    string // as pasted, CRLF kept
}

// Load reads every report of part ("tuning", "heldout") under dir.
func Load(dir, part string) ([]Report, error) {
	files, err := filepath.Glob(filepath.Join(dir, part, "*.txt"))
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("corpus: no reports in %s", filepath.Join(dir, part))
	}
	var out []Report
	for _, file := range files {
		r, err := parse(file)
		if err != nil {
			return nil, err
		}
		r.Part = part
		out = append(out, r)
	}
	return out, nil
}

func parse(file string) (Report, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return Report{}, fmt.Errorf("corpus: %w", err)
	}
	s := string(b)
	head, body, ok := strings.Cut(s, "\n---\n")
	if !ok {
		head, body, ok = strings.Cut(s, "\r\n---\r\n")
	}
	if !ok {
		return Report{}, fmt.Errorf("corpus: %s: no --- line after the header", file)
	}
	r := Report{Name: strings.TrimSuffix(filepath.Base(file), ".txt"), Text: body}
	for _, line := range strings.Split(strings.ReplaceAll(head, "\r\n", "\n"), "\n") {
		k, v, _ := strings.Cut(strings.TrimPrefix(line, "# "), ": ")
		v = strings.TrimSpace(v)
		switch k {
		case "source":
			r.Source = v
		case "expected-cause":
			r.Cause = gpu.Cause(v)
		case "settled":
			r.Settled = v
		case "formats":
			for _, f := range strings.Split(v, ",") {
				if f = strings.TrimSpace(f); f != "" {
					r.Formats = append(r.Formats, f)
				}
			}
		}
	}
	if !strings.HasPrefix(r.Source, "https://") || !slices.Contains(gpu.Causes, r.Cause) {
		return Report{}, fmt.Errorf("corpus: %s: the header needs a source URL and a known expected-cause", file)
	}
	return r, nil
}
