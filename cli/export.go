package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"gpuwizard/internal/printable"
	"gpuwizard/trainer"
)

// exportHelp is the help of `gpuwizard export`.
func exportHelp() help {
	return help{
		usage: "Usage: gpuwizard export RUN --out FILE [--format onnx|folder]",
		about: `Exports a model gpuwizard train made so that it can leave gpuwizard. RUN is a
run folder (its best checkpoint: runs/NAME), runs/NAME/last, or a .ckpt file.

--format onnx (the default) writes an ONNX file that OpenCV's DNN module, ONNX
Runtime or PyTorch can run. Its input "image" is float32 N×C×H×W: the image
resized to the model's input size, its pixels scaled to [0, 1] (value/255),
3 channels R, G, B or, for a grey model, 1 channel of luma
(0.299 R + 0.587 G + 0.114 B); nothing else is done outside the graph. Its
output "probabilities" holds each class's probability in class order. The
class names (JSON), the input size and channels and these rules are in the
file's metadata.

--format folder copies the run folder (checkpoints, settings, results, curves;
a stopped run's results are computed first) to the folder --out names, for
gpuwizard predict --model FOLDER elsewhere. --out must not exist; what is
written appears whole or not at all.
`,
		examples: `  gpuwizard export runs/train --out digits.onnx
  gpuwizard export runs/train/last --format onnx --out last.onnx
  gpuwizard export runs/train --format folder --out /media/usb/train
`,
		exit: `0 exported; 2 usage or input error (bad flags; a run or checkpoint
that is missing or damaged; --out exists); 1 any other failure (the disk).
`,
	}
}

// Export runs `gpuwizard export RUN --format onnx --out FILE`.
func Export(ctx context.Context, args []string, env Env) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	format := fs.String("format", trainer.ExportONNXFormat, "onnx (a model file) or folder (a copy of the run folder)")
	out := fs.String("out", "", "the file (onnx) or folder (folder) to create; it must not exist")
	// RUN may come before the flags, as the usage shows it.
	var run string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		run, args = args[0], args[1:]
	}
	if code, ok := parseFlags(fs, args, env, exportHelp()); !ok {
		return code
	}
	if run == "" && fs.NArg() > 0 {
		run = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "export: unexpected argument %q (see gpuwizard export -h)\n", printable.String(fs.Arg(0)))
		return ExitUsage
	}
	if run == "" || *out == "" {
		fmt.Fprintln(env.Stderr, "export: give a run and a file to write: gpuwizard export runs/NAME --out model.onnx (see gpuwizard export -h)")
		return ExitUsage
	}
	if _, err := os.Lstat(*out); err == nil {
		fmt.Fprintf(env.Stderr, "export: %s already exists: choose another name\n", printable.String(*out))
		return ExitUsage
	}
	var err error
	switch *format {
	case trainer.ExportONNXFormat:
		err = trainer.ExportONNX(run, *out)
	case trainer.ExportFolder:
		err = trainer.ExportRun(ctx, run, *out)
	default:
		fmt.Fprintf(env.Stderr, "export: --format %q: write onnx or folder\n", printable.String(*format))
		return ExitUsage
	}
	if err != nil {
		printErr(env.Stderr, "export:", err)
		return exitFor(err)
	}
	fmt.Fprintf(env.Stderr, "export: wrote %s (%s)\n", printable.String(*out), *format)
	return ExitOK
}
