package fix

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"gpuwizard/gpu"
)

// UndoResult is what an undo did and whether the environment now holds
// exactly the recorded packages.
type UndoResult struct {
	Dir         string    `json:"dir"`
	Interpreter string    `json:"interpreter"`
	Commands    []Command `json:"commands,omitempty"` // what ran
	Exact       bool      `json:"exact"`              // pip freeze equals the record byte for byte
	Diff        []string  `json:"diff,omitempty"`     // what differs when not
}

// Undo puts the environment a fix changed back to the packages recorded in
// dir before it: it uninstalls what was added, reinstalls (without
// dependencies) the recorded version of what changed or went, then
// compares pip freeze with the record.
func Undo(ctx context.Context, dir string, x Exec) (UndoResult, error) {
	x.Runner = x.runner()
	b, err := readRecord(dir, PlanFile)
	if err != nil {
		return UndoResult{Dir: dir}, fmt.Errorf("undo: %w", err)
	}
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil || p.Interpreter == "" {
		return UndoResult{Dir: dir}, fmt.Errorf("undo: %s/%s is not a fix's plan (%v)", dir, PlanFile, err)
	}
	recorded, err := readRecord(dir, FreezeFile)
	if err != nil {
		return UndoResult{Dir: dir, Interpreter: p.Interpreter}, fmt.Errorf("undo: %w", err)
	}
	u, err := restoreUserSite(ctx, p, x)
	if err != nil {
		return u, err
	}
	r, err := restore(ctx, p.Interpreter, x, dir, recorded)
	r.Commands = append(u.Commands, r.Commands...)
	return r, err
}

// restoreUserSite puts back the user-site copies a fix removed.
func restoreUserSite(ctx context.Context, p Plan, x Exec) (UndoResult, error) {
	u := UndoResult{Interpreter: p.Interpreter}
	var specs []string
	for _, a := range p.Actions {
		specs = append(specs, a.UserSite...)
	}
	if len(specs) == 0 {
		return u, nil
	}
	args := append([]string{p.Interpreter, "-m", "pip", "install", "--user", "--no-deps", "--force-reinstall"}, specs...)
	c := Command{Args: append(args, undoIndexArgs(x.IndexURL, specs)...)}
	u.Commands = append(u.Commands, c)
	x.log("$ " + c.String())
	if err := x.Runner.Run(ctx, c.Args, x.log); err != nil {
		return u, fmt.Errorf("undo: putting back the user-site copies: %w", err)
	}
	return u, nil
}

// restore makes py's packages those of the recorded freeze.
func restore(ctx context.Context, py string, x Exec, dir string, recorded []byte) (UndoResult, error) {
	u := UndoResult{Dir: dir, Interpreter: py}
	cur, err := freeze(ctx, x.Runner, py)
	if err != nil {
		return u, err
	}
	if bytes.Equal(cur, recorded) {
		u.Exact = true
		return u, nil
	}
	rec, now := freezeLines(recorded), freezeLines(cur)
	var added []string
	for _, name := range sortedNames(now) {
		if _, ok := rec[name]; !ok && name != "pip" {
			added = append(added, name)
		}
	}
	var changed []string
	for _, name := range sortedNames(rec) {
		if now[name] != rec[name] {
			changed = append(changed, rec[name])
		}
	}
	if len(added) > 0 {
		u.Commands = append(u.Commands, Command{Args: append([]string{py, "-m", "pip", "uninstall", "-y"}, added...)})
	}
	if len(changed) > 0 {
		if err := writeRecord(dir, undoReqs, []byte(strings.Join(changed, "\n")+"\n")); err != nil {
			return u, err
		}
		args := []string{py, "-m", "pip", "install", "--no-deps", "--force-reinstall", "-r", filepath.Join(dir, undoReqs)}
		u.Commands = append(u.Commands, Command{Args: append(args, undoIndexArgs(x.IndexURL, changed)...)})
	}
	for _, c := range u.Commands {
		x.log("$ " + c.String())
		if err := x.Runner.Run(ctx, c.Args, x.log); err != nil {
			return u, fmt.Errorf("undo: %w", err)
		}
	}
	after, err := freeze(ctx, x.Runner, py)
	if err != nil {
		return u, err
	}
	u.Exact = bytes.Equal(after, recorded)
	if !u.Exact {
		u.Diff = diffLines(freezeLines(recorded), freezeLines(after))
	}
	return u, nil
}

// freezeLines maps each package's normalised name to its freeze line.
func freezeLines(b []byte) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out[freezeName(line)] = line
	}
	return out
}

// freezeName is the package a freeze line names: "torch==2.5.1+cpu",
// "pkg @ file:///…", "-e git+…#egg=pkg".
func freezeName(line string) string {
	if _, egg, ok := strings.Cut(line, "#egg="); ok {
		return gpu.NormalizeName(egg)
	}
	for _, sep := range []string{"==", " @ ", "==="} {
		if i := strings.Index(line, sep); i > 0 {
			return gpu.NormalizeName(strings.TrimSpace(line[:i]))
		}
	}
	return gpu.NormalizeName(strings.TrimSpace(line))
}

func sortedNames(m map[string]string) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// diffLines says what the environment has that the record has not, and
// the reverse.
func diffLines(rec, now map[string]string) []string {
	var d []string
	for _, n := range sortedNames(rec) {
		if now[n] != rec[n] {
			d = append(d, fmt.Sprintf("recorded %q, now %q", rec[n], now[n]))
		}
	}
	for _, n := range sortedNames(now) {
		if _, ok := rec[n]; !ok {
			d = append(d, fmt.Sprintf("%q was not in the record", now[n]))
		}
	}
	return d
}

// undoIndexArgs are where the recorded wheels are found: the index given,
// else PyPI with PyTorch's index of each local build tag (+cpu, +cu126),
// since those builds are not on PyPI.
func undoIndexArgs(index string, lines []string) []string {
	if index != "" {
		return indexArgs(index)
	}
	var args []string
	seen := map[string]bool{}
	for _, l := range lines {
		tag := gpu.LocalTag(l)
		if (tag == "cpu" || gpu.VariantCUDA(tag) != "" || strings.HasPrefix(tag, "rocm")) && !seen[tag] {
			seen[tag] = true
			args = append(args, "--extra-index-url", "https://download.pytorch.org/whl/"+tag)
		}
	}
	return args
}
