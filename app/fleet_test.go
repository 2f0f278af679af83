package app

import (
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// TestFleetTab opens a fleet report (testdata/fleet.json: gpuwizard fleet
// merge --json of six nodes) in the Check step's Fleet tab: the headline,
// the problems across nodes, the table, and a node's findings once chosen.
func TestFleetTab(t *testing.T) {
	pick := "testdata/fleet.json"
	wz, loop := newTestWizard(t, Deps{PickFile: func(_ fyne.Window, done func(string)) { done(pick) }})
	fv := wz.fleet
	loop.do(func() {
		wz.win.Resize(fyne.NewSize(1024, 700))
		wz.checkTab.SelectIndex(2)
	})
	loop.do(func() { test.Tap(fv.openBtn) })
	wz.wg.Wait()
	loop.do(func() {
		if fv.headline.Text != "Fleet: 1 of 6 nodes ready for GPU training" || fv.headline.Importance != widget.DangerImportance {
			t.Errorf("headline %q", fv.headline.Text)
		}
		if fv.source.Text != "Fleet report fleet.json: 6 nodes, 4 problems across nodes" {
			t.Errorf("source %q", fv.source.Text)
		}
		if len(fv.groups.Objects) != 4 {
			t.Errorf("%d group cards, want 4", len(fv.groups.Objects))
		}
		if got := fv.cell(1, 0) + " " + fv.cell(1, 1) + " " + fv.cell(1, 3); got != "gpu02 no 550.54.15" {
			t.Errorf("row 1: %q", got)
		}
		fv.table.Select(widget.TableCellID{Row: 1, Col: 0})
		if !strings.HasPrefix(fv.node.Text, "gpu02: Not ready: The driver is too old") || len(fv.findings.Objects) == 0 {
			t.Errorf("chosen node %q, %d findings", fv.node.Text, len(fv.findings.Objects))
		}
		assertImage(t, "fleet.png", wz.win.Canvas().Capture())
	})
	pick = filepath.Join("testdata", "dgxa100-root", "etc", "os-release")
	loop.do(func() { test.Tap(fv.openBtn) })
	wz.wg.Wait()
	loop.do(func() {
		if fv.source.Text != "Opening os-release failed" || !strings.Contains(fv.headline.Text, "not a fleet report") ||
			len(fv.report.Nodes) != 0 || len(fv.groups.Objects) != 0 {
			t.Errorf("a file that is no fleet report: %q %q, %d nodes", fv.source.Text, fv.headline.Text, len(fv.report.Nodes))
		}
	})
}
