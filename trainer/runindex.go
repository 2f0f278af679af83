package trainer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gpuwizard/internal/atomicfile"
	"gpuwizard/internal/safefile"
)

// The run index is a small file in the user's config folder that lists
// every run folder a trainer made or resumed, wherever it is (the command
// line writes to ./runs/NAME of the folder it was started in), so that the
// window can list them beside its own project. It is a list, not a
// record: the run folders hold everything, and an index that is missing,
// damaged or foreign only hides runs, never breaks a listing.
const (
	// RunIndexFile is the index's name in the config folder.
	RunIndexFile = "runs-index.json"
	// MaxRunIndexFile caps the index on disk; a larger file is not read.
	MaxRunIndexFile = 256 << 10
	// MaxIndexedRuns is how many run folders the index keeps (the newest)
	// and how many of its entries a listing looks at.
	MaxIndexedRuns = 500
	// maxIndexedPath skips entries longer than any real path.
	maxIndexedPath = 4096
)

// ErrRunIndex is returned (wrapped) for an index that cannot be read or
// written; the message names the file.
var ErrRunIndex = errors.New("trainer: run index")

// runIndex is the file's form.
type runIndex struct {
	Version int      `json:"version"`
	Runs    []string `json:"runs"` // absolute run folders, the latest recorded first
}

// DefaultRunIndex is where the index lives: os.UserConfigDir()/gpuwizard/
// runs-index.json. Callers pass it on in Options.RunIndex; the trainer
// itself never writes there unless told to, so tests stay off the real
// config folder.
func DefaultRunIndex() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("%w: no config folder for the list of runs: %w", ErrRunIndex, err)
	}
	return filepath.Join(dir, "gpuwizard", RunIndexFile), nil
}

// RecordRun puts run folder dir at the head of the index at path, made
// absolute, once; folders that are no longer runs are dropped, and so are
// the oldest entries past MaxIndexedRuns or the file's cap. A missing or
// damaged index starts afresh. The write is atomic and serialised with
// other processes by a lock file beside the index.
func RecordRun(path, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrRunIndex, dir, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("%w: making the folder of %s: %w", ErrRunIndex, path, err)
	}
	unlock := lockIndex(path)
	defer unlock()
	old, _ := readRunIndex(path) // a damaged index is replaced
	runs := []string{abs}
	for _, d := range old {
		if d != abs && isRunDir(d) {
			runs = append(runs, d)
		}
	}
	return writeRunIndex(path, runs)
}

// IndexedRunDirs reads the index at path: the run folders it lists, each
// absolute and clean, once, the latest recorded first, at most
// MaxIndexedRuns. A missing index lists nothing. The file is read as any
// user file is (a regular file, capped at MaxRunIndexFile), and entries
// that cannot be folders (relative, too long, with control characters) are
// skipped.
func IndexedRunDirs(path string) ([]string, error) {
	return readRunIndex(path)
}

// ListIndexedRuns reads the runs the index at path lists, leaving out the
// folders of known (a listing made already, such as the project's), newest
// first. Entries that are no longer run folders (deleted, moved) are
// skipped and pruned from the index. An unreadable or damaged index is an
// error that names it, with no runs: the caller still has its own.
func ListIndexedRuns(path string, known []RunInfo) ([]RunInfo, error) {
	dirs, err := readRunIndex(path)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, r := range known {
		if abs, err := filepath.Abs(r.Dir); err == nil {
			seen[abs] = true
		}
	}
	var out []RunInfo
	pruned := false
	for _, d := range dirs {
		if seen[d] {
			continue
		}
		seen[d] = true
		ri, err := ReadRun(d)
		if errors.Is(err, ErrNotRun) {
			pruned = true
			continue
		}
		out = append(out, ri)
	}
	if pruned {
		pruneRunIndex(path)
	}
	SortRuns(out)
	return out, nil
}

// pruneRunIndex drops the entries that are no longer run folders; it is
// best effort (the next RecordRun prunes too).
func pruneRunIndex(path string) {
	unlock := lockIndex(path)
	defer unlock()
	dirs, err := readRunIndex(path)
	if err != nil {
		return
	}
	var keep []string
	for _, d := range dirs {
		if isRunDir(d) {
			keep = append(keep, d)
		}
	}
	if len(keep) < len(dirs) {
		_ = writeRunIndex(path, keep)
	}
}

// isRunDir says whether dir still looks like a run folder (a folder with an
// args.yaml), without reading it.
func isRunDir(dir string) bool {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return false
	}
	_, err = safefile.Check(filepath.Join(dir, "args.yaml"))
	return err == nil
}

// readRunIndex reads and checks the index; see IndexedRunDirs.
func readRunIndex(path string) ([]string, error) {
	b, err := safefile.ReadFile(path, MaxRunIndexFile, "the list of runs")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w (it is rewritten at the next run; delete it to start afresh)", ErrRunIndex, err)
	}
	var idx runIndex
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("%w: %s is not the JSON list of runs gpuwizard writes (%w); delete it, the next run writes a new one", ErrRunIndex, path, err)
	}
	var out []string
	seen := map[string]bool{}
	for _, d := range idx.Runs {
		if len(out) == MaxIndexedRuns {
			break
		}
		if len(d) > maxIndexedPath || !filepath.IsAbs(d) || strings.ContainsFunc(d, isControl) {
			continue
		}
		d = filepath.Clean(d)
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out, nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// writeRunIndex writes runs (the newest first) atomically, keeping as many
// as fit MaxIndexedRuns and MaxRunIndexFile.
func writeRunIndex(path string, runs []string) error {
	runs = runs[:min(len(runs), MaxIndexedRuns)]
	for {
		b, err := json.MarshalIndent(runIndex{Version: 1, Runs: runs}, "", "  ")
		if err != nil {
			return fmt.Errorf("%w: %w", ErrRunIndex, err)
		}
		if len(b) < MaxRunIndexFile || len(runs) <= 1 {
			if err := atomicfile.Write(atomicfile.OS{}, path, append(b, '\n')); err != nil {
				return fmt.Errorf("%w: %w (move %s aside or make its folder writable: gpuwizard writes it anew)", ErrRunIndex, err, filepath.Base(path))
			}
			return nil
		}
		runs = runs[:len(runs)*3/4] // the oldest go first
	}
}

// lockIndex serialises the index's read-modify-write between processes
// (two trainings started at once): an exclusive lock on path + ".lock",
// waited for up to two seconds, then done without (the index is only a
// list). It returns the release.
func lockIndex(path string) func() {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return func() {}
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		held, err := tryLock(f)
		if held || err != nil || time.Now().After(deadline) {
			return func() { f.Close() } // closing releases the flock
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// SortRuns orders runs newest first, then by name (as ListRuns does), so
// that a caller can merge listings.
func SortRuns(runs []RunInfo) { sortRuns(runs) }
