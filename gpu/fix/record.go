package fix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gpuwizard/internal/atomicfile"
	"gpuwizard/internal/safefile"
)

// Files of a fix's record folder.
const (
	FreezeFile = "freeze.txt"         // PY -m pip freeze --all, before any change
	CondaFile  = "conda-explicit.txt" // conda list --explicit, for a conda environment
	PlanFile   = "plan.json"          // the plan that ran
	ResultFile = "result.json"        // how it ended
	undoReqs   = "undo-requirements.txt"
	maxRecord  = 16 << 20 // a freeze of thousands of packages is well under this
)

// ErrLink is returned (wrapped) when a folder of the fixes' path is a
// symbolic link or not a folder: records are never written through one.
var ErrLink = errors.New("fix: a link or a file where a folder was expected")

// FixesDir is where fixes are recorded: ~/gpuwizard/fixes.
func FixesDir(home string) string { return filepath.Join(home, "gpuwizard", "fixes") }

// ensureDir makes dir's folders below home, refusing any that is a link
// (which could lead the records out of the user's folder) or a file.
func ensureDir(home, dir string) error {
	rel, err := filepath.Rel(home, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("the fixes folder %s is not inside the home folder %s", dir, home)
	}
	cur := home
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." || part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		st, err := os.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(cur, 0o700); err != nil {
				return fmt.Errorf("making the fixes folder: %w", err)
			}
		case err != nil:
			return fmt.Errorf("the fixes folder %s: %w", cur, err)
		case !st.IsDir() || st.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0: // a link, or a Windows junction
			return fmt.Errorf("%s: %w; remove it or move it away", cur, ErrLink)
		}
	}
	return nil
}

// newRecordDir makes ~/gpuwizard/fixes/<time>, a new folder of its own.
func newRecordDir(home string, now time.Time) (string, error) {
	root := FixesDir(home)
	if err := ensureDir(home, root); err != nil {
		return "", err
	}
	stamp := now.UTC().Format("20060102T150405Z")
	for i := 1; i < 100; i++ {
		name := stamp
		if i > 1 {
			name = fmt.Sprintf("%s-%d", stamp, i)
		}
		dir := filepath.Join(root, name)
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("making the record folder: %w", err)
		}
	}
	return "", fmt.Errorf("making the record folder in %s: 99 fixes this second already", root)
}

// Latest is the newest record folder in ~/gpuwizard/fixes that holds a
// freeze.
func Latest(home string) (string, error) {
	root := FixesDir(home)
	ents, err := os.ReadDir(root)
	if err != nil {
		return "", fmt.Errorf("no fix recorded (%w): nothing to undo", err)
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for i := len(names) - 1; i >= 0; i-- {
		dir := filepath.Join(root, names[i])
		if st, err := os.Lstat(filepath.Join(dir, FreezeFile)); err == nil && st.Mode().IsRegular() {
			return dir, nil
		}
	}
	return "", fmt.Errorf("no fix recorded in %s: nothing to undo", root)
}

// writeRecord writes one file of a record folder atomically.
func writeRecord(dir, name string, data []byte) error {
	return atomicfile.Write(nil, filepath.Join(dir, name), data)
}

func writeJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", name, err)
	}
	return writeRecord(dir, name, append(b, '\n'))
}

// readRecord reads a regular file of a record folder (never a link).
func readRecord(dir, name string) ([]byte, error) {
	return safefile.ReadFile(filepath.Join(dir, name), maxRecord, "a fix record")
}

// freeze is the interpreter's pip freeze, every package included.
func freeze(ctx context.Context, r Runner, py string) ([]byte, error) {
	out, err := r.Output(ctx, []string{py, "-m", "pip", "freeze", "--all"})
	if err != nil {
		return nil, fmt.Errorf("recording the environment's packages: %w", err)
	}
	return out, nil
}

// condaExe is the conda that manages a conda environment at prefix: the
// active one ($CONDA_EXE), else the environment's own or its base's.
func condaExe(prefix string, environ map[string]string) string {
	if c := environ["CONDA_EXE"]; c != "" {
		return c
	}
	cands := []string{filepath.Join(prefix, "bin", "conda"), filepath.Join(prefix, "Scripts", "conda.exe")}
	if filepath.Base(filepath.Dir(prefix)) == "envs" {
		base := filepath.Dir(filepath.Dir(prefix))
		cands = append(cands, filepath.Join(base, "bin", "conda"), filepath.Join(base, "Scripts", "conda.exe"))
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return c
		}
	}
	return ""
}

// record writes what the environment holds before the fix: the freeze,
// the conda list where conda manages it, and the plan.
func record(ctx context.Context, p Plan, x Exec, dir string) ([]byte, error) {
	fr, err := freeze(ctx, x.Runner, p.Interpreter)
	if err != nil {
		return nil, err
	}
	if err := writeRecord(dir, FreezeFile, fr); err != nil {
		return nil, err
	}
	if err := writeJSON(dir, PlanFile, p); err != nil {
		return nil, err
	}
	if p.EnvKind != "conda" {
		return fr, nil
	}
	conda := condaExe(p.Prefix, x.Environ)
	if conda == "" {
		x.log("No conda found for " + p.Prefix + ": only pip's list is recorded (pip's changes are what undo reverses)")
		return fr, nil
	}
	out, err := x.Runner.Output(ctx, []string{conda, "list", "--explicit", "-p", p.Prefix})
	if err != nil {
		x.log("conda list --explicit failed (" + err.Error() + "): only pip's list is recorded")
		return fr, nil
	}
	return fr, writeRecord(dir, CondaFile, out)
}
