//go:build linux

// gpuwizard fix on a throwaway venv of the system's python3 (Debian's
// python3-venv) and a folder of fake wheels: no internet, no Wine.

package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
	"gpuwizard/gpu/doctor"
	"gpuwizard/gpu/fix/fixtest"
	"gpuwizard/gpu/nvml/nvmlfake"
	"gpuwizard/gpu/probe"
)

func TestFixCommandEndToEnd(t *testing.T) {
	ctx := context.Background()
	m, err := compat.LoadMatrix()
	if err != nil {
		t.Fatal(err)
	}
	adv, known := doctor.WheelAdvice(fixtest.Machine(), m, "3.11")
	if !known || !adv.OK {
		t.Fatalf("advice: %+v", adv)
	}
	index, home := t.TempDir(), t.TempDir()
	cuda := gpu.VariantCUDA(adv.Variant)
	if err := fixtest.Build(index, fixtest.Wheel{Name: "torch", Version: "2.5.1+cpu"},
		fixtest.Wheel{Name: "torch", Version: adv.Torch + ".0+" + adv.Variant, CUDA: cuda}); err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(t.TempDir(), "venv")
	py, err := fixtest.Venv(ctx, venv, index, "torch==2.5.1+cpu")
	if err != nil {
		t.Fatal(err)
	}
	original, err := fixtest.Freeze(ctx, py)
	if err != nil {
		t.Fatal(err)
	}
	rtx := nvmlfake.NewDevice(nvmlfake.GPU{Name: "NVIDIA GeForce RTX 3090", UUID: "GPU-3090", CC: [2]int{8, 6}})
	newEnv := func(stdin string) (Env, *bytes.Buffer, *bytes.Buffer) {
		env, out, errb := fakeEnv(nil)
		env.Stdin = strings.NewReader(stdin)
		env.Options = probe.Options{Root: "/", NVML: nvmlfake.New("560.35.03", 12060, rtx), Runner: noCommands{}, Timeout: 2 * time.Second,
			GOOS: "linux", GOARCH: "amd64", Home: home, Cwd: "/", Environ: map[string]string{"HOME": home, "PATH": filepath.Join(venv, "bin")}}
		return env, out, errb
	}
	args := []string{"fix", "--index-url", index}

	// Refused: nothing changes, nothing is recorded.
	env, out, errb := newEnv("n\n")
	if code := Run(ctx, args, env); code != ExitFailed || !strings.Contains(errb.String(), "Nothing was changed") {
		t.Fatalf("refused: exit %d\n%s\n%s", code, out, errb)
	}
	if !strings.Contains(out.String(), "Plan for "+py) || !strings.Contains(out.String(), "torch_cpu_only") {
		t.Errorf("the plan:\n%s", out)
	}
	if now, _ := fixtest.Freeze(ctx, py); !bytes.Equal(now, original) {
		t.Fatalf("a refused plan changed the environment:\n%s", now)
	}
	if _, err := os.Stat(filepath.Join(home, "gpuwizard")); err == nil {
		t.Error("a refused plan recorded something")
	}

	// Confirmed on standard input.
	env, out, errb = newEnv("y\n")
	start := time.Now()
	code := Run(ctx, args, env)
	t.Logf("gpuwizard fix, from the answer to the re-checked verdict: %s", time.Since(start).Round(time.Millisecond))
	if code != ExitOK || !strings.Contains(out.String(), "Fixed: torch_cpu_only") || !strings.Contains(errb.String(), "Successfully installed") {
		t.Fatalf("fix: exit %d\n%s\n%s", code, out, errb)
	}
	if now, _ := fixtest.Freeze(ctx, py); !bytes.Contains(now, []byte("torch=="+adv.Torch+".0+"+adv.Variant)) {
		t.Fatalf("after the fix:\n%s", now)
	}

	// Again: nothing left to fix, a clear refusal.
	env, out, errb = newEnv("")
	if code := Run(ctx, append(args, "--yes"), env); code != ExitFailed || !strings.Contains(errb.String(), "nothing here can be fixed automatically") {
		t.Errorf("nothing to fix: exit %d\n%s\n%s", code, out, errb)
	}

	env, out, errb = newEnv("")
	if code := Run(ctx, []string{"fix", "--undo", "--index-url", index}, env); code != ExitOK || !strings.Contains(out.String(), "byte for byte") {
		t.Fatalf("undo: exit %d\n%s\n%s", code, out, errb)
	}
	if now, _ := fixtest.Freeze(ctx, py); !bytes.Equal(now, original) {
		t.Fatalf("after undo:\n%s\nwant:\n%s", now, original)
	}
}

// gpuwizard fix --yes on two builds in one venv (onnxruntime beside
// onnxruntime-gpu), then --undo.
func TestFixCommandConflictingBuilds(t *testing.T) {
	ctx := context.Background()
	index, home := t.TempDir(), t.TempDir()
	if err := fixtest.Build(index, fixtest.Wheel{Name: "onnxruntime", Version: "1.20.1", Module: "onnxruntime"},
		fixtest.Wheel{Name: "onnxruntime-gpu", Version: "1.20.1", Module: "onnxruntime", CUDA: "12.4"}); err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(t.TempDir(), "venv")
	py, err := fixtest.Venv(ctx, venv, index, "onnxruntime-gpu==1.20.1", "onnxruntime==1.20.1")
	if err != nil {
		t.Fatal(err)
	}
	original, err := fixtest.Freeze(ctx, py)
	if err != nil {
		t.Fatal(err)
	}
	rtx := nvmlfake.NewDevice(nvmlfake.GPU{Name: "NVIDIA GeForce RTX 3090", UUID: "GPU-3090", CC: [2]int{8, 6}})
	newEnv := func() (Env, *bytes.Buffer, *bytes.Buffer) {
		env, out, errb := fakeEnv(nil)
		env.Stdin = strings.NewReader("")
		env.Options = probe.Options{Root: "/", NVML: nvmlfake.New("560.35.03", 12060, rtx), Runner: noCommands{}, Timeout: 2 * time.Second,
			GOOS: "linux", GOARCH: "amd64", Home: home, Cwd: "/", Environ: map[string]string{"HOME": home, "PATH": filepath.Join(venv, "bin")}}
		return env, out, errb
	}
	env, out, errb := newEnv()
	code := Run(ctx, []string{"fix", "--yes", "--index-url", index}, env)
	t.Logf("gpuwizard fix --yes:\n%s", out)
	if code != ExitOK || !strings.Contains(out.String(), "Fixed: onnxruntime_cpu_and_gpu_packages") ||
		!strings.Contains(out.String(), py+" -m pip install --force-reinstall --no-deps onnxruntime-gpu==1.20.1") {
		t.Fatalf("fix: exit %d\n%s\n%s", code, out, errb)
	}
	if now, _ := fixtest.Freeze(ctx, py); bytes.Contains(now, []byte("onnxruntime==")) {
		t.Fatalf("after the fix the CPU package is still there:\n%s", now)
	}
	env, out, errb = newEnv()
	if code := Run(ctx, []string{"fix", "--undo", "--index-url", index}, env); code != ExitOK || !strings.Contains(out.String(), "byte for byte") {
		t.Fatalf("undo: exit %d\n%s\n%s", code, out, errb)
	}
	if now, _ := fixtest.Freeze(ctx, py); !bytes.Equal(now, original) {
		t.Fatalf("after undo:\n%s\nwant:\n%s", now, original)
	}
}
