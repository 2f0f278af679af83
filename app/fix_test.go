package app

import (
	"context"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
	"gpuwizard/gpu/doctor"
	"gpuwizard/gpu/fix/fixtest"
)

// fakeEnvPip plays one environment's pip for the window's fix.
type fakeEnvPip struct {
	mu   sync.Mutex
	pkgs map[string]string
	want string // what "torch==X.*" resolves to
}

func (p *fakeEnvPip) Output(ctx context.Context, args []string) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var lines []string
	for n, v := range p.pkgs {
		lines = append(lines, n+"=="+v+"\n")
	}
	sort.Strings(lines)
	return []byte(strings.Join(lines, "")), nil
}

func (p *fakeEnvPip) Run(ctx context.Context, args []string, line func(string)) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := 4; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-r":
			b, err := os.ReadFile(args[i+1])
			if err != nil {
				return err
			}
			for _, l := range strings.Fields(string(b)) {
				n, v, _ := strings.Cut(l, "==")
				p.pkgs[n] = v
			}
			i++
		case a == "--index-url" || a == "--extra-index-url" || a == "--find-links":
			i++
		case strings.HasPrefix(a, "-"):
		case args[3] == "uninstall":
			delete(p.pkgs, a)
		default:
			n, _, _ := strings.Cut(a, "==")
			p.pkgs[n] = p.want
		}
	}
	line("Successfully " + args[3] + "ed (fake pip)")
	return nil
}

func (p *fakeEnvPip) report(m *compat.Matrix) gpu.Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := fixtest.Machine()
	v := p.pkgs["torch"]
	pk := gpu.Package{Name: "torch", Version: v, Location: "/home/u/venv/lib/python3.11/site-packages",
		CPUOnly: gpu.LocalTag(v) == "cpu", CUDA: gpu.VariantCUDA(gpu.LocalTag(v)), BuildNote: "torch/version.py"}
	f.Pythons = []gpu.PythonEnv{{Interpreter: "/home/u/venv/bin/python", Prefix: "/home/u/venv", Version: "3.11", Kind: "venv",
		Commands: []string{"python"}, Packages: []gpu.Package{pk}}}
	return doctor.Diagnose(f, m)
}

func TestFixItButton(t *testing.T) {
	test.NewTempApp(t)
	m, err := compat.LoadMatrix()
	if err != nil {
		t.Fatal(err)
	}
	adv, _ := doctor.WheelAdvice(fixtest.Machine(), m, "3.11")
	pip := &fakeEnvPip{pkgs: map[string]string{"torch": "2.5.1+cpu"}, want: adv.Torch + ".0+" + adv.Variant}
	c := newCheckView(context.Background(), func(ctx context.Context) (gpu.Report, error) { return pip.report(m), nil })
	answer := false
	c.fix = &FixDeps{Runner: pip, Home: t.TempDir()}
	c.confirm = func(w fyne.Window, title, message, action string, done func(bool)) { done(answer) }
	c.win = test.NewTempWindow(t, c.content)
	c.win.Resize(fyne.NewSize(900, 700))
	c.run()
	c.wg.Wait()
	btn := findButton(c.list, "Fix it…")
	if btn == nil {
		t.Fatal("no Fix it button on the CPU-only torch")
	}
	test.Tap(btn)
	f := c.fixing
	if f == nil || !f.plan.Fixable() || !strings.Contains(f.planTxt.Text, "torch=="+adv.Torch+".*") {
		t.Fatalf("the plan: %+v", f)
	}
	test.Tap(f.runBtn) // refused
	f.wg.Wait()
	if pip.pkgs["torch"] != "2.5.1+cpu" || !strings.Contains(f.status.Text, "nothing was changed") {
		t.Fatalf("refused: torch %s, %q", pip.pkgs["torch"], f.status.Text)
	}
	answer = true
	test.Tap(f.runBtn)
	f.wg.Wait()
	c.wg.Wait()
	if !strings.HasPrefix(f.status.Text, "Fixed (torch_cpu_only)") || !strings.Contains(f.logTxt.Text, "fake pip") {
		t.Fatalf("after the fix: %q\nlog: %s", f.status.Text, f.logTxt.Text)
	}
	if findButton(c.list, "Fix it…") != nil {
		t.Error("the window still offers the fix after the check again")
	}
	if !f.undoBtn.Visible() {
		t.Fatal("no Undo after the fix")
	}
	test.Tap(f.undoBtn)
	f.wg.Wait()
	c.wg.Wait()
	if pip.pkgs["torch"] != "2.5.1+cpu" || !strings.HasPrefix(f.status.Text, "Undone: the packages are exactly") {
		t.Fatalf("after undo: torch %s, %q", pip.pkgs["torch"], f.status.Text)
	}
	if findButton(c.list, "Fix it…") == nil {
		t.Error("after undo the CPU-only torch is back, yet no Fix it button")
	}
}

// findButton is the button of that text inside o.
func findButton(o fyne.CanvasObject, text string) *widget.Button {
	switch x := o.(type) {
	case *widget.Button:
		if x.Text == text {
			return x
		}
	case *fyne.Container:
		for _, c := range x.Objects {
			if b := findButton(c, text); b != nil {
				return b
			}
		}
	}
	return nil
}
