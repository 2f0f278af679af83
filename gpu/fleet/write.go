package fleet

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"gpuwizard/gpu"
)

// Columns of the table, in order.
var columns = []string{"NODE", "READY", "GPUS", "DRIVER", "CUDA", "FRAMEWORKS", "VERDICT"}

// cells is a node's row of the table, sanitised (names and verdicts come
// from files and other machines).
func (n Node) cells() []string {
	ready := "no"
	if n.Ready {
		ready = "yes"
	}
	fw := strings.Join(n.Frameworks, ", ")
	if fw == "" {
		fw = "-"
	}
	return []string{flat(n.Node), ready, flat(GPUSummary(n.GPUs)), dash(n.Driver), dash(n.CUDA), flat(fw), flat(n.Verdict)}
}

// flat is s sanitised on one line: a report's line breaks and tabs would
// break the table's rows.
func flat(s string) string {
	return strings.Join(strings.Fields(gpu.Sanitize(s)), " ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return flat(s)
}

// GPUSummary counts the GPUs by name: "8× H100 80GB HBM3", "none".
func GPUSummary(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	var order []string
	count := map[string]int{}
	for _, n := range names {
		n = strings.TrimPrefix(n, "NVIDIA ")
		if count[n] == 0 {
			order = append(order, n)
		}
		count[n]++
	}
	parts := make([]string, len(order))
	for i, n := range order {
		parts[i] = strconv.Itoa(count[n]) + "× " + n
	}
	return strings.Join(parts, ", ")
}

// Headline is the report's first line: "Fleet: 3 of 10 nodes ready".
func (r Report) Headline() string {
	noun := "nodes"
	if r.Total == 1 {
		noun = "node"
	}
	if r.Ready {
		return fmt.Sprintf("Fleet: all %d %s ready for GPU training", r.Total, noun)
	}
	return fmt.Sprintf("Fleet: %d of %d %s ready for GPU training", r.Count, r.Total, noun)
}

// NodeCount is "1 node" or "7 nodes".
func NodeCount(n int) string {
	if n == 1 {
		return "1 node"
	}
	return strconv.Itoa(n) + " nodes"
}

// WriteText writes the headline, the problems grouped across nodes with
// their fixes, then the table; colour only when color is true.
func (r Report) WriteText(w io.Writer, color bool) error {
	var b strings.Builder
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return code + s + "\x1b[0m"
	}
	head := "\x1b[1;31m"
	if r.Ready {
		head = "\x1b[1;32m"
	}
	b.WriteString(paint(head, r.Headline()) + "\n\n")
	const indent = "             "
	for _, g := range r.Groups {
		mark, code := "✖", "\x1b[1;31m"
		if g.Severity == gpu.SevWarning {
			mark, code = "▲", "\x1b[1;33m"
		}
		label := fmt.Sprintf("%s %-9s", mark, NodeCount(g.Count)+":")
		b.WriteString(paint(code, label) + "  " + paint("\x1b[1m", flat(g.Title)) + "\n")
		b.WriteString(indent + paint("\x1b[2m", gpu.Sanitize(shortList(g.Nodes))) + "\n")
		for i, s := range g.Fix {
			prefix := "  "
			if i == 0 {
				prefix = "→ "
			}
			if s.Text != "" {
				b.WriteString(indent + prefix + gpu.Sanitize(s.Text) + "\n")
			}
			if s.Command != "" {
				b.WriteString(indent + "    " + paint("\x1b[1m", "$ "+gpu.Sanitize(s.Command)) + "\n")
			}
		}
		b.WriteString("\n")
	}
	rows := [][]string{columns}
	for _, n := range r.Nodes {
		rows = append(rows, n.cells())
	}
	writeTable(&b, rows)
	_, err := io.WriteString(w, b.String())
	return err
}

// shortList is the nodes' hostlist cut at a name near 150 bytes, with how
// many more there are: the table below names each one.
func shortList(nodes []string) string {
	s := Hostlist(nodes)
	if len(s) <= 150 {
		return s
	}
	cut := strings.LastIndexByte(s[:150], ',')
	if cut < 0 {
		cut = 150
	}
	if open := strings.LastIndexByte(s[:cut], '['); open > strings.LastIndexByte(s[:cut], ']') {
		s = s[:cut] + ",…]"
	} else {
		s = s[:cut] + ",…"
	}
	return fmt.Sprintf("%s (%d nodes in all)", s, len(nodes))
}

// writeTable aligns rows in columns two spaces apart; the last column is
// not padded.
func writeTable(b *strings.Builder, rows [][]string) {
	width := make([]int, len(columns))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, row := range rows {
		for i, c := range row {
			if i == len(row)-1 {
				b.WriteString(c + "\n")
				break
			}
			b.WriteString(c + strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)+2))
		}
	}
}

// WriteMarkdown writes the report for an issue or a wiki page.
func (r Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("## gpuwizard fleet\n\n**" + r.Headline() + "**\n\n")
	if len(r.Groups) > 0 {
		b.WriteString("### Problems across nodes\n\n")
	}
	for _, g := range r.Groups {
		fmt.Fprintf(&b, "- **%s: %s** (`%s`)  \n  %s\n", NodeCount(g.Count), mdCell(g.Title), g.ID, mdCell(shortList(g.Nodes)))
		for _, s := range g.Fix {
			if s.Text != "" {
				b.WriteString("  - " + mdCell(s.Text) + "\n")
			}
			if s.Command != "" {
				b.WriteString("    `" + strings.ReplaceAll(gpu.Sanitize(s.Command), "`", "'") + "`\n")
			}
		}
	}
	b.WriteString("\n| " + strings.Join(columns, " | ") + " |\n|" + strings.Repeat(" --- |", len(columns)) + "\n")
	for _, n := range r.Nodes {
		cells := n.cells()
		for i := range cells {
			cells[i] = mdCell(cells[i])
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCell escapes what would break a Markdown table cell or line.
func mdCell(s string) string {
	s = gpu.Sanitize(s)
	s = strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "<", "&lt;").Replace(s)
	return s
}

// CSVHeader is the first line of WriteCSV.
var CSVHeader = []string{"node", "state", "ready", "gpus", "gpu_count", "driver", "cuda", "frameworks", "verdict", "findings"}

// WriteCSV writes a line per node, for a spreadsheet: the findings are the
// IDs of its errors and warnings, separated by spaces. A cell that a
// spreadsheet would run as a formula starts with a quote.
func (r Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, n := range r.Nodes {
		var ids []string
		for _, f := range n.Findings {
			if f.Severity == gpu.SevError || f.Severity == gpu.SevWarning {
				ids = append(ids, f.ID)
			}
		}
		row := []string{n.Node, n.State, strconv.FormatBool(n.Ready), GPUSummary(n.GPUs), strconv.Itoa(len(n.GPUs)),
			n.Driver, n.CUDA, strings.Join(n.Frameworks, "; "), n.Verdict, strings.Join(ids, " ")}
		for i := range row {
			row[i] = csvCell(row[i])
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvCell defuses a cell a spreadsheet would evaluate (=, +, -, @ first).
func csvCell(s string) string {
	s = gpu.Sanitize(s)
	if s != "" && strings.ContainsRune("=+-@", rune(s[0])) {
		return "'" + s
	}
	return s
}

// WriteJSON writes {"ready", "total", "ready_count", "nodes", "groups"}.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
