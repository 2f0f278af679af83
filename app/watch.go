package app

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"gpuwizard/gpu"
	"gpuwizard/gpu/watch"
	"gpuwizard/internal/plural"
)

// watchView is the Check step's "Watch a running training": the user's
// processes that look like training, with their CPU and GPU use, and the
// live verdict for the one chosen. The list and the watch run in
// goroutines under cancellable contexts; widgets change only on the UI
// goroutine (through the wizard's ui functions, fyne.Do in the app).
type watchView struct {
	ctx     context.Context
	opts    watch.Options
	uid     int
	every   time.Duration
	uiAsync func(func())

	content  fyne.CanvasObject
	status   *widget.Label
	table    *widget.Table
	empty    *widget.Label
	verdict  *widget.Label
	use      *widget.Label
	findings *fyne.Container
	evidence *widget.Label

	// UI goroutine only.
	cands      []watch.Candidate
	pid        int    // the process followed; 0 none
	key        string // the findings on screen
	listStop   context.CancelFunc
	followStop context.CancelFunc
	gen        int // the follow generation: reports of an older one are dropped

	wg sync.WaitGroup // the goroutines, for tests
}

// Columns of the process table.
var watchColumns = []column{{"PID", 80}, {"Command", 420}, {"Framework", 180}, {"CPU", 80}, {"GPU", 200}}

func newWatchView(ctx context.Context, opts watch.Options, uid int, every time.Duration, uiAsync func(func())) *watchView {
	if every <= 0 {
		every = 2 * time.Second
	}
	v := &watchView{ctx: ctx, opts: opts, uid: uid, every: every, uiAsync: uiAsync}
	hint := widget.NewLabel("Your processes that look like training (Python with torch or TensorFlow loaded, yolo), with their CPU and GPU use. Choose one to see where it really runs and why.")
	hint.Wrapping = fyne.TextWrapWord
	v.status = widget.NewLabel("Looking for running trainings…")
	v.status.TextStyle = fyne.TextStyle{Italic: true}
	v.table = textTable(watchColumns, func() int { return len(v.cands) }, func(row, col int) string { return candidateCell(v.cands[row], col) })
	v.table.OnSelected = func(id widget.TableCellID) {
		if id.Row >= 0 && id.Row < len(v.cands) {
			v.follow(v.cands[id.Row].PID)
		}
	}
	v.empty = widget.NewLabel("No training found. Start one (python train.py, yolo train …) and it appears here within seconds.")
	v.empty.Wrapping = fyne.TextWrapWord
	v.empty.Hide()
	v.verdict = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.verdict.Wrapping = fyne.TextWrapWord
	v.use = widget.NewLabel("")
	v.use.Wrapping = fyne.TextWrapWord
	v.findings = container.NewVBox()
	v.evidence = widget.NewLabel("")
	v.evidence.Wrapping = fyne.TextWrapWord
	v.evidence.TextStyle = fyne.TextStyle{Monospace: true}
	detail := container.NewBorder(container.NewVBox(v.verdict, v.use), nil, nil, nil,
		container.NewVScroll(container.NewVBox(v.findings, widget.NewLabelWithStyle("Evidence", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), v.evidence)))
	// While nothing trains the message takes the table's place (a table
	// with no rows is only its header, and the message would sit on it).
	split := container.NewVSplit(container.NewStack(v.table, v.empty), detail)
	split.Offset = 0.3
	v.content = container.NewBorder(container.NewVBox(hint, v.status), nil, nil, nil, split)
	return v
}

// candidateCell is one cell of the process table.
func candidateCell(c watch.Candidate, col int) string {
	switch col {
	case 0:
		return fmt.Sprint(c.PID)
	case 1:
		s := c.Command
		if c.Children > 0 {
			s += fmt.Sprintf("  (+%d)", c.Children)
		}
		return s
	case 2:
		return strings.Join(c.Frameworks, ", ")
	case 3:
		if c.CPUPct < 0 {
			return "…"
		}
		return fmt.Sprintf("%.0f %%", c.CPUPct)
	case 4:
		if !c.OnGPU {
			return "—"
		}
		var gs []string
		for _, g := range c.GPUs {
			gs = append(gs, fmt.Sprint(g))
		}
		return fmt.Sprintf("GPU %s, %d MiB", strings.Join(gs, ", "), c.GPUMiB)
	}
	return ""
}

// start lists the trainings every few seconds until stop (UI goroutine).
func (v *watchView) start() {
	if v.listStop != nil {
		return
	}
	ctx, cancel := context.WithCancel(v.ctx)
	v.listStop = cancel
	v.wg.Add(1)
	go func() {
		defer v.wg.Done()
		l := watch.NewLister(v.opts, v.uid)
		defer l.Close()
		tick := time.NewTicker(v.every)
		defer tick.Stop()
		for {
			cands, err := l.List(ctx)
			if ctx.Err() != nil {
				return
			}
			at := time.Now()
			v.uiAsync(func() {
				if ctx.Err() == nil {
					v.listed(cands, err, at)
				}
			})
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	if v.pid != 0 && v.followStop == nil {
		v.follow(v.pid)
	}
}

// stop ends the list and the watch (UI goroutine); start resumes them.
func (v *watchView) stop() {
	if v.listStop != nil {
		v.listStop()
		v.listStop = nil
	}
	if v.followStop != nil {
		v.followStop()
		v.followStop = nil
	}
}

// listed shows a new list (UI goroutine). The rows keep PID order so the
// chosen one stays put; the first is chosen when none is.
func (v *watchView) listed(cands []watch.Candidate, err error, at time.Time) {
	if err != nil {
		v.status.SetText("Cannot list processes: " + err.Error())
		return
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].PID < cands[j].PID })
	v.cands = cands
	n := len(cands)
	switch n {
	case 0:
		v.status.SetText("No training running · updated " + at.Format("15:04:05"))
	case 1:
		v.status.SetText("1 training running · updated " + at.Format("15:04:05"))
	default:
		v.status.SetText(fmt.Sprintf("%d trainings running · updated %s", n, at.Format("15:04:05")))
	}
	if n == 0 {
		v.table.Hide()
		v.empty.Show()
	} else {
		v.empty.Hide()
		v.table.Show()
	}
	v.table.Refresh()
	row := -1
	for i, c := range cands {
		if c.PID == v.pid {
			row = i
		}
	}
	switch {
	case row >= 0:
		v.table.Select(widget.TableCellID{Row: row, Col: 0}) // follow is a no-op for the same PID
	case v.pid == 0 && n > 0:
		v.table.Select(widget.TableCellID{Row: 0, Col: 0})
	case v.pid != 0:
		v.table.UnselectAll() // the process followed has ended; its summary stays
	}
}

// follow watches pid live, replacing the previous watch (UI goroutine).
func (v *watchView) follow(pid int) {
	if pid == v.pid && v.followStop != nil {
		return
	}
	if v.followStop != nil {
		v.followStop()
	}
	v.gen++
	gen := v.gen
	if pid != v.pid {
		v.pid, v.key = pid, ""
		v.verdict.SetText(fmt.Sprintf("Watching process %d…", pid))
		v.verdict.Importance = widget.MediumImportance
		v.verdict.Refresh()
		v.use.SetText("Sampling its CPU use, libraries and GPU memory for a few seconds.")
		v.findings.RemoveAll()
		v.evidence.SetText("")
	}
	ctx, cancel := context.WithCancel(v.ctx)
	v.followStop = cancel
	v.wg.Add(1)
	go func() {
		defer v.wg.Done()
		w := watch.New(v.opts, pid)
		defer w.Close()
		show := func(rep watch.Report, err error) {
			v.uiAsync(func() {
				if gen == v.gen && ctx.Err() == nil {
					v.show(rep, err)
				}
			})
		}
		if err := w.Sample(ctx); err != nil {
			if ctx.Err() == nil {
				show(watch.Report{}, err)
			}
			return
		}
		step := min(v.every/2, time.Second)
		tick := time.NewTicker(step)
		defer tick.Stop()
		next := time.Now().Add(v.every)
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			_ = w.Sample(ctx)
			if w.Ended() {
				show(w.Report(ctx), nil)
				return
			}
			if now := time.Now(); !now.Before(next) {
				show(w.Report(ctx), nil)
				next = now.Add(v.every)
			}
		}
	}()
}

// show puts a verdict on screen (UI goroutine). The findings are rebuilt
// only when they change, so an opened card stays open.
func (v *watchView) show(rep watch.Report, err error) {
	if err != nil {
		v.verdict.SetText("Cannot watch this process: " + err.Error())
		v.verdict.Importance = widget.WarningImportance
		v.verdict.Refresh()
		v.use.SetText("")
		return
	}
	v.verdict.SetText(rep.Verdict)
	switch rep.State.Severity() {
	case gpu.SevOK:
		v.verdict.Importance = widget.SuccessImportance
	case gpu.SevWarning:
		v.verdict.Importance = widget.WarningImportance
	case gpu.SevError:
		v.verdict.Importance = widget.DangerImportance
	default:
		v.verdict.Importance = widget.MediumImportance
	}
	v.verdict.Refresh()
	v.use.SetText(useText(rep))
	v.evidence.SetText(strings.Join(rep.Evidence, "\n"))
	key := string(rep.State)
	for _, f := range rep.Findings {
		key += "/" + f.ID + ":" + f.Title
	}
	if key != v.key {
		v.key = key
		v.findings.RemoveAll()
		for _, f := range rep.Findings {
			v.findings.Add(findingCard(f, func(f func()) { time.AfterFunc(2*time.Second, func() { v.uiAsync(f) }) }))
		}
	}
}

// useText is the process's CPU and GPU use in one line.
func useText(rep watch.Report) string {
	var parts []string
	if rep.State == watch.StateExited {
		return "The process has ended."
	}
	p := fmt.Sprintf("PID %d", rep.PID)
	if n := len(rep.Processes); n > 1 {
		p += " and " + plural.Count(n-1, "child process")
	}
	parts = append(parts, p)
	if rep.CPU.Measured {
		parts = append(parts, fmt.Sprintf("CPU %.0f %% (of %s)", rep.CPU.Percent, plural.Count(rep.CPU.Cores, "core")))
	}
	parts = append(parts, plural.Count(rep.CPU.Threads, "thread"))
	for _, g := range rep.GPUs {
		s := fmt.Sprintf("GPU %d: %d MiB", g.Index, g.ProcessMiB)
		if g.UtilizationPct != nil {
			s += fmt.Sprintf(", %.0f %% busy", *g.UtilizationPct)
		}
		parts = append(parts, s)
	}
	if len(rep.GPUs) == 0 {
		parts = append(parts, "no GPU memory")
	}
	return strings.Join(parts, " · ")
}

// checkTabs are the Check step's tabs: this machine, the watch, and a
// fleet report.
func checkTabs(machine fyne.CanvasObject, w *watchView, fleet fyne.CanvasObject) *container.AppTabs {
	tabs := container.NewAppTabs(
		container.NewTabItemWithIcon("This machine", theme.ComputerIcon(), machine),
		container.NewTabItemWithIcon("Watch a running training", theme.VisibilityIcon(), w.content),
		container.NewTabItemWithIcon("Fleet", theme.GridIcon(), fleet))
	tabs.OnSelected = func(t *container.TabItem) {
		if t.Content == w.content {
			w.start()
		} else {
			w.stop()
		}
	}
	return tabs
}
