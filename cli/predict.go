package cli

import (
	"context"
	"flag"
	"fmt"

	"gpuwizard/trainer"
)

// Predict runs `gpuwizard predict --model RUN/best IMAGE...`.
func Predict(ctx context.Context, args []string, env Env) int {
	fs := flag.NewFlagSet("predict", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	modelPath := fs.String("model", "", "a checkpoint: runs/NAME/best, runs/NAME/last, or a .ckpt file")
	top := fs.Int("top", 3, "how many classes to show per image")
	invert := fs.String("invert", "auto", "for grey models: invert dark-on-light images to light-on-dark like MNIST (auto, yes, no)")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	if *modelPath == "" || fs.NArg() == 0 {
		fmt.Fprintln(env.Stderr, "Usage: gpuwizard predict --model runs/NAME/best IMAGE...")
		return ExitUsage
	}
	if *invert != "auto" && *invert != "yes" && *invert != "no" {
		fmt.Fprintln(env.Stderr, "predict: --invert must be auto, yes or no")
		return ExitUsage
	}
	p, err := trainer.LoadPredictor(*modelPath)
	if err != nil {
		fmt.Fprintln(env.Stderr, "predict:", err)
		return ExitFailed
	}
	if w := p.Warning(); w != "" {
		fmt.Fprintln(env.Stderr, "predict: warning:", w)
	}
	code := ExitOK
	for _, img := range fs.Args() {
		preds, err := p.PredictFile(img, *invert)
		if err != nil {
			fmt.Fprintln(env.Stderr, "predict:", err)
			code = ExitFailed
			continue
		}
		fmt.Fprintf(env.Stdout, "%s:", img)
		for i, pr := range preds {
			if i >= *top {
				break
			}
			fmt.Fprintf(env.Stdout, "  %s %.1f%%", pr.Class, 100*pr.Prob)
		}
		fmt.Fprintln(env.Stdout)
	}
	return code
}
