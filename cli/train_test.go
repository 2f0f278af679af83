package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gpuwizard/internal/synth"
	"gpuwizard/trainer"
)

func call(t *testing.T, cmd func(context.Context, []string, Env) int, probe trainer.DeviceProbe, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cmd(context.Background(), args, Env{Stdout: &out, Stderr: &errb, Probe: probe})
	return code, out.String(), errb.String()
}

func TestTrainPredictLint(t *testing.T) {
	data := t.TempDir()
	if err := synth.LeftRight(data, 30); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(t.TempDir(), "runs")
	cfgFile := filepath.Join(t.TempDir(), "run.yaml")
	os.WriteFile(cfgFile, []byte("epochs: 9\nmodel: mlp\nimage_size: 8\nlr: 0.01\nwarmup_epochs: 0\n"), 0o644)
	// The flag (--epochs 2) overrides the file (9); the file overrides the defaults.
	code, out, stderr := call(t, Train, nil, "--config", cfgFile, "--epochs", "2", "--data", data, "--project", project, "--name", "tiny", "--json")
	if code != ExitOK {
		t.Fatalf("train: exit %d\n%s", code, stderr)
	}
	var epochs, done int
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev trainer.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("--json line %q: %v", line, err)
		}
		switch ev.Kind {
		case trainer.EventEpoch:
			epochs++
		case trainer.EventDone:
			done++
			if ev.Result == nil || ev.Result.Val == nil || ev.Result.Val.Accuracy < 0.9 {
				t.Fatalf("done event: %+v", ev.Result)
			}
		}
	}
	if epochs != 2 || done != 1 {
		t.Fatalf("%d epoch events, %d done\n%s\n%s", epochs, done, out, stderr)
	}
	args, _ := os.ReadFile(filepath.Join(project, "tiny", "args.yaml"))
	if !strings.Contains(string(args), "epochs: 2") || !strings.Contains(string(args), "model: mlp") {
		t.Fatalf("args.yaml:\n%s", args)
	}
	// --device on resume moves the run: cuda with no GPU fails and says so.
	noGPU := func(context.Context) trainer.DeviceStatus { return trainer.DeviceStatus{Reason: "no_nvidia_gpu"} }
	run := filepath.Join(project, "tiny")
	code, _, stderr = call(t, Train, noGPU, "--resume", run, "--extend", "1", "--device", "cuda")
	if code != ExitFailed || !strings.Contains(stderr, "resume with --resume "+run+" --device cpu") {
		t.Fatalf("resume on cuda without a GPU: %d %s", code, stderr)
	}
	// Predict a fresh image that is dark on the right.
	img := image.NewGray(image.Rect(0, 0, 40, 40))
	for y := 0; y < 40; y++ {
		for x := 0; x < 40; x++ {
			v := uint8(230)
			if x >= 20 {
				v = 20
			}
			img.SetGray(x, y, color.Gray{v})
		}
	}
	p := filepath.Join(t.TempDir(), "probe.png")
	synth.WritePNG(p, img)
	code, out, stderr = call(t, Predict, nil, "--model", filepath.Join(project, "tiny", "best"), p)
	if code != ExitOK || !strings.HasPrefix(out, p+":  right ") {
		t.Fatalf("predict: exit %d, %q %s", code, out, stderr)
	}
	code, _, stderr = call(t, Predict, nil, "--model", filepath.Join(project, "nothing"), p)
	if code != ExitUsage || !strings.Contains(stderr, "no such file") {
		t.Fatalf("predict with a missing model: %d %s", code, stderr)
	}
	// A missing image is an input error; the others are still classified.
	code, out, stderr = call(t, Predict, nil, "--model", filepath.Join(project, "tiny", "best"), "/nonexistent/a.png", p)
	if code != ExitUsage || !strings.Contains(stderr, "/nonexistent/a.png") || !strings.HasPrefix(out, p+":  right ") {
		t.Fatalf("predict with a missing image: exit %d, %q %s", code, out, stderr)
	}
	code, out, _ = call(t, Lint, nil, data)
	if code != ExitOK || !strings.Contains(out, "left=27") {
		t.Fatalf("lint: %d\n%s", code, out)
	}
}

func TestTrainBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--batch", "0"}, ExitUsage, "batch: 0"},
		{[]string{"--lr", "-1"}, ExitUsage, "lr: -1"},
		{[]string{"--image-size", "10000"}, ExitUsage, "image_size: 10000"},
		{[]string{"--extend", "2"}, ExitUsage, "--extend N needs --resume"},
		{[]string{"--config", "/nonexistent/run.yaml"}, ExitUsage, "no such file"},
		{[]string{"extra"}, ExitUsage, "unexpected argument"},
		{[]string{"--data", "/nonexistent/data", "--project", t.TempDir()}, ExitUsage, "no such file"},
		{[]string{"--resume", "/nonexistent/runs/train"}, ExitUsage, "/nonexistent/runs/train"},
	} {
		code, _, stderr := call(t, Train, nil, c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, c.code, c.msg)
		}
	}
	noGPU := func(context.Context) trainer.DeviceStatus {
		return trainer.DeviceStatus{Reason: "This machine has no NVIDIA GPU (gpuwizard doctor: no_nvidia_gpu)"}
	}
	code, _, stderr := call(t, Train, noGPU, "--device", "cuda", "--project", t.TempDir())
	if code != ExitFailed || !strings.Contains(stderr, "no_nvidia_gpu") {
		t.Fatalf("cuda without a GPU: %d %s", code, stderr)
	}
}

func TestBench(t *testing.T) {
	code, out, stderr := call(t, Bench, nil, "--model", "mlp", "--steps", "3", "--warmup", "1", "--threads", "1", "--engine", "exec")
	if code != ExitOK || !strings.HasPrefix(out, "RESULT impl=gpuwizard-exec model=mlp device=cpu bs=64 threads=1 steps=3 ") || !strings.Contains(out, "img_per_s=") {
		t.Fatalf("bench: %d %q %s", code, out, stderr)
	}
	// gorgonia's tape machine is a test oracle now, not an engine.
	if code, _, stderr := call(t, Bench, nil, "--engine", "tape"); code != ExitUsage || !strings.Contains(stderr, "the only engine is exec") {
		t.Fatalf("--engine tape: %d %s", code, stderr)
	}
	noGPU := func(context.Context) trainer.DeviceStatus { return trainer.DeviceStatus{Reason: "no_nvidia_gpu"} }
	code, _, stderr = call(t, Bench, noGPU, "--device", "cuda")
	if code != ExitFailed || !strings.Contains(stderr, "cannot be served: no_nvidia_gpu") {
		t.Fatalf("bench cuda: %d %s", code, stderr)
	}
	// Unchecked: CUDA is opened directly; it works on a GPU machine and
	// fails with the driver's reason elsewhere.
	code, out, stderr = call(t, Bench, nil, "--device", "cuda", "--model", "mlp", "--steps", "3", "--warmup", "1")
	if !(code == ExitOK && strings.Contains(out, "device=cuda:0")) && !(code == ExitFailed && strings.Contains(stderr, "CUDA unavailable")) {
		t.Fatalf("bench cuda unchecked: %d %q %s", code, out, stderr)
	}
}

// Input errors (a missing dataset, model or file, bad settings) exit 2,
// as bad flags do, for every command.
func TestInputErrorsExit2(t *testing.T) {
	dir := t.TempDir()
	badYAML := filepath.Join(dir, "run.yaml")
	os.WriteFile(badYAML, []byte("epochs: ten\n"), 0o644)
	notFacts := filepath.Join(dir, "facts.json")
	os.WriteFile(notFacts, []byte("{\"schema\": \"x\"\n"), 0o644)
	for _, c := range []struct {
		cmd  func(context.Context, []string, Env) int
		args []string
		msg  string
	}{
		{Train, []string{"--data", "/nope", "--project", dir}, "/nope"},
		{Train, []string{"--config", "/nope.yaml"}, "/nope.yaml"},
		{Train, []string{"--config", badYAML}, "train: --config: " + badYAML + `: line 1 (epochs): "ten" is not a whole number` + "\n"},
		{Train, []string{"--epochs", "x"}, "invalid value"},
		{Predict, []string{"--model", "/nope", "a.png"}, "/nope"},
		{Predict, []string{"a.png"}, "give a model"},
		{Lint, []string{"/nope"}, "/nope"},
		{Lint, nil, "give one dataset"},
		{Bench, []string{"--model", "nope"}, "nope"},
		{Bench, []string{"--batch", "0"}, "batch"},
		{Doctor, []string{"--from", "/nope"}, "/nope"},
		{Doctor, []string{"--facts", "/nope"}, "/nope"},
		{Doctor, []string{"--facts", notFacts}, notFacts},
	} {
		code, _, stderr := call(t, c.cmd, nil, c.args...)
		if code != ExitUsage || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.msg)
		}
	}
}

// TestTrainRecordsRun: `train` records its run folder in the index the
// window reads (here a temporary one: tests never write to the real
// config folder), by its absolute path.
func TestTrainRecordsRun(t *testing.T) {
	data := t.TempDir()
	if err := synth.LeftRight(data, 10); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(t.TempDir(), "gpuwizard", trainer.RunIndexFile)
	work := t.TempDir()
	t.Chdir(work) // the default project, runs/, is relative to it
	var out, errb bytes.Buffer
	env := Env{Stdout: &out, Stderr: &errb, RunIndex: index}
	code := Train(context.Background(), []string{"--epochs", "1", "--model", "mlp", "--image-size", "8", "--data", data, "--json"}, env)
	if code != ExitOK {
		t.Fatalf("train: exit %d\n%s", code, errb.String())
	}
	want, _ := filepath.EvalSymlinks(filepath.Join(work, "runs", "train"))
	dirs, err := trainer.IndexedRunDirs(index)
	if err != nil || len(dirs) != 1 {
		t.Fatalf("index %q (%v): want [%s]", dirs, err, want)
	}
	if got, _ := filepath.EvalSymlinks(dirs[0]); got != want || !filepath.IsAbs(dirs[0]) {
		t.Fatalf("index %q: want [%s], absolute", dirs, want)
	}
}

// TestDetectBatchDefault: a detection run with no batch set anywhere
// trains in batches of trainer.DefaultDetectBatch; a batch from the flag
// or the config file (even 64, the classifiers' default) is kept, and a
// classification run keeps the defaults' 64.
func TestDetectBatchDefault(t *testing.T) {
	dir := t.TempDir()
	files := 0
	file := func(body string) string {
		files++
		p := filepath.Join(dir, fmt.Sprintf("run%d.yaml", files))
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"--data", "builtin-detect"}, trainer.DefaultDetectBatch},
		{[]string{"--data", "builtin-detect", "--batch", "8"}, 8},
		{[]string{"--data", "builtin-detect", "--config", file("batch: 64\n")}, 64},
		{[]string{"--config", file("data: builtin-detect\nepochs: 3\n")}, trainer.DefaultDetectBatch},
		{[]string{"--config", file("data: builtin-detect\nbatch: 32\n"), "--batch", "4"}, 4},
		{[]string{"--data", "builtin"}, trainer.Defaults().Batch},
		{[]string{"--config", file("epochs: 2\n")}, trainer.Defaults().Batch},
	} {
		var out, errb bytes.Buffer
		cfg, _, code, ok := trainSettings(c.args, Env{Stdout: &out, Stderr: &errb})
		if !ok || cfg.Batch != c.want {
			t.Errorf("%q: batch %d (ok %v, exit %d: %s), want %d", c.args, cfg.Batch, ok, code, errb.String(), c.want)
		}
	}
}
