package fix

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"gpuwizard/gpu"
)

// Checker runs the doctor on this machine again (the CLI and the window
// pass the live probe; tests a static one).
type Checker interface {
	Check(ctx context.Context) (gpu.Report, error)
}

// CheckFunc is a Checker made of a function.
type CheckFunc func(ctx context.Context) (gpu.Report, error)

// Check implements Checker.
func (f CheckFunc) Check(ctx context.Context) (gpu.Report, error) { return f(ctx) }

// ErrNothing is returned (wrapped) for a plan with nothing to do.
var ErrNothing = errors.New("fix: nothing fixable")

// Exec is how a plan runs.
type Exec struct {
	Runner  Runner  // nil: ExecRunner
	Checker Checker // the doctor, run again afterwards; nil: not checked
	// Home is the user's home folder; records go to ~/gpuwizard/fixes.
	Home string
	// IndexURL is where undo (after a failure) finds the recorded wheels;
	// "": PyPI and PyTorch's index of each build's local tag.
	IndexURL string
	// Timeout bounds the commands; 0: 30 minutes.
	Timeout time.Duration
	// Log receives each line: what runs, and the programs' output.
	Log func(string)
	// Now stamps the record folder; nil: time.Now.
	Now func() time.Time
	// Environ is the environment (CONDA_EXE); nil: none.
	Environ map[string]string
}

func (x Exec) log(s string) {
	if x.Log != nil {
		x.Log(s)
	}
}

func (x Exec) runner() Runner {
	if x.Runner == nil {
		return ExecRunner{}
	}
	return x.Runner
}

// Result is how a fix ended.
type Result struct {
	Dir      string        `json:"dir"`             // the record folder (undo reads it)
	Ran      bool          `json:"ran"`             // every command succeeded
	Error    string        `json:"error,omitempty"` // why not
	Restored bool          `json:"restored"`        // after a failure, the environment is as recorded
	Checked  bool          `json:"checked"`         // the doctor ran again
	Ready    bool          `json:"ready"`           // its verdict
	Verdict  string        `json:"verdict,omitempty"`
	Gone     []string      `json:"gone,omitempty"` // the findings fixed
	Left     []gpu.Finding `json:"left,omitempty"` // the plan's findings still there
	Took     time.Duration `json:"took_ns"`
}

// Fixed says whether every finding the plan was for is gone.
func (r Result) Fixed() bool { return r.Ran && r.Checked && len(r.Left) == 0 }

// Execute records the environment, runs the plan's commands, puts the
// environment back if one fails, and runs the doctor again. The error says
// why it did not run to the end; the result says what was done either way.
func Execute(ctx context.Context, p Plan, x Exec) (Result, error) {
	if !p.Fixable() {
		return Result{}, fmt.Errorf("%w in %s", ErrNothing, p.Interpreter)
	}
	x.Runner = x.runner()
	if x.Home == "" || !filepath.IsAbs(x.Home) {
		return Result{}, fmt.Errorf("fix: the home folder %q is not an absolute path: the record of the packages needs one", x.Home)
	}
	now := time.Now
	if x.Now != nil {
		now = x.Now
	}
	start := time.Now()
	dir, err := newRecordDir(x.Home, now())
	if err != nil {
		return Result{}, err
	}
	res := Result{Dir: dir}
	finish := func(err error) (Result, error) {
		res.Took = time.Since(start)
		if err != nil {
			res.Error = err.Error()
		}
		if werr := writeJSON(dir, ResultFile, res); werr != nil {
			err = errors.Join(err, werr)
		}
		return res, err
	}
	recorded, err := record(ctx, p, x, dir)
	if err != nil {
		return finish(err)
	}
	x.log("Recorded the environment's packages in " + dir)
	if err := runCommands(ctx, p, x); err != nil {
		x.log("Failed: " + err.Error())
		res.Restored = restoreAfter(ctx, p, x, dir, recorded)
		return finish(err)
	}
	res.Ran = true
	if x.Checker == nil {
		return finish(nil)
	}
	x.log("Checking again…")
	rep, err := x.Checker.Check(ctx)
	if err != nil {
		return finish(fmt.Errorf("the check after the fix: %w", err))
	}
	res.Checked, res.Ready, res.Verdict = true, rep.Ready, rep.Verdict
	res.Gone, res.Left = compare(p, rep)
	return finish(nil)
}

// runCommands runs every command of the plan in order, within the timeout.
func runCommands(ctx context.Context, p Plan, x Exec) error {
	timeout := x.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, a := range p.Actions {
		for _, c := range a.Commands {
			x.log("$ " + c.String())
			if err := x.Runner.Run(ctx, c.Args, x.log); err != nil {
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return fmt.Errorf("%w (the fix's time limit of %s passed; raise it with --timeout)", err, timeout)
				}
				return err
			}
		}
	}
	return nil
}

// restoreAfter puts the environment back to the recorded freeze after a
// failed or stopped command, even when ctx has ended.
func restoreAfter(ctx context.Context, p Plan, x Exec, dir string, recorded []byte) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Minute)
	defer cancel()
	u, err := restore(ctx, p.Interpreter, x, dir, recorded)
	switch {
	case err != nil:
		x.log("Could not put the environment back: " + err.Error() + " (try: gpuwizard fix --undo " + dir + ")")
	case u.Exact && len(u.Commands) == 0:
		x.log("The environment was not changed: its packages are as recorded.")
	case u.Exact:
		x.log("The environment is back as recorded.")
	default:
		x.log("The environment differs from the record: " + strings.Join(u.Diff, "; "))
	}
	return err == nil && u.Exact
}

// compare says which of the plan's findings the new report still has for
// the plan's interpreter.
func compare(p Plan, rep gpu.Report) (gone []string, left []gpu.Finding) {
	want := p.FindingIDs()
	still := map[string]bool{}
	for _, f := range rep.Findings {
		if gpu.Contains(want, f.ID) && aboutInterpreter(f, p.Interpreter) {
			still[f.ID] = true
			left = append(left, f)
		}
	}
	for _, id := range want {
		if !still[id] && !gpu.Contains(gone, id) {
			gone = append(gone, id)
		}
	}
	return gone, left
}

// aboutInterpreter says whether finding f is about the Python at py.
func aboutInterpreter(f gpu.Finding, py string) bool {
	return strings.Contains(f.Title, py) || anyContains(f.Evidence, " in "+py+" ") || anyContains(f.Evidence, py)
}
