package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
	"gpuwizard/gpu/doctor"
	"gpuwizard/gpu/fix"
	"gpuwizard/gpu/probe"
)

// fixHelp is the help of `gpuwizard fix`.
func fixHelp() help {
	return help{
		usage: `Usage: gpuwizard fix [flags]
       gpuwizard fix --undo [DIR]   (put back the packages recorded before a fix; DIR: the newest)`,
		about: `Applies the doctor's fixes that stay inside one Python environment: a
CPU-only, ROCm or wrong-CUDA torch (torchvision and torchaudio matched), a
build without kernels for the GPU, a copy in the user site that shadows the
environment's, a CPU package beside the GPU one (onnxruntime, paddlepaddle,
tensorflow-cpu), and on Linux a CPU-only TensorFlow (tensorflow[and-cuda]) or
JAX (jax[cuda12] or jax[cuda13] by the driver). It prints the plan (the interpreter, the exact commands, what
is removed and installed, and why) and asks before it runs; it uses that
interpreter's own pip, never sudo. The packages are recorded first in
~/gpuwizard/fixes/<time>/ (pip freeze), a failure puts them back, and the
doctor checks again afterwards. Drivers, Secure Boot, containers and code are
never changed: those findings are listed with the reason.
`,
		examples: `  gpuwizard fix
  gpuwizard fix --python ~/venv/bin/python --yes
  gpuwizard fix --undo
`,
		exit: `0 the plan ran and the doctor no longer finds what it fixed (--undo: the
packages are exactly as recorded), 1 nothing fixable, not confirmed, a command
failed (the environment is put back), or a finding is left, 2 usage error,
130 stopped.
`,
	}
}

// fixFlags are gpuwizard fix's settings.
type fixFlags struct {
	yes, undo, asJSON bool
	python, index     string
	timeout, probeTO  time.Duration
}

// Fix runs `gpuwizard fix` and returns its exit code.
func Fix(ctx context.Context, args []string, env Env) int {
	fs := flag.NewFlagSet("fix", flag.ContinueOnError)
	var o fixFlags
	fs.BoolVar(&o.yes, "yes", false, "run the plan without asking")
	fs.BoolVar(&o.undo, "undo", false, "put back the packages recorded before a fix (the newest, or the record folder given)")
	fs.BoolVar(&o.asJSON, "json", false, "print the plan and the result as JSON (without --yes it only plans)")
	fs.StringVar(&o.python, "python", "", "the `PATH` of the Python to fix (default: the one `python` runs)")
	fs.StringVar(&o.index, "index-url", "", "take the wheels from this index `URL` or local folder of wheels (a mirror, tests) instead of PyTorch's (torch) or PyPI (the other packages)")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "time limit for the commands")
	fs.DurationVar(&o.probeTO, "probe-timeout", 3*time.Second, "time limit for each probe source of the doctor")
	if code, ok := parseFlags(fs, args, env, fixHelp()); !ok {
		return code
	}
	if fs.NArg() > 1 || fs.NArg() == 1 && !o.undo {
		fmt.Fprintf(env.Stderr, "fix: unexpected argument %q (see gpuwizard fix -h)\n", fs.Arg(fs.NArg()-1))
		return ExitUsage
	}
	if o.timeout <= 0 || o.probeTO <= 0 {
		fmt.Fprintln(env.Stderr, "fix: --timeout and --probe-timeout must be positive durations, like 30m")
		return ExitUsage
	}
	home := env.Options.Home
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			printErr(env.Stderr, "fix: no home folder for the records:", err)
			return ExitFailed
		}
		home = h
	}
	if o.python != "" {
		if abs, err := filepath.Abs(o.python); err == nil {
			o.python = abs
		}
	}
	if o.undo {
		return fixUndo(ctx, env, o, home, fs.Arg(0))
	}
	return fixRun(ctx, env, o, home)
}

// fixRun plans, asks, runs and checks again.
func fixRun(ctx context.Context, env Env, o fixFlags, home string) int {
	m, err := compat.LoadMatrix()
	if err != nil {
		printErr(env.Stderr, "fix:", err)
		return ExitFailed
	}
	check := liveCheck(env, o.python, o.probeTO, m)
	if !o.asJSON {
		fmt.Fprintln(env.Stderr, "Checking this machine…")
	}
	rep, _ := check(ctx)
	plan, err := fix.Make(rep, m, fix.Options{Interpreter: o.python, IndexURL: o.index, Home: home})
	if err != nil {
		printErr(env.Stderr, "fix:", err)
		return ExitFailed
	}
	out := struct {
		Plan   fix.Plan    `json:"plan"`
		Result *fix.Result `json:"result,omitempty"`
	}{Plan: plan}
	printJSON := func() {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(out)
	}
	if !o.asJSON {
		plan.WriteText(env.Stdout)
	}
	if !plan.Fixable() {
		if o.asJSON {
			printJSON()
		}
		fmt.Fprintln(env.Stderr, "fix: nothing here can be fixed automatically; the doctor's steps (gpuwizard doctor) say what to do by hand.")
		return ExitFailed
	}
	if !o.yes && (o.asJSON || !confirm(env)) {
		if o.asJSON {
			printJSON()
		}
		fmt.Fprintln(env.Stderr, "Nothing was changed (run with --yes to apply the plan).")
		return ExitFailed
	}
	x := fix.Exec{Checker: check, Home: home, IndexURL: o.index, Timeout: o.timeout,
		Environ: map[string]string{"CONDA_EXE": env.getenv("CONDA_EXE")}}
	if !o.asJSON {
		x.Log = func(s string) { fmt.Fprintln(env.Stderr, gpu.Sanitize(s)) }
	}
	res, err := fix.Execute(ctx, plan, x)
	out.Result = &res
	if o.asJSON {
		printJSON()
	} else {
		writeFixResult(env, res, err)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return ExitStopped
	case err != nil || !res.Fixed():
		return ExitFailed
	}
	return ExitOK
}

// liveCheck is the doctor of this machine, with the Python given even when
// no command on PATH runs it.
func liveCheck(env Env, python string, timeout time.Duration, m *compat.Matrix) fix.CheckFunc {
	return func(ctx context.Context) (gpu.Report, error) {
		opts := env.Options
		opts.Timeout = timeout
		f := probe.Probe(ctx, opts)
		if python != "" && !hasPython(f, python) {
			if e, ok := probe.Interpreter(opts, python); ok {
				e.FoundVia = []string{"gpuwizard fix --python"}
				f.Pythons = append(f.Pythons, e)
			}
		}
		return doctor.Diagnose(f, m), nil
	}
}

func hasPython(f *gpu.Facts, py string) bool {
	for _, e := range f.Pythons {
		if e.Interpreter == py {
			return true
		}
	}
	return false
}

// confirm asks on standard error and reads the answer from standard input;
// anything but yes (an empty line, the end of input) is no.
func confirm(env Env) bool {
	fmt.Fprint(env.Stderr, "Run this plan? [y/N] ")
	if env.Stdin == nil {
		fmt.Fprintln(env.Stderr)
		return false
	}
	line, _ := bufio.NewReader(env.Stdin).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}

func writeFixResult(env Env, res fix.Result, err error) {
	w := env.Stdout
	switch {
	case err != nil && res.Restored:
		printErr(env.Stderr, "fix:", err)
		fmt.Fprintf(w, "\nThe fix failed; the environment is back as recorded in %s.\n", res.Dir)
	case err != nil:
		printErr(env.Stderr, "fix:", err)
		if res.Dir != "" {
			fmt.Fprintf(w, "\nThe fix failed. The packages before it are recorded in %s: gpuwizard fix --undo %s\n", res.Dir, gpu.ShellQuote(res.Dir))
		}
	case res.Fixed():
		fmt.Fprintf(w, "\nFixed: %s (checked again in %s).\n%s\nUndo with: gpuwizard fix --undo %s\n", strings.Join(res.Gone, ", "), res.Took.Round(100*time.Millisecond), gpu.Sanitize(res.Verdict), gpu.ShellQuote(res.Dir))
	default:
		fmt.Fprintf(w, "\nThe plan ran, but the doctor still finds:\n")
		for _, f := range res.Left {
			fmt.Fprintf(w, "  - %s (%s)\n", gpu.Sanitize(f.Title), f.ID)
		}
		fmt.Fprintf(w, "Undo with: gpuwizard fix --undo %s\n", gpu.ShellQuote(res.Dir))
	}
}

// fixUndo restores the packages recorded in dir (the newest record when "").
func fixUndo(ctx context.Context, env Env, o fixFlags, home, dir string) int {
	if o.yes || o.python != "" {
		fmt.Fprintln(env.Stderr, "fix: --undo restores the record's own Python without asking; --yes and --python do not apply")
		return ExitUsage
	}
	if dir == "" {
		d, err := fix.Latest(home)
		if err != nil {
			printErr(env.Stderr, "fix:", err)
			return ExitFailed
		}
		dir = d
	}
	x := fix.Exec{Home: home, IndexURL: o.index, Timeout: o.timeout}
	if !o.asJSON {
		fmt.Fprintf(env.Stderr, "Putting back the packages recorded in %s…\n", dir)
		x.Log = func(s string) { fmt.Fprintln(env.Stderr, gpu.Sanitize(s)) }
	}
	u, err := fix.Undo(ctx, dir, x)
	if o.asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(u)
	}
	if err != nil {
		printErr(env.Stderr, "fix:", err)
		if errors.Is(err, context.Canceled) {
			return ExitStopped
		}
		return ExitFailed
	}
	if !o.asJSON {
		if u.Exact {
			fmt.Fprintf(env.Stdout, "%s has exactly the packages recorded in %s (pip freeze matches byte for byte).\n", u.Interpreter, dir)
		} else {
			fmt.Fprintf(env.Stdout, "%s differs from the record in %s:\n  %s\n", u.Interpreter, dir, strings.Join(u.Diff, "\n  "))
		}
	}
	if !u.Exact {
		return ExitFailed
	}
	return ExitOK
}
