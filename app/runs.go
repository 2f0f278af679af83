package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"gpuwizard/internal/plural"
	"gpuwizard/trainer"
)

// runsView is the page that lists every run: those under the window's runs
// folder and those the run index lists (gpuwizard train's ./runs/NAME,
// wherever it ran), reached from any step with the Runs button and left
// with Back. Choosing a run shows its actions; Show results opens it in
// the Results step.
type runsView struct {
	wz      *wizard
	where   *widget.Label
	note    *widget.Label
	table   *widget.Table
	runs    []trainer.RunInfo // UI goroutine only
	sel     int               // the chosen row; -1 none
	chosen  *widget.Label
	buttons map[string]*widget.Button
	gen     int
	content fyne.CanvasObject
}

// runColumns are the Runs table's columns.
var runColumns = []column{{"Run", 90}, {"Folder", 180}, {"Status", 210}, {"Dataset", 130}, {"Model", 60}, {"Device", 70}, {"Best accuracy", 150}, {"Updated", 130}}

func newRunsView(wz *wizard) *runsView {
	v := &runsView{wz: wz, sel: -1, buttons: map[string]*widget.Button{}}
	v.where = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.where.Wrapping = fyne.TextWrapWord
	v.note = widget.NewLabel("")
	v.note.Wrapping = fyne.TextWrapWord
	v.chosen = widget.NewLabel("Choose a run in the table.")
	v.chosen.Wrapping = fyne.TextWrapWord
	v.table = textTable(runColumns, func() int { return len(v.runs) }, func(row, col int) string { return runCell(v.runs[row], col) })
	v.table.OnSelected = func(id widget.TableCellID) { v.choose(id.Row) }
	more, count := wz.moreEpochs(v.again)
	v.buttons["more"] = more
	add := func(key, label string, icon fyne.Resource, f func()) *widget.Button {
		b := widget.NewButtonWithIcon(label, icon, f)
		v.buttons[key] = b
		return b
	}
	results := add("results", "Show results", theme.VisibilityIcon(), v.openResults)
	results.Importance = widget.HighImportance
	actions := container.NewHBox(results,
		add("resume", "Resume", theme.MediaPlayIcon(), func() { v.again(0) }),
		more, count,
		add("export", "Export…", theme.UploadIcon(), func() {
			if r := v.current(); r != nil {
				wz.exportRun(r.Dir, v.note.SetText)
			}
		}),
		add("delete", "Delete…", theme.DeleteIcon(), func() {
			if r := v.current(); r != nil {
				wz.deleteRun(r.Dir, func() {
					v.note.SetText("Deleted " + r.Dir)
					v.reload()
				})
			}
		}),
		add("folder", "Open folder", theme.FolderOpenIcon(), func() {
			if r := v.current(); r != nil {
				wz.openFolder(r.Dir)
			}
		}))
	refresh := widget.NewButtonWithIcon("Refresh", theme.ViewRefreshIcon(), v.reload)
	top := container.NewVBox(container.NewBorder(nil, nil, nil, refresh, v.where), v.note)
	bottom := container.NewVBox(widget.NewSeparator(), v.chosen, container.NewHScroll(actions))
	v.content = container.NewBorder(top, bottom, nil, nil, v.table)
	v.setButtons()
	return v
}

// runCell is the text of one cell of the Runs table.
func runCell(r trainer.RunInfo, col int) string {
	switch col {
	case 0:
		return r.Name
	case 1:
		return shortPath(homeRel(filepath.Dir(r.Dir)), 26)
	case 2:
		if r.Err != "" && r.Status == "" {
			return "unreadable: " + r.Err
		}
		return r.Status
	case 3:
		if r.Data == "builtin" {
			return "built-in digits"
		}
		return filepath.Base(r.Data)
	case 4:
		return r.Model
	case 5:
		return strings.ToUpper(r.Device)
	case 6:
		if r.BestAcc < 0 {
			return "—"
		}
		return fmt.Sprintf("%.2f%%, epoch %d", 100*r.BestAcc, r.BestEpoch)
	case 7:
		if r.Updated.IsZero() {
			return ""
		}
		return r.Updated.Local().Format("2006-01-02 15:04")
	}
	return ""
}

// homeRel writes a path under the home folder as ~/…, shorter in a
// table.
func homeRel(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return p
	}
	if rel, err := filepath.Rel(home, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		if rel == "." {
			return "~"
		}
		return filepath.Join("~", rel)
	}
	return p
}

// shortPath keeps the end of a long path, where the folders that tell
// runs apart are ("…/yolo/runs"), within about max characters; the whole
// path shows when the run is chosen.
func shortPath(p string, max int) string {
	if len([]rune(p)) <= max {
		return p
	}
	parts := strings.Split(p, string(filepath.Separator))
	out := parts[len(parts)-1]
	for i := len(parts) - 2; i > 0 && len([]rune(out))+len([]rune(parts[i]))+3 <= max; i-- {
		out = parts[i] + string(filepath.Separator) + out
	}
	return "…" + string(filepath.Separator) + out
}

// enter lists the runs again.
func (v *runsView) enter() { v.reload() }

// listAll lists the project's runs and those of the run index (index ""
// none), newest first. The index's problem is told apart: it hides only
// the runs made elsewhere.
func listAll(list func(string) ([]trainer.RunInfo, error), project, index string) (runs []trainer.RunInfo, err, indexErr error) {
	runs, err = list(project)
	if index == "" {
		return runs, err, nil
	}
	more, indexErr := trainer.ListIndexedRuns(index, runs)
	runs = append(runs, more...)
	trainer.SortRuns(runs)
	return runs, err, indexErr
}

// reload reads the runs folder and the run index in the background.
func (v *runsView) reload() {
	project, index := v.wz.cfg.Project, v.wz.deps.RunIndex
	where := "Runs in " + project
	if index != "" {
		where += ", and those gpuwizard train made in other folders"
	}
	v.where.SetText(where)
	v.gen++
	gen := v.gen
	v.wz.background(func() {
		runs, err, indexErr := listAll(v.wz.deps.ListRuns, project, index)
		v.wz.ui(func() {
			if gen != v.gen {
				return
			}
			keep := "" // the run chosen before, else the one on the Results step
			if r := v.current(); r != nil {
				keep = r.Dir
			} else if res := v.wz.result; res != nil {
				keep = res.RunDir
			}
			v.runs, v.sel = runs, -1
			v.table.UnselectAll()
			v.table.Refresh()
			var note string
			switch {
			case err != nil:
				note = "The runs folder could not be read: " + err.Error()
			case len(runs) == 0:
				note = "No runs yet: train a model (Dataset → Settings → Train) and it is kept here."
			default:
				note = fmt.Sprintf("%s, newest first. Choose one, then Show results, Resume, Train more epochs, Export, Delete or Open folder.", plural.Count(len(runs), "run"))
			}
			if indexErr != nil {
				note += "\nRuns made in other folders are not listed: " + indexErr.Error()
			}
			v.note.SetText(note)
			for i, r := range runs {
				if r.Dir == keep {
					v.table.Select(widget.TableCellID{Row: i, Col: 0})
				}
			}
			v.setButtons()
		})
	})
}

// choose makes row i the chosen run.
func (v *runsView) choose(i int) {
	if i < 0 || i >= len(v.runs) {
		return
	}
	v.sel = i
	r := v.runs[i]
	text := r.Name + " (" + r.Dir + "): " + r.Status
	if r.Err != "" {
		text += " (" + r.Err + ")"
	}
	v.chosen.SetText(text)
	v.setButtons()
}

func (v *runsView) current() *trainer.RunInfo {
	if v.sel < 0 || v.sel >= len(v.runs) {
		return nil
	}
	return &v.runs[v.sel]
}

// setButtons enables the actions the chosen run allows.
func (v *runsView) setButtons() {
	r := v.current()
	training := v.wz.train.running()
	on := map[string]bool{}
	if r != nil {
		on["results"] = r.State != trainer.RunEmpty && r.State != trainer.RunRunning
		on["resume"] = r.CanResume && !training
		on["more"] = r.CanExtend && !training && r.State != trainer.RunRunning
		on["export"] = r.State != trainer.RunRunning && r.State != trainer.RunEmpty
		on["delete"] = r.State != trainer.RunRunning
		on["folder"] = true
	} else {
		v.chosen.SetText("Choose a run in the table.")
	}
	for k, b := range v.buttons {
		if on[k] {
			b.Enable()
		} else {
			b.Disable()
		}
	}
}

// openResults shows the chosen run in the Results step.
func (v *runsView) openResults() {
	r := v.current()
	if r == nil {
		return
	}
	v.wz.openRun(*r)
}

// again resumes (extra 0) or extends the chosen run in the Train step.
func (v *runsView) again(extra int) {
	r := v.current()
	if r == nil || v.wz.train.running() {
		return
	}
	v.wz.resume = trainer.Options{Resume: r.Dir, Extend: extra}
	v.wz.cfg.Epochs = r.Epochs + extra
	v.wz.show(3)
	v.wz.train.begin()
}

// moreEpochs is the "Train more epochs: [5]" button and its number, in the
// Runs view and the Results step: the button calls again with the number
// (1 to 10000), or says in the status line what is wrong with it.
func (wz *wizard) moreEpochs(again func(int)) (*widget.Button, fyne.CanvasObject) {
	n := widget.NewEntry()
	n.SetText("5")
	n.Validator = intValidator("epochs", 1, 10000)
	b := widget.NewButtonWithIcon("Train more epochs:", theme.ContentAddIcon(), func() {
		if err := n.Validate(); err != nil {
			wz.fail(err.Error())
			return
		}
		k, _ := strconv.Atoi(strings.TrimSpace(n.Text))
		again(k)
	})
	return b, container.NewGridWrap(fyne.NewSize(64, n.MinSize().Height), n)
}

// openRun shows a run from the runs folder in the Results step: its
// results.json, or its best checkpoint evaluated once (the Results step
// asks trainer.RunResults).
func (wz *wizard) openRun(r trainer.RunInfo) {
	res := &trainer.Result{RunDir: r.Dir, Epochs: r.Epoch, Device: r.Device, BestEpoch: r.BestEpoch}
	if r.State != trainer.RunFinished {
		res.Stopped = r.Status
	}
	wz.result = res
	wz.show(4)
}
