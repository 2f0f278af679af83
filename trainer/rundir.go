package trainer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"gpuwizard/internal/atomicfile"
	"gpuwizard/internal/plural"
	"gpuwizard/internal/printable"
	"gpuwizard/internal/safefile"
	"gpuwizard/trainer/data"
)

// FileSystem is where checkpoints and results are written; tests pass one
// that fails like a full disk.
type FileSystem = atomicfile.FileSystem

// File is what a FileSystem creates.
type File = atomicfile.File

// OSFileSystem is the real file system.
type OSFileSystem = atomicfile.OS

// StateFile records a run's state in its folder, rewritten at the start,
// after every epoch and at the end. A run that says "running" while no
// process holds its lock crashed.
const StateFile = "state.json"

// StepsFile is the run folder's record of the smoothed per-step training
// loss and accuracy (the charts' lines), rewritten after every epoch.
const StepsFile = "steps.csv"

// ResultsFile is a finished run's results; BestResultsFile caches the
// results of a stopped or crashed run's best checkpoint (RunResults).
const (
	ResultsFile     = "results.json"
	BestResultsFile = "results-best.json"
)

// runFiles are the files a run writes in its folder.
var runFiles = []string{"last.ckpt", "best.ckpt", "results.csv", ResultsFile, "args.yaml", "labels.txt", "env.json", StateFile, StepsFile, BestResultsFile}

// runState is state.json.
type runState struct {
	State     string    `json:"state"` // running, stopped, finished, failed
	Message   string    `json:"message,omitempty"`
	Epoch     int       `json:"epoch"` // completed
	Epochs    int       `json:"epochs"`
	BestEpoch int       `json:"best_epoch,omitempty"`
	BestAcc   float64   `json:"best_val_accuracy"`
	Model     string    `json:"model"`
	Device    string    `json:"device"`
	Data      string    `json:"data"`
	PID       int       `json:"pid"`
	Updated   time.Time `json:"updated"`
}

const stateFailed = "failed"

// rundir is a run's folder, held (locked) while a run trains in it: it is
// created (runs/NAME under a new name) or resumed, and it writes every
// file of the run: the settings, labels and environment, the checkpoints,
// results.csv, steps.csv, results.json and state.json.
type rundir struct {
	dir  string
	fs   FileSystem // nil: the real file system
	lock *runLock
}

// createRunDir makes project/NAME (name, or "train" when empty; an
// existing run is never overwritten: the next number is taken, name2,
// name3, ...) and locks it.
func createRunDir(project, name string, fs FileSystem) (*rundir, error) {
	if err := os.MkdirAll(project, 0o755); err != nil {
		return nil, fmt.Errorf("trainer: project folder: %w", err)
	}
	if name == "" {
		name = "train"
	}
	for i := 1; ; i++ {
		dir := filepath.Join(project, name)
		if i > 1 {
			dir += strconv.Itoa(i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			lock, err := lockRunDir(dir)
			if err != nil {
				return nil, err
			}
			return &rundir{dir: dir, fs: fs, lock: lock}, nil
		}
		if !os.IsExist(err) {
			return nil, fmt.Errorf("trainer: run folder: %w", err)
		}
	}
}

// newRunDir creates and locks a new run's folder and records its
// settings, labels and environment.
func newRunDir(cfg Config, opts Options, s *session, ds *data.Dataset) (*rundir, error) {
	d, err := createRunDir(cfg.Project, cfg.Name, opts.FS)
	if err != nil {
		return nil, err
	}
	if err := d.writeMeta(cfg, ds.Classes, fingerprint(s.device, s.reason, ds)); err != nil {
		d.release()
		return nil, err
	}
	return d, nil
}

// openRunDir locks an existing run folder, to resume it.
func openRunDir(dir string, fs FileSystem) (*rundir, error) {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%w: resume: %s is not a run folder: give the folder of the run to resume (runs/NAME)", ErrCheckpoint, dir)
	}
	lock, err := lockRunDir(dir)
	if err != nil {
		return nil, err
	}
	return &rundir{dir: dir, fs: fs, lock: lock}, nil
}

// release lets the folder's lock go (nil does nothing).
func (d *rundir) release() {
	if d != nil {
		d.lock.release()
	}
}

func (d *rundir) path(name string) string { return filepath.Join(d.dir, name) }

// resumed is what a run folder to resume holds: its settings, with the
// epochs to add and the device to go on on, and its last checkpoint (nil
// when it stopped before its first: it trains again from the start).
type resumed struct {
	d      *rundir
	cfg    Config
	ck     *Checkpoint
	note   string // said at the start: no checkpoint, or an unverified one
	extend string // what "train more epochs" does to the learning rate
}

// resumeRun locks the run folder opts.Resume and reads its last
// checkpoint, or, when it has none, its args.yaml. On an error the folder
// is released.
func resumeRun(opts Options) (*resumed, error) {
	d, err := openRunDir(opts.Resume, opts.FS)
	if err != nil {
		return nil, err
	}
	rs, err := d.resume(opts)
	if err != nil {
		d.release()
		return nil, err
	}
	if opts.Device != "" {
		rs.cfg.Device = opts.Device
	}
	return rs, nil
}

func (d *rundir) resume(opts Options) (*resumed, error) {
	last := d.path("last.ckpt")
	if _, err := os.Lstat(last); errors.Is(err, os.ErrNotExist) {
		return d.restartEmpty(opts.Extend)
	}
	ck, err := LoadCheckpoint(last)
	if err != nil {
		return nil, err // it names the file and what to use instead
	}
	if ck.Finished && opts.Extend == 0 {
		return nil, fmt.Errorf("%w: %s finished its %s: add epochs with --extend N", ErrCheckpoint, d.dir, plural.Count(ck.Config.Epochs, "epoch"))
	}
	rs := &resumed{d: d, cfg: ck.Config, ck: ck}
	if w := ck.Warning(); w != "" {
		rs.note = "warning: " + w
	}
	rs.cfg.Epochs += opts.Extend
	if opts.Extend > 0 {
		rs.cfg, rs.extend = continueSchedule(rs.cfg, ck, opts.Extend)
	}
	return rs, nil
}

// restartEmpty resumes a run that has no checkpoint (it was stopped or
// killed before its first epoch ended, perhaps in the middle of writing
// its first checkpoint): it trains again from the start in the same
// folder, with the settings of its args.yaml. The first save removes the
// temporary file an interrupted save left.
func (d *rundir) restartEmpty(extend int) (*resumed, error) {
	args := d.path("args.yaml")
	raw, err := safefile.ReadFile(args, MaxConfigFile, "a run's args.yaml")
	if err != nil {
		return nil, fmt.Errorf("%w: resume: %s has no last.ckpt and no readable args.yaml (%w): it is not a gpuwizard run folder", ErrCheckpoint, d.dir, err)
	}
	cfg, err := ParseConfig(args, raw, Defaults())
	if err != nil {
		return nil, fmt.Errorf("%w: resume: %s has no checkpoint, and its settings cannot be read: %w", ErrCheckpoint, d.dir, err)
	}
	cfg.Epochs += extend
	note := d.dir + " has no checkpoint (it stopped before its first epoch ended): resumed from the start, with its args.yaml"
	return &resumed{d: d, cfg: cfg, note: note}, nil
}

// writeMeta records a new run's settings (args.yaml: the batch asked
// for), its class names (labels.txt) and its environment (env.json).
func (d *rundir) writeMeta(cfg Config, classes []string, env []byte) error {
	files := map[string][]byte{
		"args.yaml": cfg.YAML(),
		// One class a line: a control character in a name is written
		// escaped (\n, \x1b), so the file has a line per class.
		"labels.txt": []byte(strings.Join(printable.Strings(classes), "\n") + "\n"),
		"env.json":   env,
	}
	for name, b := range files {
		if err := writeAtomic(d.fs, d.path(name), b); err != nil {
			return fmt.Errorf("trainer: %w", err)
		}
	}
	return nil
}

// fingerprint is env.json: the machine, the device and the dataset.
func fingerprint(device, reason string, ds *data.Dataset) []byte {
	host, _ := os.Hostname()
	env := map[string]any{
		"go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH, "cpus": runtime.NumCPU(),
		"threads": runtime.GOMAXPROCS(0), "host": host, "device": device, "device_reason": reason,
		"dataset": map[string]any{"root": ds.Root, "format": ds.Format, "classes": len(ds.Classes),
			"train": ds.Train.Len(), "val": ds.Val.Len(), "size": fmt.Sprintf("%dx%dx%d", ds.Channels, ds.Height, ds.Width)},
		"started": time.Now().UTC().Format(time.RFC3339),
	}
	b, _ := json.MarshalIndent(env, "", "  ")
	return append(b, '\n')
}

// saveCheckpoint writes last.ckpt or best.ckpt.
func (d *rundir) saveCheckpoint(name string, ck *Checkpoint) error {
	if err := SaveCheckpoint(d.fs, d.path(name), ck); err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	return nil
}

// writeCurves rewrites results.csv (one row per epoch) and steps.csv.
func (d *rundir) writeCurves(history []EpochResult, steps []StepPoint) error {
	if err := writeAtomic(d.fs, d.path("results.csv"), resultsCSV(history)); err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	if err := writeAtomic(d.fs, d.path(StepsFile), stepsCSV(steps)); err != nil {
		return fmt.Errorf("trainer: %w", err)
	}
	return nil
}

// readSteps reads steps.csv up to epoch upTo (see readSteps).
func (d *rundir) readSteps(upTo float64) []StepPoint { return readSteps(d.path(StepsFile), upTo) }

// writeResult writes results.json.
func (d *rundir) writeResult(res *Result) error {
	b, _ := json.MarshalIndent(res, "", "  ")
	return writeAtomic(d.fs, d.path(ResultsFile), append(b, '\n'))
}

// saveState records the run's state; a failure to write it is not a
// failure of the run (the checkpoints are what count), so it is ignored.
func (d *rundir) saveState(st runState) {
	st.PID, st.Updated = os.Getpid(), time.Now().UTC()
	b, _ := json.MarshalIndent(st, "", "  ")
	_ = writeAtomic(d.fs, d.path(StateFile), append(b, '\n'))
}

// resultsCSV writes Ultralytics-style columns, one row per epoch: a
// detector's (detectResultsCSV) when the rows are a detector's.
func resultsCSV(h []EpochResult) []byte {
	for _, e := range h {
		if e.BoxLoss != 0 || e.ClsLoss != 0 || e.ObjLoss != 0 {
			return detectResultsCSV(h)
		}
	}
	var b strings.Builder
	b.WriteString("epoch,time,train/loss,train/accuracy,val/loss,metrics/accuracy_top1,metrics/accuracy_top5,lr/pg0,images_per_s\n")
	var elapsed float64
	for _, e := range h {
		elapsed += e.Seconds
		fmt.Fprintf(&b, "%d,%.3f,%.6f,%.6f,%.6f,%.6f,%.6f,%.8f,%.1f\n", e.Epoch, elapsed, e.TrainLoss, e.TrainAcc, e.ValLoss, e.ValAcc, e.ValTop5, e.LR, e.ImagesPerSec)
	}
	return []byte(b.String())
}

// writeAtomic replaces a file of the run folder. It first removes the
// temporary files (".last.ckpt.tmp-*" and the like) that a save left when
// its process was killed: the run folder is locked, so no other save is
// under way.
func writeAtomic(fsys FileSystem, path string, data []byte) error {
	if fsys == nil {
		fsys = OSFileSystem{}
	}
	dir := filepath.Dir(path)
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			for _, f := range runFiles {
				if strings.HasPrefix(e.Name(), "."+f+".tmp-") && e.Type().IsRegular() {
					fsys.Remove(filepath.Join(dir, e.Name()))
				}
			}
		}
	}
	return atomicfile.Write(fsys, path, data)
}

// detectResultsCSV is a detector's results.csv: its loss terms and mAP
// per epoch, named as Ultralytics names them (without its "(B)").
func detectResultsCSV(h []EpochResult) []byte {
	var b strings.Builder
	b.WriteString("epoch,time,train/box_loss,train/cls_loss,train/obj_loss,metrics/mAP50,metrics/mAP50-95,val/box_loss,val/cls_loss,val/obj_loss,lr/pg0,images_per_s\n")
	var elapsed float64
	for _, e := range h {
		elapsed += e.Seconds
		fmt.Fprintf(&b, "%d,%.3f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.8f,%.1f\n", e.Epoch, elapsed, e.BoxLoss, e.ClsLoss, e.ObjLoss, e.MAP50, e.MAP5095,
			e.ValBoxLoss, e.ValClsLoss, e.ValObjLoss, e.LR, e.ImagesPerSec)
	}
	return []byte(b.String())
}
