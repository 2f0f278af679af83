package app

import (
	"context"
	"fmt"
	"image"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"gpuwizard/cli"
	"gpuwizard/gpu"
	"gpuwizard/gpu/watch"
	"gpuwizard/trainer"
	"gpuwizard/trainer/data"
	"gpuwizard/trainer/detect"
	"gpuwizard/trainer/exec"
)

// Deps are the wizard's ways into the machine; tests pass fakes.
type Deps struct {
	Check    Checker                                                    // the doctor on this machine
	Deep     Checker                                                    // the doctor with --deep
	Paste    func(text string) (gpu.Report, error)                      // the doctor on a pasted report
	LoadData func(path string, opt data.Options) (*data.Dataset, error) // a dataset and its lint
	Train    func(ctx context.Context, cfg trainer.Config, events chan<- trainer.Event, opts trainer.Options) (*trainer.Result, error)
	Probe    trainer.DeviceProbe
	Sample   trainer.GPUSampler // NVML readings while training on CUDA
	// OpenCUDA opens a CUDA device for the time estimate (nil: the real
	// driver, loaded at run time; tests pass a fake).
	OpenCUDA func(ordinal int) (exec.Backend, exec.CUDAInfo, error)
	// PickFolder and PickFile ask the user for a path (Fyne dialogs in the
	// app); they call back with "" when cancelled.
	PickFolder func(w fyne.Window, done func(string))
	PickFile   func(w fyne.Window, done func(string))
	SaveFile   func(w fyne.Window, name string, done func(string))
	// ExportTo asks how to export run name (trainer.ExportONNXFormat: an
	// ONNX file; trainer.ExportFolder: a copy of the run folder) and where
	// (a save dialog); done gets a path that does not exist yet and the
	// format, or "" when cancelled.
	ExportTo func(w fyne.Window, name string, done func(dest, format string))
	// Confirm asks before a destructive action (action names it:
	// "Delete"); done gets true only when the user chose it. In the app a
	// dialog whose highlighted, focused button is Cancel.
	Confirm func(w fyne.Window, title, message, action string, done func(bool))
	// ListRuns lists the runs folder and RunResults reads (or evaluates)
	// one run's results; nil: the trainer's.
	ListRuns   func(project string) ([]trainer.RunInfo, error)
	RunResults func(ctx context.Context, dir string) (*trainer.Result, error)
	// RunIndex is the index of run folders made anywhere (the command
	// line's ./runs/NAME): the Runs view lists them beside the project, and
	// the window's runs are recorded in it ("": neither).
	RunIndex string
	// LoadModel loads a trained model (a run's "best") to classify images
	// with; nil: trainer.LoadPredictor.
	LoadModel func(path string) (Classifier, error)
	// Fix applies the doctor's fixable findings (the "Fix it" buttons);
	// nil: no button.
	Fix *FixDeps
	// LoadDetect loads a detection dataset (a YOLO data.yaml or
	// detect.Builtin) at a canvas size; nil: detect.Load.
	LoadDetect func(path string, size int, seed int64) (*detect.Dataset, error)
	// LoadDetector loads a trained detector (a run's "best"); nil:
	// trainer.LoadDetector.
	LoadDetector func(path string) (cli.Detector, error)
	// SettingsFile keeps the last-used settings ("": not kept).
	SettingsFile string
	// OpenFolder shows a folder in the file manager (xdg-open on Linux);
	// an error makes the window show the path instead.
	OpenFolder func(path string) error
	// Watch is the machine "Watch a running training" reads (the zero
	// value: the live one); WatchUID is whose processes it lists;
	// WatchEvery is how often the list and the verdict refresh (zero: 2 s).
	Watch      watch.Options
	WatchUID   int
	WatchEvery time.Duration
	// UI runs f on the UI goroutine and waits (fyne.DoAndWait); UIAsync
	// does not wait (fyne.Do). Tests pass one serial loop for both.
	UI      func(f func())
	UIAsync func(f func())
}

// Classifier classifies images: a trained model (*trainer.Predictor).
type Classifier interface {
	PredictImage(img image.Image, invert string) ([]trainer.Prediction, error)
}

var _ Classifier = (*trainer.Predictor)(nil)

// step is one page of the wizard: data plus a view. Leave validates and
// says why the user cannot go on.
type step struct {
	Title string
	View  fyne.CanvasObject
	Enter func()
	Leave func() error
}

// wizard holds the window, the steps and what they share.
type wizard struct {
	ctx     context.Context
	deps    Deps
	app     fyne.App
	win     fyne.Window
	steps   []*step
	cur     int
	reached int // the furthest step shown so far: the crumbs go up to it

	// what the steps decide
	report  *gpu.Report     // the last check of this machine
	dataset *data.Dataset   // the chosen dataset, for a classifier
	detSet  *detect.Dataset // or the chosen detection dataset
	dataArg string          // its path, or "builtin" (detect.Builtin)
	cfg     trainer.Config  // the settings
	result  *trainer.Result // the finished run
	resume  trainer.Options // set to resume or extend a run

	// widgets
	crumbs  []*crumb
	body    *fyne.Container
	back    *widget.Button
	next    *widget.Button
	status  *widget.Label
	content fyne.CanvasObject

	check    *checkView
	checkTab *container.AppTabs
	watch    *watchView
	fleet    *fleetView // the Check step's Fleet tab
	dataView *datasetView
	settings *settingsView
	train    *trainView
	results  *resultsView
	runs     *runsView
	runsBtn  *widget.Button
	inRuns   bool // the Runs page is showing; Back returns to step cur

	lastPathDialog string // the path the last "could not open" dialog offered, for tests

	wg sync.WaitGroup // background work, for tests
}

func newWizard(ctx context.Context, a fyne.App, w fyne.Window, deps Deps) *wizard {
	if deps.ListRuns == nil {
		deps.ListRuns = trainer.ListRuns
	}
	if deps.RunResults == nil {
		deps.RunResults = trainer.RunResults
	}
	if deps.LoadModel == nil {
		deps.LoadModel = func(path string) (Classifier, error) { return trainer.LoadPredictor(path) }
	}
	wz := &wizard{ctx: ctx, deps: deps, app: a, win: w, dataArg: data.Builtin, cfg: trainer.Defaults()}
	wz.check = newCheckView(ctx, deps.Check)
	wz.check.paste = deps.Paste
	wz.check.win, wz.check.saveFile = w, deps.SaveFile
	wz.check.onReport = func(r gpu.Report) { wz.report = &r }
	wz.check.do = wz.ui
	wz.check.deep = deps.Deep
	wz.check.fix, wz.check.confirm = deps.Fix, deps.Confirm
	wz.watch = newWatchView(ctx, deps.Watch, deps.WatchUID, deps.WatchEvery, wz.uiAsync)
	wz.fleet = newFleetView(wz)
	wz.checkTab = checkTabs(wz.check.content, wz.watch, wz.fleet.content)
	wz.dataView = newDatasetView(wz)
	wz.settings = newSettingsView(wz)
	wz.train = newTrainView(wz)
	wz.results = newResultsView(wz)
	wz.runs = newRunsView(wz)
	wz.steps = []*step{
		{Title: "Check", View: wz.checkTab, Enter: func() {
			if wz.report == nil && !wz.check.running() {
				wz.check.run()
			}
			if wz.checkTab.SelectedIndex() == 1 {
				wz.watch.start()
			}
		}, Leave: func() error {
			wz.watch.stop()
			return nil
		}},
		{Title: "Dataset", View: wz.dataView.content, Enter: wz.dataView.enter, Leave: wz.dataView.leave},
		{Title: "Settings", View: wz.settings.content, Enter: wz.settings.enter, Leave: wz.settings.leave},
		{Title: "Train", View: wz.train.content, Enter: wz.train.enter, Leave: wz.train.leave},
		{Title: "Results", View: wz.results.content, Enter: wz.results.enter},
	}
	crumbs := container.NewHBox()
	for i, s := range wz.steps {
		l := newCrumb(fmt.Sprintf("%d %s", i+1, s.Title), i, wz.goTo)
		wz.crumbs = append(wz.crumbs, l)
		crumbs.Add(l)
		if i < len(wz.steps)-1 {
			crumbs.Add(widget.NewLabel("›"))
		}
	}
	wz.back = widget.NewButtonWithIcon("Back", theme.NavigateBackIcon(), func() {
		if wz.inRuns {
			wz.show(wz.cur)
			return
		}
		wz.show(wz.cur - 1)
	})
	wz.runsBtn = widget.NewButtonWithIcon("Runs", theme.ListIcon(), wz.showRuns)
	wz.next = widget.NewButtonWithIcon("Next", theme.NavigateNextIcon(), wz.goNext)
	wz.next.IconPlacement = widget.ButtonIconTrailingText
	wz.next.Importance = widget.HighImportance
	wz.status = widget.NewLabel("")
	wz.status.Importance = widget.DangerImportance
	wz.status.Wrapping = fyne.TextWrapWord
	wz.body = container.NewStack()
	nav := container.NewBorder(nil, nil, wz.back, wz.next, wz.status)
	head := container.NewBorder(nil, nil, nil, wz.runsBtn, container.NewHScroll(crumbs))
	wz.content = container.NewBorder(container.NewVBox(head, widget.NewSeparator()), container.NewVBox(widget.NewSeparator(), nav), nil, nil, wz.body)
	wz.show(0)
	return wz
}

// goNext validates the current step and moves on.
func (wz *wizard) goNext() {
	if s := wz.steps[wz.cur]; s.Leave != nil {
		if err := s.Leave(); err != nil {
			wz.fail(err.Error())
			return
		}
	}
	wz.show(wz.cur + 1)
}

// canGo says whether the crumb of step i leads somewhere now: a step shown
// before, or Results once there is a run to show; not the step on screen,
// and nothing while a run trains (the Train step holds the window then).
func (wz *wizard) canGo(i int) bool {
	switch {
	case i < 0 || i >= len(wz.steps) || wz.train.running():
		return false
	case i == wz.cur && !wz.inRuns:
		return false
	case i == len(wz.steps)-1:
		return wz.result != nil // Results shows the run: reachable once there is one
	}
	return i <= wz.reached
}

// goTo is a crumb's tap: back to an earlier step at once, as Back does;
// forward through the Leave of every step on the way (as Next would),
// stopping on the first step that refuses, with its reason.
func (wz *wizard) goTo(i int) {
	if !wz.canGo(i) {
		return
	}
	for k := wz.cur; k < i; k++ {
		if s := wz.steps[k]; s.Leave != nil {
			if err := s.Leave(); err != nil {
				if k != wz.cur || wz.inRuns {
					wz.show(k)
				}
				wz.fail(err.Error())
				return
			}
		}
	}
	wz.show(i)
}

// fail shows in red, beside Back and Next, why the user cannot go on.
func (wz *wizard) fail(msg string) {
	wz.status.Importance = widget.DangerImportance
	wz.status.SetText(msg)
}

// inform shows in green, in the same place, what was just done.
func (wz *wizard) inform(msg string) {
	wz.status.Importance = widget.SuccessImportance
	wz.status.SetText(msg)
}

// show switches to step i.
func (wz *wizard) show(i int) {
	if i < 0 || i >= len(wz.steps) {
		return
	}
	if wz.inRuns {
		wz.inRuns = false
		wz.runsBtn.Enable()
	} else if i != wz.cur && wz.cur == 0 {
		wz.watch.stop()
	}
	wz.cur = i
	wz.reached = max(wz.reached, i)
	wz.status.SetText("")
	wz.markCrumb(i)
	wz.body.Objects = []fyne.CanvasObject{wz.steps[i].View}
	wz.body.Refresh()
	wz.back.Disable()
	if i > 0 && !(i == 3 && wz.train.running()) {
		wz.back.Enable()
	}
	wz.next.SetText("Next")
	wz.next.Enable()
	if i == len(wz.steps)-1 {
		wz.next.Disable()
	}
	if s := wz.steps[i]; s.Enter != nil {
		s.Enter()
	}
}

// markCrumb highlights step i in the breadcrumbs (-1: none, on the Runs
// page) and makes the steps that can be reached tappable.
func (wz *wizard) markCrumb(i int) {
	for k, c := range wz.crumbs {
		c.set(k == i, wz.canGo(k))
	}
}

// showRuns shows the Runs page in place of the current step; Back
// returns to that step.
func (wz *wizard) showRuns() {
	if wz.inRuns {
		return
	}
	if wz.cur == 0 {
		wz.watch.stop()
	}
	wz.inRuns = true
	wz.runsBtn.Disable()
	wz.status.SetText("")
	wz.markCrumb(-1)
	wz.body.Objects = []fyne.CanvasObject{wz.runs.content}
	wz.body.Refresh()
	wz.back.Enable()
	wz.next.Disable()
	wz.runs.enter()
}

// refreshNav re-applies the navigation rules (after training starts or ends).
func (wz *wizard) refreshNav() {
	if wz.inRuns {
		wz.markCrumb(-1)
		wz.runs.setButtons()
		return
	}
	wz.markCrumb(wz.cur)
	if wz.cur == 3 {
		if wz.train.running() {
			wz.back.Disable()
			wz.next.Disable()
		} else {
			wz.back.Enable()
			if wz.result != nil {
				wz.next.Enable()
			} else {
				wz.next.Disable()
			}
		}
	}
}

// ui runs f on the UI goroutine and waits.
func (wz *wizard) ui(f func()) {
	if wz.deps.UI != nil {
		wz.deps.UI(f)
		return
	}
	fyne.DoAndWait(f)
}

// uiAsync runs f on the UI goroutine without waiting.
func (wz *wizard) uiAsync(f func()) {
	if wz.deps.UIAsync != nil {
		wz.deps.UIAsync(f)
		return
	}
	fyne.Do(f)
}

// background runs f off the UI goroutine, tracked for tests.
func (wz *wizard) background(f func()) {
	wz.wg.Add(1)
	go func() {
		defer wz.wg.Done()
		f()
	}()
}
