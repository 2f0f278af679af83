package trainer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"gpuwizard/internal/plural"
	"gpuwizard/internal/safefile"
	"gpuwizard/trainer/data"
)

// A run's state, as RunInfo.State gives it.
const (
	RunFinished = "finished" // every epoch done, or stopped early by patience
	RunStopped  = "stopped"  // stopped by the user, resumable
	RunCrashed  = "crashed"  // ended without saying so (killed, power cut) or failed with an error
	RunRunning  = "running"  // a process trains in it now
	RunEmpty    = "empty"    // stopped before its first epoch: nothing to resume
)

// RunInfo is what the runs list shows of one run folder.
type RunInfo struct {
	Dir, Name string
	State     string // RunFinished, RunStopped, RunCrashed, RunRunning or RunEmpty
	Status    string // in words: "stopped at epoch 3 of 10"
	Epoch     int    // epochs completed
	Epochs    int    // planned
	Data      string // the dataset (its path, or builtin)
	Model     string // the model built (or the configured one)
	Device    string // where it trained ("" unknown)
	BestAcc   float64
	BestEpoch int
	Updated   time.Time
	Config    Config
	CanResume bool   // stopped or crashed with a last.ckpt
	CanExtend bool   // has a last.ckpt: more epochs can be added
	Err       string // what could not be read ("" when all is well)
}

// ErrNotRun is returned (wrapped) for a folder that is not a run folder.
var ErrNotRun = errors.New("trainer: not a run folder")

// ListRuns lists the run folders under project, newest first. A missing
// project folder lists nothing; folders that are not runs are skipped.
func ListRuns(project string) ([]RunInfo, error) {
	ents, err := os.ReadDir(project)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trainer: runs folder: %w", err)
	}
	var out []RunInfo
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		ri, err := ReadRun(filepath.Join(project, e.Name()))
		if errors.Is(err, ErrNotRun) {
			continue
		}
		out = append(out, ri)
	}
	sortRuns(out)
	return out, nil
}

// sortRuns orders runs newest first, then by name.
func sortRuns(out []RunInfo) {
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Updated.Equal(out[j].Updated) {
			return out[i].Updated.After(out[j].Updated)
		}
		return out[i].Name < out[j].Name
	})
}

// ReadRun reads a run folder's state without loading its model.
func ReadRun(dir string) (RunInfo, error) {
	ri := RunInfo{Dir: dir, Name: filepath.Base(dir), BestAcc: -1}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return ri, fmt.Errorf("%w: %s is not a folder", ErrNotRun, dir)
	}
	ri.Updated = st.ModTime()
	args, err := safefile.ReadFile(filepath.Join(dir, "args.yaml"), MaxConfigFile, "a run's args.yaml")
	if err != nil {
		return ri, fmt.Errorf("%w: %s has no readable args.yaml: %w", ErrNotRun, dir, err)
	}
	ri.Config, err = ParseConfig(filepath.Join(dir, "args.yaml"), args, Defaults())
	if err != nil {
		ri.Err = err.Error()
	}
	ri.Data, ri.Model, ri.Epochs = ri.Config.Data, ri.Config.Model, ri.Config.Epochs
	last := filepath.Join(dir, "last.ckpt")
	hasLast := fileExists(last)
	ri.CanExtend = hasLast

	var s runState
	if b, err := safefile.ReadFile(filepath.Join(dir, StateFile), 1<<20, "a run's state.json"); err == nil {
		if err := json.Unmarshal(b, &s); err != nil {
			ri.Err = joinErr(ri.Err, fmt.Sprintf("%s: %v", StateFile, err))
			s = runState{}
		}
	}
	if s.State == "" {
		s = legacyState(dir, hasLast)
	}
	ri.Epoch, ri.BestEpoch, ri.BestAcc = s.Epoch, s.BestEpoch, s.BestAcc
	if s.Epochs > 0 {
		ri.Epochs = s.Epochs
	}
	if s.Model != "" {
		ri.Model = s.Model
	}
	if s.Data != "" {
		ri.Data = s.Data
	}
	ri.Device = s.Device
	if !s.Updated.IsZero() {
		ri.Updated = s.Updated
	}
	if pid, running := runningPID(dir); running {
		ri.State = RunRunning
		ri.Status = fmt.Sprintf("running, epoch %d of %d done", ri.Epoch, ri.Epochs)
		if pid > 0 {
			ri.Status += fmt.Sprintf(" (PID %d)", pid)
		}
		return ri, nil
	}
	switch s.State {
	case RunFinished:
		ri.State = RunFinished
		ri.Status = "finished " + plural.Count(ri.Epoch, "epoch")
		if s.Message != "" && ri.Epoch < ri.Epochs {
			ri.Status = fmt.Sprintf("finished at epoch %d of %d (early stopping)", ri.Epoch, ri.Epochs)
		}
	case RunStopped:
		ri.State = RunStopped
		ri.Status = fmt.Sprintf("stopped at epoch %d of %d", ri.Epoch, ri.Epochs)
	default: // running without a process, or failed
		ri.State = RunCrashed
		ri.Status = fmt.Sprintf("crashed at epoch %d of %d", ri.Epoch, ri.Epochs)
		if s.State == stateFailed {
			ri.Status = fmt.Sprintf("failed at epoch %d of %d", ri.Epoch, ri.Epochs)
			if s.Message != "" {
				ri.Err = joinErr(ri.Err, s.Message)
			}
		}
	}
	if !hasLast && ri.State != RunFinished {
		ri.State = RunEmpty
		ri.Status = "stopped before its first epoch ended: resuming trains it again from the start"
	}
	ri.CanResume = (hasLast && (ri.State == RunStopped || ri.State == RunCrashed)) || (ri.State == RunEmpty && ri.Err == "")
	return ri, nil
}

// legacyState reads a run folder written before state.json: a results
// file means finished, a last.ckpt stopped (its epoch from the file).
func legacyState(dir string, hasLast bool) runState {
	var s runState
	if res, err := readResult(filepath.Join(dir, ResultsFile)); err == nil {
		s.State, s.Epoch, s.BestEpoch, s.Device = RunFinished, res.Epochs, res.BestEpoch, res.Device
		if res.Val != nil {
			s.BestAcc = res.Val.Accuracy
		}
		return s
	}
	if hasLast {
		s.State = RunStopped
		if ck, err := LoadCheckpoint(filepath.Join(dir, "last.ckpt")); err == nil {
			s.Epoch, s.Epochs, s.BestEpoch, s.BestAcc, s.Model = ck.Epoch, ck.Config.Epochs, ck.BestEpoch, ck.BestValAcc, ck.Spec.Kind
			if ck.Finished {
				s.State = RunFinished
			}
		}
	}
	return s
}

// runningPID says whether a process holds the run folder's lock, and its
// PID when the lock file names one.
func runningPID(dir string) (int, bool) {
	f, err := safefile.OpenNoFollow(filepath.Join(dir, LockFile), os.O_RDONLY, 0)
	if err != nil {
		return 0, false // absent, or not a lock gpuwizard made: nobody trains there
	}
	defer f.Close()
	got, err := tryLock(f)
	if err != nil || got {
		return 0, false // closing f lets the lock go again
	}
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	return pid, true
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// RunResults gives a run's results: a finished run's results.json; for a
// stopped or crashed run, its best checkpoint evaluated on the validation
// (and test) split, once: the results are cached in results-best.json
// until best.ckpt changes.
func RunResults(ctx context.Context, dir string) (*Result, error) {
	ri, err := ReadRun(dir)
	if err != nil {
		return nil, err
	}
	best := filepath.Join(dir, "best.ckpt")
	bst, bestErr := os.Stat(best)
	if ri.State == RunFinished || (ri.State == RunRunning && bestErr != nil) {
		if res, err := readResult(filepath.Join(dir, ResultsFile)); err == nil {
			if bestErr != nil || !res.modTime.Before(bst.ModTime()) {
				res.Result.RunDir = dir
				return res.Result, nil
			}
		}
	}
	if bestErr != nil {
		return nil, fmt.Errorf("trainer: %s has no results yet: it %s, before any epoch produced a model (no best.ckpt)", dir, ri.Status)
	}
	cache := filepath.Join(dir, BestResultsFile)
	if res, err := readResult(cache); err == nil && !res.modTime.Before(bst.ModTime()) {
		res.Result.RunDir = dir
		res.Result.Stopped = stoppedNote(ri, res.Result.BestEpoch)
		return res.Result, nil
	}
	res, err := evaluateCheckpoint(ctx, dir, best)
	if err != nil {
		return nil, err
	}
	res.Epochs = ri.Epoch
	res.Stopped = stoppedNote(ri, res.BestEpoch)
	res.Device = ri.Device
	b, _ := json.MarshalIndent(res, "", "  ")
	// A cache: written only while no trainer owns the folder, and failing
	// to write it only costs time next time.
	if lock, err := lockRunDir(dir); err == nil {
		_ = writeAtomic(nil, cache, append(b, '\n'))
		lock.release()
	}
	return res, nil
}

func stoppedNote(ri RunInfo, bestEpoch int) string {
	return fmt.Sprintf("%s; the results are those of its best checkpoint (epoch %d)", ri.Status, bestEpoch)
}

// maxResultsFile caps a results file read back (a confusion matrix of
// 1,000 classes takes some 10 MiB).
const maxResultsFile = 64 << 20

type readResultOut struct {
	*Result
	modTime time.Time
}

func readResult(path string) (readResultOut, error) {
	st, err := os.Stat(path)
	if err != nil {
		return readResultOut{}, err
	}
	b, err := safefile.ReadFile(path, maxResultsFile, "a results file")
	if err != nil {
		return readResultOut{}, err
	}
	var res Result
	if err := json.Unmarshal(b, &res); err != nil {
		return readResultOut{}, fmt.Errorf("%s: %w", path, err)
	}
	return readResultOut{&res, st.ModTime()}, nil
}

// evaluateCheckpoint loads a checkpoint and its dataset and measures the
// model on the validation and test splits: a session on the CPU plus
// evaluate.
func evaluateCheckpoint(ctx context.Context, dir, path string) (*Result, error) {
	ck, err := LoadCheckpoint(path)
	if err != nil {
		return nil, err
	}
	cfg := ck.Config
	if ck.Spec.IsDetector() {
		return evaluateDetectorCheckpoint(ctx, dir, path, ck)
	}
	ds, err := data.Load(cfg.Data, cfg.DataOptions())
	if err != nil {
		return nil, fmt.Errorf("trainer: evaluating %s needs its dataset %s: %w (move the dataset back, or resume the run to finish it)", path, cfg.Data, err)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	spec, err := modelSpec(cfg, ds)
	if err != nil {
		return nil, err
	}
	if spec != ck.Spec {
		return nil, fmt.Errorf("%w: %s holds a %s for %dx%dx%d images, but %s now loads as %dx%dx%d: the dataset changed since the run",
			ErrCheckpoint, path, ck.Spec.Kind, ck.Spec.Channels, ck.Spec.Height, ck.Spec.Width, cfg.Data, spec.Channels, spec.Height, spec.Width)
	}
	s, err := openSession(ctx, sessionOptions{spec: spec, batch: cfg.Batch, seed: cfg.Seed, optim: optimOf(cfg), device: "cpu"})
	if err != nil {
		return nil, err
	}
	defer s.close()
	res := &Result{RunDir: dir, BestEpoch: ck.Epoch, History: ck.History, Classes: ck.Classes}
	if ck.BestEpoch > 0 {
		res.BestEpoch = ck.BestEpoch
	}
	if res.Val, res.Test, err = s.measure(ck, ds); err != nil {
		return nil, err
	}
	return res, ctx.Err()
}

// ExportRun copies a run folder to dest, which must not exist, for
// sharing or archiving: the checkpoints, settings, results (a stopped
// run's are computed first) and curves, not the lock or temporary files.
// It copies into a temporary folder beside dest and renames it at the
// end, so dest is either complete or absent.
func ExportRun(ctx context.Context, dir, dest string) error {
	if _, err := ReadRun(dir); err != nil {
		return err
	}
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("trainer: export: %s already exists: choose another name", dest)
	}
	if !fileExists(filepath.Join(dir, ResultsFile)) && fileExists(filepath.Join(dir, "best.ckpt")) {
		if _, err := RunResults(ctx, dir); err != nil {
			return fmt.Errorf("trainer: export: the run's results: %w", err)
		}
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".export-")
	if err != nil {
		return fmt.Errorf("trainer: export: %w", err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("trainer: export: %w", err)
	}
	for _, e := range ents {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		name := e.Name()
		if !e.Type().IsRegular() || name == LockFile || strings.HasPrefix(name, ".") || strings.Contains(name, ".tmp") {
			continue
		}
		if err := copyFile(filepath.Join(dir, name), filepath.Join(tmp, name)); err != nil {
			return fmt.Errorf("trainer: export: %w", err)
		}
	}
	if st, err := os.Stat(dir); err != nil {
		return fmt.Errorf("trainer: export: %w", err)
	} else if err := os.Chmod(tmp, st.Mode().Perm()); err != nil {
		return fmt.Errorf("trainer: export: %w", err)
	}
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("trainer: export: %s appeared while exporting: choose another name", dest)
	}
	if err := os.Rename(tmp, dest); err != nil {
		return fmt.Errorf("trainer: export: %w", err)
	}
	done = true
	return nil
}

// copyFile copies a regular file of the run (never through a link) with
// its permissions: a 0600 checkpoint stays private in the copy.
func copyFile(src, dst string) error {
	in, err := safefile.OpenNoFollow(src, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// DeleteRun removes a run folder. It refuses a folder that is not a run
// and a run a process trains in.
func DeleteRun(dir string) error {
	if _, err := ReadRun(dir); err != nil {
		return err
	}
	lock, err := lockRunDir(dir)
	if err != nil {
		return err
	}
	defer lock.release()
	// Everything but the lock file goes while the lock is held; then the
	// lock is let go and its file removed (Windows deletes no file that
	// is open).
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("trainer: deleting %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.Name() == LockFile {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("trainer: deleting %s: %w", dir, err)
		}
	}
	lock.release()
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("trainer: deleting %s: %w", dir, err)
	}
	return nil
}
