package app

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
	"gpuwizard/gpu/fix"
)

// FixDeps apply the doctor's fixable findings (gpu/fix); nil in Deps: the
// window shows no "Fix it" button.
type FixDeps struct {
	Runner   fix.Runner // nil: the interpreter's pip through os/exec
	Home     string     // records go to ~/gpuwizard/fixes; "": the user's home
	IndexURL string     // "": PyTorch's index (a mirror or a folder of wheels)
}

// maxFixLogLines is how much of the commands' output the window keeps.
const maxFixLogLines = 400

// fixer is the "Fix it" panel of one finding: the plan, a confirmation,
// the live log with Cancel, the check again, and Undo.
type fixer struct {
	c       *checkView
	deps    FixDeps
	confirm func(w fyne.Window, title, message, action string, done func(bool))

	plan    fix.Plan
	status  *widget.Label
	planTxt *widget.Label
	logTxt  *widget.Label
	logBox  *container.Scroll
	runBtn  *widget.Button
	stopBtn *widget.Button
	undoBtn *widget.Button
	content fyne.CanvasObject
	dialog  dialog.Dialog

	mu     sync.Mutex
	lines  []string
	cancel context.CancelFunc
	dir    string         // the record of the last run (undo)
	wg     sync.WaitGroup // the running fix or undo, for tests
}

// newFixer plans the fixes of rep and builds the panel.
func newFixer(c *checkView, deps FixDeps, confirm func(fyne.Window, string, string, string, func(bool)), rep gpu.Report) *fixer {
	f := &fixer{c: c, deps: deps, confirm: confirm}
	if f.deps.Home == "" {
		f.deps.Home, _ = os.UserHomeDir()
	}
	f.status = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	f.status.Wrapping = fyne.TextWrapWord
	f.planTxt = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	f.planTxt.Wrapping = fyne.TextWrapWord
	f.logTxt = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	f.logTxt.Wrapping = fyne.TextWrapBreak
	f.logBox = container.NewVScroll(f.logTxt)
	f.logBox.SetMinSize(fyne.NewSize(0, 160))
	f.runBtn = widget.NewButtonWithIcon("Run the fix…", theme.ConfirmIcon(), f.ask)
	f.runBtn.Importance = widget.HighImportance
	f.stopBtn = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), f.stop)
	f.stopBtn.Hide()
	f.undoBtn = widget.NewButtonWithIcon("Undo", theme.ContentUndoIcon(), f.undo)
	f.undoBtn.Hide()
	m, err := compat.LoadMatrix()
	if err == nil {
		f.plan, err = fix.Make(rep, m, fix.Options{Home: f.deps.Home, IndexURL: f.deps.IndexURL})
	}
	var b strings.Builder
	switch {
	case err != nil:
		f.status.SetText("No plan: " + err.Error())
		f.runBtn.Disable()
	case !f.plan.Fixable():
		f.status.SetText("Nothing here can be fixed automatically; the finding's steps say what to do by hand.")
		f.runBtn.Disable()
	default:
		f.status.SetText("Nothing has changed yet. This is what the fix will do:")
	}
	f.plan.WriteText(&b)
	f.planTxt.SetText(b.String())
	buttons := container.NewHBox(f.runBtn, f.stopBtn, f.undoBtn)
	f.content = container.NewBorder(container.NewVBox(f.status, buttons), nil, nil, nil,
		container.NewVSplit(container.NewVScroll(f.planTxt), f.logBox))
	return f
}

// show opens the panel in a dialog over the window.
func (f *fixer) show(w fyne.Window) {
	if w == nil {
		return
	}
	f.dialog = dialog.NewCustom("Fix it", "Close", f.content, w)
	f.dialog.Resize(fyne.NewSize(900, 620))
	f.dialog.Show()
}

// ask confirms before anything changes; a no changes nothing.
func (f *fixer) ask() {
	msg := fmt.Sprintf("This changes the packages of %s with its own pip. They are recorded first, so Undo can put them back.", f.plan.Interpreter)
	if f.confirm == nil {
		f.status.SetText("No confirmation dialog: nothing was changed.")
		return
	}
	f.confirm(f.c.win, "Change this Python environment?", msg, "Run the fix", func(ok bool) {
		if !ok {
			f.status.SetText("Not confirmed: nothing was changed.")
			return
		}
		f.run()
	})
}

func (f *fixer) exec() fix.Exec {
	return fix.Exec{Runner: f.deps.Runner, Checker: fix.CheckFunc(f.c.check), Home: f.deps.Home,
		IndexURL: f.deps.IndexURL, Log: f.log}
}

// log adds a line of the commands' output and shows it.
func (f *fixer) log(s string) {
	f.mu.Lock()
	f.lines = append(f.lines, gpu.Sanitize(s))
	if len(f.lines) > maxFixLogLines {
		f.lines = f.lines[len(f.lines)-maxFixLogLines:]
	}
	text := strings.Join(f.lines, "\n")
	f.mu.Unlock()
	f.c.ui(func() {
		f.logTxt.SetText(text)
		f.logBox.ScrollToBottom()
	})
}

// busy switches the buttons for a running fix or undo.
func (f *fixer) busy(what string) context.Context {
	ctx, cancel := context.WithCancel(f.c.ctx)
	f.cancel = cancel
	f.status.SetText(what)
	f.runBtn.Disable()
	f.undoBtn.Disable()
	f.stopBtn.Show()
	return ctx
}

func (f *fixer) idle(status string) {
	f.cancel()
	f.stopBtn.Hide()
	f.status.SetText(status)
	if f.dir != "" {
		f.undoBtn.Show()
		f.undoBtn.Enable()
	}
}

// run executes the plan in the background, then shows the check again.
func (f *fixer) run() {
	ctx := f.busy("Running the fix…")
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		res, err := fix.Execute(ctx, f.plan, f.exec())
		f.c.ui(func() {
			f.dir = res.Dir
			f.idle(fixVerdict(res, err))
			f.c.run() // the window's findings, checked again
		})
	}()
}

// fixVerdict says how a fix ended.
func fixVerdict(res fix.Result, err error) string {
	switch {
	case err != nil && res.Restored:
		return "The fix did not complete (" + err.Error() + "); the environment is back as it was."
	case err != nil:
		return "The fix did not complete: " + err.Error()
	case res.Fixed():
		return fmt.Sprintf("Fixed (%s), checked again in %s: %s", strings.Join(res.Gone, ", "), res.Took.Round(100_000_000), res.Verdict)
	}
	var left []string
	for _, l := range res.Left {
		left = append(left, l.Title)
	}
	return "The fix ran, but the doctor still finds: " + strings.Join(left, "; ")
}

// stop cancels the running fix; pip is interrupted and the environment
// restored.
func (f *fixer) stop() {
	if f.cancel != nil {
		f.cancel()
		f.status.SetText("Stopping; putting the environment back…")
	}
}

// undo restores the packages recorded before the fix.
func (f *fixer) undo() {
	if f.dir == "" {
		return
	}
	ctx := f.busy("Putting back the packages recorded before the fix…")
	dir := f.dir
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		u, err := fix.Undo(ctx, dir, f.exec())
		f.c.ui(func() {
			switch {
			case err != nil:
				f.idle("Undo failed: " + err.Error())
			case u.Exact:
				f.idle("Undone: the packages are exactly those recorded in " + dir + ".")
			default:
				f.idle("Undone, but the packages differ from the record: " + strings.Join(u.Diff, "; "))
			}
			f.c.run()
		})
	}()
}
