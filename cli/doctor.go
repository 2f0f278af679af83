package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
	"gpuwizard/gpu/doctor"
	"gpuwizard/gpu/paste"
	"gpuwizard/gpu/probe"
	"gpuwizard/internal/atomicfile"
	"gpuwizard/internal/safefile"
)

// doctorHelp is the help of `gpuwizard doctor`.
func doctorHelp() help {
	return help{
		usage: `Usage: gpuwizard doctor [flags]
       gpuwizard doctor --from FILE    (a report pasted from another machine; - reads standard input)
       gpuwizard doctor --facts FILE   (facts saved with --save)`,
		about: `Checks whether this machine can train on its NVIDIA GPU: the GPU, kernel
module, driver, CUDA, cuDNN, the Python frameworks and the interpreter you
run. Every problem comes with its evidence and the command that fixes it.
With --from it diagnoses a report pasted from another machine instead.
`,
		examples: `  gpuwizard doctor
  gpuwizard doctor --deep --markdown > report.md
  xclip -o | gpuwizard doctor --from -
  gpuwizard doctor --health --gpus 8    (a Slurm HealthCheckProgram's check)
`,
		exit: `0 ready for GPU training, 1 not ready, 2 usage or input error (bad
flags, a --from or --facts file that is missing or unreadable). With
--health: 0 healthy, 1 not (the line says why), 2 usage error.
`,
	}
}

// Doctor runs `gpuwizard doctor` and returns its exit code: 0 ready, 1 not
// ready, 2 usage or input error.
func Doctor(ctx context.Context, args []string, env Env) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	var (
		asJSON     = fs.Bool("json", false, "print the report as JSON: {\"ready\", \"verdict\", \"findings\", \"facts\"}")
		asMarkdown = fs.Bool("markdown", false, "print the report as Markdown, for an issue or a forum post")
		deep       = fs.Bool("deep", false, "also run a real matmul and conv2d on every GPU through each Python with torch (slower)")
		save       = fs.String("save", "", "write the facts as JSON to `FILE` (diagnose them later with --facts)")
		factsFile  = fs.String("facts", "", "diagnose saved facts from `FILE` instead of this machine")
		fromFile   = fs.String("from", "", "diagnose a report pasted from another machine, read from `FILE` (- for standard input): collect_env, nvidia-smi, nvcc, Ultralytics or TensorFlow output, a traceback")
		timeout    = fs.Duration("timeout", 3*time.Second, "time limit for each probe source")
		deepTO     = fs.Duration("deep-timeout", 90*time.Second, "time limit for each interpreter's deep check")
		health     = fs.Bool("health", false, "a scheduler's health check: the driver layer only (no Python), one line, exit 0 healthy or 1 (see README: Slurm)")
		wantGPUs   = fs.Int("gpus", 0, "with --health: the NVIDIA GPUs this node must show (0: every GPU on its PCI bus)")
	)
	if code, ok := parseFlags(fs, args, env, doctorHelp()); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "doctor: unexpected argument %q (see gpuwizard doctor -h)\n", fs.Arg(0))
		return ExitUsage
	}
	if *asJSON && *asMarkdown {
		fmt.Fprintln(env.Stderr, "doctor: choose one of --json and --markdown")
		return ExitUsage
	}
	if *fromFile != "" && (*factsFile != "" || *deep) {
		fmt.Fprintln(env.Stderr, "doctor: --from reads a report from another machine; it cannot be combined with --facts or --deep")
		return ExitUsage
	}
	if *factsFile != "" && *deep {
		fmt.Fprintln(env.Stderr, "doctor: --deep checks this machine; it cannot be combined with --facts")
		return ExitUsage
	}
	if *health && (*asJSON || *asMarkdown || *deep || *fromFile != "" || *save != "") {
		fmt.Fprintln(env.Stderr, "doctor: --health prints one line about this machine's driver; it cannot be combined with --json, --markdown, --deep, --from or --save")
		return ExitUsage
	}
	if *wantGPUs < 0 || *wantGPUs > 0 && !*health {
		fmt.Fprintln(env.Stderr, "doctor: --gpus N is the GPU count --health expects (N ≥ 0)")
		return ExitUsage
	}
	if *timeout <= 0 || *deepTO <= 0 {
		fmt.Fprintln(env.Stderr, "doctor: --timeout and --deep-timeout must be positive durations, like 3s")
		return ExitUsage
	}
	matrix, err := compat.LoadMatrix()
	if err != nil {
		printErr(env.Stderr, "doctor:", err)
		return ExitUsage
	}
	if *health {
		return doctorHealth(ctx, env, *factsFile, *timeout, *wantGPUs, matrix)
	}
	var facts *gpu.Facts
	if *fromFile != "" {
		text, err := readReport(*fromFile, env.Stdin)
		if err != nil {
			printErr(env.Stderr, "doctor:", err)
			return ExitUsage
		}
		now := time.Now
		if env.Options.Now != nil {
			now = env.Options.Now
		}
		facts = paste.Parse(text, now())
	} else if *factsFile != "" {
		facts, err = LoadFacts(*factsFile)
		if err != nil {
			printErr(env.Stderr, "doctor:", err)
			return ExitUsage
		}
	} else {
		opts := env.Options
		opts.Timeout, opts.Deep, opts.DeepTimeout = *timeout, *deep, *deepTO
		if *deep && !*asJSON {
			fmt.Fprintln(env.Stderr, "Running the deep check (a real matmul and conv2d on each GPU, per Python with torch)…")
		}
		facts = probe.Probe(ctx, opts)
	}
	if *save != "" {
		if err := SaveFacts(*save, facts); err != nil {
			printErr(env.Stderr, "doctor:", err)
			return ExitUsage
		}
		if !*asJSON {
			fmt.Fprintf(env.Stderr, "Facts saved to %s (diagnose them anywhere with: gpuwizard doctor --facts %s)\n", *save, *save)
		}
	}
	report := doctor.Diagnose(facts, matrix)
	switch {
	case *asJSON:
		err = report.WriteJSON(env.Stdout)
	case *asMarkdown:
		err = report.WriteMarkdown(env.Stdout)
	default:
		err = report.WriteText(env.Stdout, env.Color)
	}
	if err != nil {
		printErr(env.Stderr, "doctor: writing the report:", err)
		return ExitUsage
	}
	if report.Ready {
		return ExitReady
	}
	return ExitNotReady
}

// doctorHealth is `doctor --health`: the driver layer of this machine (or
// of saved facts), one line on standard output, exit 0 healthy, 1 not.
func doctorHealth(ctx context.Context, env Env, factsFile string, timeout time.Duration, want int, m *compat.Matrix) int {
	var facts *gpu.Facts
	if factsFile != "" {
		var err error
		if facts, err = LoadFacts(factsFile); err != nil {
			printErr(env.Stderr, "doctor:", err)
			return ExitUsage
		}
	} else {
		opts := env.Options
		opts.Timeout, opts.Only = timeout, doctor.HealthSources
		facts = probe.Probe(ctx, opts)
	}
	healthy, line := doctor.Health(doctor.Diagnose(facts, m), want)
	fmt.Fprintln(env.Stdout, line)
	if healthy {
		return ExitOK
	}
	return ExitFailed
}

// MaxFacts is the largest facts file --facts reads (a saved report of a
// machine with many GPUs and Python environments is well under 1 MiB).
const MaxFacts = 32 << 20

// MaxReport is the largest report --from reads.
const MaxReport = 8 << 20

// readReport reads a pasted report from a file or, for "-", from stdin.
func readReport(path string, stdin io.Reader) (string, error) {
	var r io.Reader
	if path == "-" {
		if stdin == nil {
			return "", errors.New("--from -: no standard input")
		}
		r = stdin
	} else {
		b, err := safefile.ReadFile(path, MaxReport, "a pasted report")
		if err != nil {
			return "", fmt.Errorf("reading the report: %w (paste only the error and the version output)", err)
		}
		r = bytes.NewReader(b)
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxReport+1))
	if err != nil {
		return "", fmt.Errorf("reading the report %s: %w", path, err)
	}
	if len(b) > MaxReport {
		return "", fmt.Errorf("the report %s is larger than %d MiB: paste only the error and the version output", path, MaxReport>>20)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return "", fmt.Errorf("the report %s is empty", path)
	}
	return string(b), nil
}

// LoadFacts reads facts saved with --save (or the "facts" of a --json report).
func LoadFacts(path string) (*gpu.Facts, error) {
	b, err := safefile.ReadFile(path, MaxFacts, "a facts file")
	if err != nil {
		return nil, fmt.Errorf("reading facts: %w", err)
	}
	var probe struct {
		Facts *json.RawMessage `json:"facts"`
	}
	raw := b
	if json.Unmarshal(b, &probe) == nil && probe.Facts != nil {
		raw = *probe.Facts // a whole --json report
	}
	var f gpu.Facts
	if err := json.Unmarshal(raw, &f); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1 + bytes.Count(raw[:min(int(se.Offset), len(raw))], []byte("\n"))
			return nil, fmt.Errorf("%s line %d: not valid JSON (%w); save facts with: gpuwizard doctor --save FILE", path, line, err)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("%s: field %q has the wrong type (%w)", path, te.Field, err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Schema == 0 {
		return nil, fmt.Errorf("%s: no \"schema\" field: this is not a gpuwizard facts file (make one with gpuwizard doctor --save FILE)", path)
	}
	if f.Schema > gpu.FactsSchema {
		return nil, fmt.Errorf("%s: facts schema %d is newer than this gpuwizard understands (%d): update gpuwizard", path, f.Schema, gpu.FactsSchema)
	}
	f.Origin = "saved"
	return &f, nil
}

// SaveFacts writes facts as JSON atomically: a temporary file in the same
// folder, synced, then renamed over the target.
func SaveFacts(path string, f *gpu.Facts) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding facts: %w", err)
	}
	return WriteFileAtomic(path, append(b, '\n'))
}

// WriteFileAtomic replaces path with data so that a crash leaves either
// the old file or the new one, never a torn one.
func WriteFileAtomic(path string, data []byte) error {
	return atomicfile.Write(nil, path, data)
}
