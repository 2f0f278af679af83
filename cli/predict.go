package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"gpuwizard/internal/printable"
	"gpuwizard/trainer"
)

// predictHelp is the help of `gpuwizard predict`.
func predictHelp() help {
	return help{
		usage: "Usage: gpuwizard predict --model CHECKPOINT [flags] IMAGE...",
		about: `Runs a model that gpuwizard train made on images. CHECKPOINT is a run's best
or last checkpoint (runs/NAME/best, runs/NAME/last) or a .ckpt file.

A classifier gives, for each image, its most likely classes with their
probabilities. A model trained on grey images like MNIST's light digits on
black inverts dark-on-light images first (--invert; --invert no keeps the
pixels as they are, which is what a model exported with gpuwizard export
takes). --json prints one JSON object per image, one a line:
{"image": PATH, "probs": [p0, p1, ...], "top": [{"class": 3, "name": "cat",
"prob": 0.91}, ...]}, probs in class order (labels.txt's), top the --top most
likely.

A detector (trained on a YOLO data.yaml or builtin-detect) gives, for each
image, the objects it finds scoring --conf or more. --json prints one JSON
object per image, one a line: {"image": PATH, "boxes": [{"class": 0,
"name": "cat", "score": 0.91, "box": [x1, y1, x2, y2]}, ...]}, highest score
first, the box's corners in the image's own pixels. --save-txt DIR also
writes each image's boxes as a YOLO label file DIR/NAME.txt (photo.jpg →
photo.txt): a line "class cx cy w h" per box, normalised by the image's
width and height as training labels are (--save-conf adds the score at the
end of each line); an image without boxes gets an empty file.

With --json, an image that cannot be read gives {"image": PATH, "error":
"..."}.
`,
		examples: `  gpuwizard predict --model runs/train/best digit.png
  gpuwizard predict --model runs/train/last --top 5 photos/*.jpg
  gpuwizard predict --model runs/train/best.ckpt --invert no scan.png
  gpuwizard predict --model runs/train --json --top 1 photos/*.jpg
  gpuwizard predict --model runs/detect/best --json street/*.jpg
  gpuwizard predict --model runs/detect/best --conf 0.5 --save-txt labels street/*.jpg
`,
		exit: `0 every image done; 2 usage or input error (bad flags; a model or an
image that is missing, damaged or not an image: the other images are still
done); 1 any other failure.
`,
	}
}

// Predict runs `gpuwizard predict --model RUN/best IMAGE...`.
func Predict(ctx context.Context, args []string, env Env) int {
	fs := flag.NewFlagSet("predict", flag.ContinueOnError)
	modelPath := fs.String("model", "", "a checkpoint: runs/NAME/best, runs/NAME/last, or a .ckpt file")
	top := fs.Int("top", 3, "classifiers: how many classes to show per image")
	invert := fs.String("invert", "auto", "grey classifiers: invert dark-on-light images to light-on-dark like MNIST (auto, yes; no keeps the pixels as they are)")
	asJSON := fs.Bool("json", false, "one JSON object per image, one a line (classifiers: image, probs, top; detectors: image, boxes)")
	var bo boxOptions
	fs.Float64Var(&bo.conf, "conf", 0.25, "detectors: the lowest score of a box shown (0 to 1)")
	fs.StringVar(&bo.saveTxt, "save-txt", "", "detectors: write each image's boxes as a YOLO label file in `DIR` (made if missing)")
	fs.BoolVar(&bo.saveConf, "save-conf", false, "detectors, with --save-txt: end each label line with the box's score")
	if code, ok := parseFlags(fs, args, env, predictHelp()); !ok {
		return code
	}
	if *modelPath == "" || fs.NArg() == 0 {
		fmt.Fprintln(env.Stderr, "predict: give a model and at least one image: gpuwizard predict --model runs/NAME/best IMAGE... (see gpuwizard predict -h)")
		return ExitUsage
	}
	if *invert != "auto" && *invert != "yes" && *invert != "no" {
		fmt.Fprintln(env.Stderr, "predict: --invert must be auto, yes or no")
		return ExitUsage
	}
	if !(bo.conf >= 0 && bo.conf <= 1) {
		fmt.Fprintln(env.Stderr, "predict: --conf must be a score from 0 to 1 (0.25 shows the likely boxes)")
		return ExitUsage
	}
	det, err := env.loadDetector(*modelPath)
	if err != nil {
		printErr(env.Stderr, "predict:", err)
		return exitFor(err)
	}
	if det != nil {
		bo.asJSON = *asJSON
		return predictBoxes(ctx, det, fs.Args(), bo, env)
	}
	if bo.saveTxt != "" {
		fmt.Fprintln(env.Stderr, "predict: --save-txt writes a detector's boxes as YOLO labels; this model is a classifier (--json prints its classes)")
		return ExitUsage
	}
	return predictClasses(fs.Args(), *modelPath, *top, *invert, *asJSON, env)
}

// predictClasses classifies each image with the classifier at modelPath.
func predictClasses(images []string, modelPath string, top int, invert string, asJSON bool, env Env) int {
	p, err := trainer.LoadPredictor(modelPath)
	if err != nil {
		printErr(env.Stderr, "predict:", err)
		return exitFor(err)
	}
	if w := p.Warning(); w != "" {
		fmt.Fprintln(env.Stderr, "predict: warning:", w)
	}
	defer p.Close()
	code := ExitOK
	for _, img := range images {
		preds, err := p.PredictFile(img, invert)
		if err != nil {
			printErr(env.Stderr, "predict:", err)
			code = max(code, exitFor(err))
		}
		if asJSON {
			writePredictionJSON(env.Stdout, img, preds, err, top)
			continue
		}
		if err != nil {
			continue
		}
		fmt.Fprintf(env.Stdout, "%s:", printable.String(img))
		for i, pr := range preds {
			if i >= top {
				break
			}
			fmt.Fprintf(env.Stdout, "  %s %.1f%%", printable.String(pr.Class), 100*pr.Prob)
		}
		fmt.Fprintln(env.Stdout)
	}
	return code
}

// predictionJSON is one line of predict --json.
type predictionJSON struct {
	Image string    `json:"image"`
	Probs []float64 `json:"probs,omitempty"` // in class order
	Top   []topJSON `json:"top,omitempty"`   // the most likely first
	Error string    `json:"error,omitempty"`
}

type topJSON struct {
	Class int     `json:"class"`
	Name  string  `json:"name"`
	Prob  float64 `json:"prob"`
}

// writePredictionJSON writes an image's predictions (sorted, most likely
// first), or the error that stopped it, as one JSON line.
func writePredictionJSON(w io.Writer, img string, preds []trainer.Prediction, err error, top int) {
	line := predictionJSON{Image: img}
	if err != nil {
		line.Error = err.Error()
	} else {
		line.Probs = make([]float64, len(preds))
		for i, pr := range preds {
			line.Probs[pr.Index] = pr.Prob
			if i < top {
				line.Top = append(line.Top, topJSON{Class: pr.Index, Name: pr.Class, Prob: pr.Prob})
			}
		}
	}
	b, _ := json.Marshal(line)
	fmt.Fprintf(w, "%s\n", b)
}
