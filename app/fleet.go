package app

import (
	"fmt"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"gpuwizard/gpu"
	"gpuwizard/gpu/fleet"
)

// fleetView shows a fleet report (gpuwizard fleet slurm|k8s|merge --json):
// the headline, the problems grouped across nodes with their fixes, a row
// per node, and the findings of the node chosen in the table.
type fleetView struct {
	wz       *wizard
	report   fleet.Report
	openBtn  *widget.Button
	source   *widget.Label
	headline *widget.Label
	groups   *fyne.Container
	table    *widget.Table
	node     *widget.Label
	findings *fyne.Container
	content  fyne.CanvasObject
}

// fleetColumns are the table's columns, as the command line prints them.
var fleetColumns = []column{{"Node", 120}, {"Ready", 60}, {"GPUs", 170}, {"Driver", 90}, {"CUDA", 55},
	{"Frameworks", 170}, {"Verdict", 600}}

func newFleetView(wz *wizard) *fleetView {
	v := &fleetView{wz: wz}
	v.openBtn = widget.NewButtonWithIcon("Open a fleet report…", theme.FolderOpenIcon(), v.pick)
	hint := widget.NewLabel("Every GPU node of a cluster in one table, from: gpuwizard fleet slurm --json > fleet.json (or k8s --run, merge)")
	hint.Wrapping = fyne.TextWrapWord
	v.source = widget.NewLabel("No fleet report opened.")
	v.source.TextStyle = fyne.TextStyle{Italic: true}
	v.headline = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.headline.Wrapping = fyne.TextWrapWord
	v.groups = container.NewVBox()
	v.table = textTable(fleetColumns, func() int { return len(v.report.Nodes) }, v.cell)
	v.table.OnSelected = func(id widget.TableCellID) { v.showNode(id.Row) }
	v.node = widget.NewLabelWithStyle("Choose a node in the table to see its findings.", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.node.Wrapping = fyne.TextWrapWord
	v.findings = container.NewVBox()
	nodeBox := container.NewBorder(v.node, nil, nil, nil, container.NewVScroll(v.findings))
	groupsHead := widget.NewLabelWithStyle("Problems across nodes, one fix each", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	groupBox := container.NewBorder(groupsHead, nil, nil, nil, container.NewVScroll(v.groups))
	lower := container.NewHSplit(groupBox, nodeBox)
	split := container.NewVSplit(v.table, lower)
	split.Offset = 0.4
	top := container.NewVBox(container.NewBorder(nil, nil, v.openBtn, nil, hint), v.source, v.headline)
	v.content = container.NewBorder(top, nil, nil, nil, split)
	return v
}

// pick asks for a fleet report and opens it.
func (v *fleetView) pick() {
	if v.wz.deps.PickFile == nil {
		return
	}
	v.wz.deps.PickFile(v.wz.win, func(p string) {
		if p != "" {
			v.open(p)
		}
	})
}

// open reads the report in the background and shows it.
func (v *fleetView) open(path string) {
	v.wz.background(func() {
		r, err := fleet.LoadReport(path)
		v.wz.ui(func() { v.show(filepath.Base(path), r, err) })
	})
}

func (v *fleetView) show(name string, r fleet.Report, err error) {
	v.groups.RemoveAll()
	v.findings.RemoveAll()
	v.table.UnselectAll()
	if err != nil {
		v.report = fleet.Report{}
		v.source.SetText("Opening " + name + " failed")
		v.headline.SetText(err.Error())
		v.headline.Importance = widget.DangerImportance
		v.headline.Refresh()
		v.table.Refresh()
		return
	}
	v.report = r
	v.source.SetText(fmt.Sprintf("Fleet report %s: %s, %s", name, fleet.NodeCount(r.Total), groupCount(len(r.Groups))))
	v.headline.SetText(r.Headline())
	v.node.SetText("Choose a node in the table to see its findings.")
	v.headline.Importance = widget.DangerImportance
	if r.Ready {
		v.headline.Importance = widget.SuccessImportance
	}
	v.headline.Refresh()
	for _, g := range r.Groups {
		v.groups.Add(findingCard(gpu.Finding{ID: g.ID, Cause: g.Cause, Severity: g.Severity,
			Title:    fleet.NodeCount(g.Count) + ": " + g.Title,
			Evidence: []string{fleet.Hostlist(g.Nodes)}, Fix: g.Fix}, v.later))
	}
	v.table.Refresh()
}

func groupCount(n int) string {
	switch n {
	case 0:
		return "no problem shared by nodes"
	case 1:
		return "1 problem across nodes"
	}
	return fmt.Sprintf("%d problems across nodes", n)
}

// cell is the text of one cell of the table.
func (v *fleetView) cell(row, col int) string {
	n := v.report.Nodes[row]
	ready := "no"
	if n.Ready {
		ready = "yes"
	}
	return []string{n.Node, ready, fleet.GPUSummary(n.GPUs), orDash(n.Driver), orDash(n.CUDA),
		orDash(strings.Join(n.Frameworks, ", ")), n.Verdict}[col]
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// showNode shows the findings of the row-th node.
func (v *fleetView) showNode(row int) {
	if row < 0 || row >= len(v.report.Nodes) {
		return
	}
	n := v.report.Nodes[row]
	v.node.SetText(n.Node + ": " + n.Verdict)
	v.findings.RemoveAll()
	for _, f := range n.Findings {
		v.findings.Add(findingCard(f, v.later))
	}
}

// later runs f on the UI goroutine two seconds from now (the copy
// buttons' "Copied"), as the Check tab does.
func (v *fleetView) later(f func()) { v.wz.check.later(f) }
