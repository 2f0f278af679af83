package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"gpuwizard/internal/plural"
	"gpuwizard/internal/printable"
	"gpuwizard/trainer"
	"gpuwizard/trainer/data"
	"gpuwizard/trainer/detect"
)

// trainHelp is the help of `gpuwizard train`.
func trainHelp() help {
	return help{
		usage: `Usage: gpuwizard train [flags]
       gpuwizard train --resume runs/NAME [--extend N] [--device D]`,
		about: `Trains an image classifier on the built-in dataset (an MNIST subset) or your
images: a folder with one sub-folder per class (or train/ and val/ folders of
them), MNIST-style IDX files, or CIFAR-10 binary batches. Trains an object
detector on a YOLO data.yaml (Ultralytics or Roboflow layout; its lint runs
first and its errors stop training) or on builtin-detect (digits on cluttered
canvases); each epoch then reports the box, class and objectness losses and
mAP50 and mAP50-95 on the validation images. Results go to runs/NAME:
args.yaml, results.csv, last.ckpt and best.ckpt, labels.txt.
Ctrl-C (or SIGTERM, or a dropped SSH session) stops cleanly; resume with
--resume runs/NAME (add --device to go on on another device, e.g. --device
cpu when the GPU is gone).

Settings come from the defaults, then --config FILE, then the flags.
`,
		examples: `  gpuwizard train
  gpuwizard train --data ~/photos --epochs 20 --model cnn
  gpuwizard train --data ~/datasets/coco8/data.yaml --image-size 320 --batch 16
  gpuwizard train --data builtin-detect
  gpuwizard train --resume runs/train --extend 5
`,
		exit: `0 trained, 1 training failed (the device, the disk), 2 usage or
input error (bad flags or settings, a dataset, config or run folder that is
missing or unusable), 130 stopped (resumable).
`,
	}
}

// trainFlags are the flags of `gpuwizard train`.
type trainFlags struct {
	config string
	json   bool
	resume string
	extend int
	eager  bool
	// deviceGiven: --device was on the command line.
	deviceGiven bool
}

// newTrainFlags binds the settings flags to c (their defaults are c's
// values) and the others to the returned trainFlags.
func newTrainFlags(c *trainer.Config) (*flag.FlagSet, *trainFlags) {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	tf := &trainFlags{}
	fs.StringVar(&tf.config, "config", "", "YAML `file` with settings (flags override it)")
	fs.BoolVar(&tf.json, "json", false, "print events as JSON lines instead of a progress bar")
	fs.StringVar(&tf.resume, "resume", "", "continue the stopped or crashed run in `DIR` from its last checkpoint")
	fs.IntVar(&tf.extend, "extend", 0, "with --resume: add `N` epochs to a finished run")
	fs.BoolVar(&tf.eager, "eager", false, "on CUDA, queue every kernel of every step instead of replaying the step captured in a CUDA graph (also GPUWIZARD_EAGER=1)")
	fs.StringVar(&c.Data, "data", c.Data, "dataset `path` (a folder, a YOLO data.yaml), builtin or builtin-detect")
	fs.StringVar(&c.Model, "model", c.Model, "auto, mlp, lenet or cnn; detectors: det-n, det-s")
	fs.IntVar(&c.Epochs, "epochs", c.Epochs, "epochs to train")
	fs.IntVar(&c.Batch, "batch", c.Batch, "batch size (detectors: 16 unless set)")
	fs.Float64Var(&c.LR, "lr", c.LR, "peak learning rate")
	fs.StringVar(&c.Optimizer, "optimizer", c.Optimizer, "adam or sgd")
	fs.Float64Var(&c.Momentum, "momentum", c.Momentum, "SGD momentum")
	fs.Float64Var(&c.WeightDecay, "weight-decay", c.WeightDecay, "weight decay")
	fs.StringVar(&c.Schedule, "schedule", c.Schedule, "learning-rate schedule: constant, step or cosine")
	fs.Float64Var(&c.WarmupEpochs, "warmup-epochs", c.WarmupEpochs, "linear warm-up, in epochs")
	fs.IntVar(&c.StepEvery, "step-every", c.StepEvery, "step schedule: epochs between decays")
	fs.Float64Var(&c.Gamma, "gamma", c.Gamma, "step schedule: decay factor")
	fs.IntVar(&c.ImageSize, "image-size", c.ImageSize, "resize folder images to N×N (0: the size all the images share, up to 64 px, else 32; fixed-size datasets keep theirs); detectors: the canvas, a multiple of 32 from 128 to 640 (0: 320, builtin-detect 128)")
	fs.BoolVar(&c.Grey, "grey", c.Grey, "convert colour images to grey")
	fs.Float64Var(&c.ValSplit, "val-split", c.ValSplit, "fraction kept for validation when there is no val folder")
	fs.Int64Var(&c.Seed, "seed", c.Seed, "random seed: the same seed repeats a run")
	fs.IntVar(&c.Patience, "patience", c.Patience, "stop after N epochs without a better validation accuracy (0: off)")
	fs.StringVar(&c.Device, "device", c.Device, "auto, cpu, cuda or cuda:N (auto: the GPU when the doctor accepts it and CUDA opens)")
	fs.IntVar(&c.Threads, "threads", c.Threads, "CPU threads (0: all)")
	fs.StringVar(&c.Project, "project", c.Project, "folder for runs")
	fs.StringVar(&c.Name, "name", c.Name, "run name (default train, train2, ...)")
	return fs, tf
}

// Train runs `gpuwizard train`.
func Train(ctx context.Context, args []string, env Env) int {
	cfg, tf, code, ok := trainSettings(args, env)
	if !ok {
		return code
	}
	if tf.extend < 0 || (tf.extend > 0 && tf.resume == "") {
		fmt.Fprintln(env.Stderr, "train: --extend N needs --resume DIR and N ≥ 1")
		return ExitUsage
	}
	if tf.resume == "" {
		if err := cfg.Validate(); err != nil {
			fmt.Fprintln(env.Stderr, "train:", strings.TrimPrefix(err.Error(), trainer.ErrConfig.Error()+": "))
			return ExitUsage
		}
	}
	// Training allocates per step while the dataset stays live: collecting
	// at 50 % heap growth instead of 100 % keeps peak memory near the data.
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	events := make(chan trainer.Event, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		show(events, env, tf.json, detectionData(cfg.Data))
	}()
	opts := trainer.Options{Resume: tf.resume, Extend: tf.extend, Probe: env.Probe, Sample: env.Sample,
		Eager: tf.eager || env.getenv("GPUWIZARD_EAGER") == "1", RunIndex: env.RunIndex}
	if tf.deviceGiven && tf.resume != "" {
		opts.Device = cfg.Device // a resumed run may move to another device
	}
	res, err := trainer.Run(ctx, cfg, events, opts)
	close(events)
	<-done
	if err != nil {
		return exitFor(err) // the done event said why
	}
	if !tf.json && res != nil {
		printResult(env.Stdout, res)
	}
	return ExitOK
}

// printResult prints a finished run's tables and where its results are.
func printResult(w io.Writer, res *trainer.Result) {
	for _, m := range []*trainer.Metrics{res.Val, res.Test} {
		if m != nil {
			fmt.Fprint(w, m.Table())
		}
	}
	try := "IMAGE"
	if res.Detect != nil {
		fmt.Fprint(w, printable.Text(res.Detect.Table()))
		try = "--json IMAGE (or --save-txt DIR IMAGE... for YOLO labels)"
	}
	if res.GPU != nil {
		fmt.Fprintln(w, res.GPU.Summary())
	}
	fmt.Fprintf(w, "Results in %s (best epoch %d). Try it: gpuwizard predict --model %s %s\n", res.RunDir, res.BestEpoch, filepath.Join(res.RunDir, "best"), try)
}

// detectionEpoch says whether an epoch event is a detection run's (it
// carries the parts of the loss, or mAP).
func detectionEpoch(ev trainer.Event) bool {
	return ev.BoxLoss != 0 || ev.ClsLoss != 0 || ev.ObjLoss != 0 || ev.MAP50 != 0 || ev.MAP5095 != 0
}

// epochLine is the line printed after each epoch.
func epochLine(ev trainer.Event) string {
	mark := ""
	if ev.Best {
		mark = "  ← best"
	}
	if detectionEpoch(ev) {
		return fmt.Sprintf("epoch %d/%d  train loss %.4f (box %.4f cls %.4f obj %.4f)  val loss %.4f  mAP50 %.3f mAP50-95 %.3f  lr %.2e  %.0f img/s  ETA %s%s",
			ev.Epoch, ev.Epochs, ev.Loss, ev.BoxLoss, ev.ClsLoss, ev.ObjLoss, ev.ValLoss, ev.MAP50, ev.MAP5095, ev.LR, ev.ImagesPerSec, ev.ETA.Round(time.Second), mark)
	}
	return fmt.Sprintf("epoch %d/%d  train loss %.4f acc %.2f%%  val loss %.4f acc %.2f%%  lr %.2e  %.0f img/s  ETA %s%s",
		ev.Epoch, ev.Epochs, ev.Loss, 100*ev.Accuracy, ev.ValLoss, 100*ev.ValAccuracy, ev.LR, ev.ImagesPerSec, ev.ETA.Round(time.Second), mark)
}

// detectionData says whether a dataset path names a detection set: a
// YOLO data.yaml (or its folder) or builtin-detect.
func detectionData(path string) bool {
	if path == detect.Builtin {
		return true
	}
	format, err := data.Detect(path)
	return err == nil && format == "yolo"
}

// show prints events: JSON lines, or a progress line on a terminal and a
// line per epoch. detecting says the run trains a detector (the progress
// line shows no accuracy); a resumed run's first epoch says so too.
func show(events <-chan trainer.Event, env Env, asJSON, detecting bool) {
	enc := json.NewEncoder(env.Stdout)
	bar := &progressLine{w: env.Stderr, columns: env.Columns}
	for ev := range events {
		if ev.Kind == trainer.EventEpoch && detectionEpoch(ev) {
			detecting = true
		}
		if asJSON {
			if err := enc.Encode(ev); err != nil {
				fmt.Fprintf(env.Stderr, "train: a %s event could not be written as JSON: %v\n", ev.Kind, err)
			}
			continue
		}
		if ev.Kind == trainer.EventStep {
			if env.Terminal {
				acc := ev.Accuracy
				if detecting {
					acc = -1
				}
				bar.draw(stepBar(ev.Epoch, ev.Epochs, ev.Step, ev.Steps, ev.Loss, acc, ev.ImagesPerSec, ev.ETA), ev.Step == ev.Steps)
			}
			continue
		}
		bar.clear()
		switch ev.Kind {
		case trainer.EventLog:
			fmt.Fprintln(env.Stderr, printable.Text(strings.TrimRight(ev.Message, "\n")))
		case trainer.EventStart:
			fmt.Fprintf(env.Stderr, "Device: %s (%s)\n%s\nRun folder: %s\n", ev.Device, ev.DeviceReason, printable.Text(ev.Message), printable.String(ev.RunDir))
		case trainer.EventEpoch:
			fmt.Fprintln(env.Stderr, epochLine(ev))
		case trainer.EventDone:
			if ev.Message != "finished" {
				fmt.Fprintln(env.Stderr, "train:", printable.Text(ev.Message))
			}
		}
	}
}

// lintHelp is the help of `gpuwizard lint`.
func lintHelp() help {
	return help{
		usage: "Usage: gpuwizard lint [flags] PATH",
		about: `Checks a dataset without training: what it holds (classes, images per split,
image sizes) and what is wrong with it (corrupt or oversized images, empty
classes, duplicates across splits, YOLO boxes out of range, labels without
images...), each problem with its file, line and fix. PATH is an image folder
(one sub-folder per class, or train/, val/ and test/ folders of them),
MNIST-style IDX files, CIFAR-10 batches, a YOLO data.yaml, a COCO .json, or
builtin. Nothing is modified.
`,
		examples: `  gpuwizard lint ~/datasets/flowers
  gpuwizard lint ~/datasets/coco8/data.yaml
  gpuwizard lint --image-size 64 ~/photos
`,
		exit: `0 usable (warnings allowed), 1 the dataset has errors that stop
training, 2 usage or input error (bad flags, a PATH that is missing or not
a dataset).
`,
	}
}

// Lint runs `gpuwizard lint PATH`: the dataset report, without training.
func Lint(ctx context.Context, args []string, env Env) int {
	fs := flag.NewFlagSet("lint", flag.ContinueOnError)
	size := fs.Int("image-size", 0, "the size folder images would be resized to, N×N (0: the size they share, up to 64 px, else 32)")
	if code, ok := parseFlags(fs, args, env, lintHelp()); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(env.Stderr, "lint: give one dataset: a folder, a data.yaml, a COCO .json, or builtin (see gpuwizard lint -h)")
		return ExitUsage
	}
	path := fs.Arg(0)
	format, err := data.Detect(path)
	if err != nil {
		printErr(env.Stderr, "lint:", err)
		return exitFor(err)
	}
	var lint *data.Lint
	switch format {
	case "yolo", "coco":
		lint, err = data.LintDetection(path)
	default:
		var d *data.Dataset
		d, err = data.Load(path, data.Options{ImageSize: *size, Seed: 1})
		if d != nil {
			lint = d.Lint
		}
	}
	if lint != nil {
		fmt.Fprintf(env.Stdout, "%s\n%s", printable.String(path), lint.Summary())
	}
	if err != nil {
		printErr(env.Stderr, "lint:", err)
		if lint == nil {
			return exitFor(err) // nothing could be read: the path is wrong
		}
		return ExitFailed // the dataset has errors: lint's answer
	}
	if n := len(lint.Errors()); n > 0 {
		fmt.Fprintf(env.Stderr, "lint: %s: the dataset cannot be used as it is; each error above says how to fix it\n", plural.Count(n, "error"))
		return ExitFailed
	}
	return ExitOK
}

// flagGiven says whether the command line set flag name.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// trainSettings reads train's settings: the defaults, then --config FILE,
// then the flags; a detection run with no batch set in either gets
// trainer.DefaultDetectBatch. ok false: stop with code.
func trainSettings(args []string, env Env) (trainer.Config, *trainFlags, int, bool) {
	d := trainer.Defaults()
	cfg := d
	fs, tf := newTrainFlags(&cfg)
	if code, ok := parseFlags(fs, args, env, trainHelp()); !ok {
		return cfg, tf, code, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "train: unexpected argument %q (the dataset goes in --data)\n", fs.Arg(0))
		return cfg, tf, ExitUsage, false
	}
	batchSet := flagGiven(fs, "batch")
	tf.deviceGiven = flagGiven(fs, "device")
	if tf.config != "" {
		// Read over a batch of 0, to tell a batch the file sets from
		// the default.
		base := d
		base.Batch = 0
		fileCfg, err := trainer.LoadConfigFile(tf.config, base)
		if err != nil {
			// The line and setting in words, as the window's Load settings… says it.
			printErr(env.Stderr, "train: --config:", err)
			return cfg, tf, ExitUsage, false
		}
		batchSet = batchSet || fileCfg.Batch != 0
		if fileCfg.Batch == 0 {
			fileCfg.Batch = d.Batch
		}
		// Flags given on the command line override the file: the same
		// arguments, parsed again over it.
		again, _ := newTrainFlags(&fileCfg)
		again.SetOutput(io.Discard)
		if err := again.Parse(args); err != nil {
			return cfg, tf, ExitUsage, false
		}
		cfg = fileCfg
	}
	if !batchSet && cfg.IsDetect() {
		cfg.Batch = trainer.DefaultDetectBatch
	}
	return cfg, tf, 0, true
}
