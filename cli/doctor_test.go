package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Doctor(context.Background(), args, Env{Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

const (
	readyFacts    = "../gpu/testdata/facts/h100_driver580_torch_cu130.json"
	notReadyFacts = "../gpu/testdata/facts/gtx1080_torch_cu130.json"
)

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		msg  string // in stderr
	}{
		{"ready", []string{"--facts", readyFacts}, ExitReady, ""},
		{"not ready", []string{"--facts", notReadyFacts}, ExitNotReady, ""},
		{"unknown flag", []string{"--nope"}, ExitUsage, "flag provided but not defined"},
		{"extra argument", []string{"now"}, ExitUsage, `unexpected argument "now"`},
		{"two formats", []string{"--json", "--markdown"}, ExitUsage, "choose one"},
		{"deep with facts", []string{"--deep", "--facts", readyFacts}, ExitUsage, "cannot be combined"},
		{"bad timeout", []string{"--timeout", "-1s"}, ExitUsage, "positive"},
		{"missing facts file", []string{"--facts", "does-not-exist.json"}, ExitUsage, "does-not-exist.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := run(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.msg) {
				t.Fatalf("stderr %q lacks %q", stderr, tt.msg)
			}
		})
	}
}

func TestFormats(t *testing.T) {
	_, out, _ := run(t, "--facts", notReadyFacts, "--json")
	var rep struct {
		Ready    *bool             `json:"ready"`
		Findings []json.RawMessage `json:"findings"`
		Facts    map[string]any    `json:"facts"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json is not JSON: %v", err)
	}
	if rep.Ready == nil || *rep.Ready || len(rep.Findings) == 0 || rep.Facts["nvml"] == nil {
		t.Fatalf("--json report incomplete: %s", out[:min(len(out), 300)])
	}
	_, md, _ := run(t, "--facts", notReadyFacts, "--markdown")
	if !strings.HasPrefix(md, "## gpuwizard doctor") || !strings.Contains(md, "```sh") || !strings.Contains(md, "arch_not_in_torch_build") {
		t.Fatalf("markdown: %s", md)
	}
	_, txt, _ := run(t, "--facts", notReadyFacts)
	if strings.Contains(txt, "\x1b[") {
		t.Fatal("colour codes when not on a terminal")
	}
	var col bytes.Buffer
	Doctor(context.Background(), []string{"--facts", notReadyFacts}, Env{Stdout: &col, Stderr: &bytes.Buffer{}, Color: true})
	if !strings.Contains(col.String(), "\x1b[1;31m") {
		t.Fatal("no colour on a terminal")
	}
}

func TestSaveAndReloadFacts(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, "facts.json")
	code1, out1, _ := run(t, "--facts", notReadyFacts, "--save", saved)
	code2, out2, _ := run(t, "--facts", saved)
	if code1 != code2 || out1 != out2 {
		t.Fatalf("saved facts judge differently:\n%s\n---\n%s", out1, out2)
	}
	// A whole --json report is accepted as facts too.
	_, js, _ := run(t, "--facts", notReadyFacts, "--json")
	report := filepath.Join(dir, "report.json")
	if err := os.WriteFile(report, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "--facts", report); code != ExitNotReady {
		t.Fatalf("report as facts: exit %d %s", code, stderr)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestBadFactsFiles(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct{ content, msg string }{
		"syntax.json":    {"{\n  \"schema\": 1,\n  \"nvml\": {\n}", "line"},
		"wrongtype.json": {`{"schema": 1, "nvml": {"gpus": "many"}}`, `field "nvml.gpus"`},
		"noschema.json":  {`{"nvml": {}}`, "not a gpuwizard facts file"},
		"future.json":    {`{"schema": 99}`, "newer than this gpuwizard"},
	}
	for name, c := range cases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := run(t, "--facts", p)
		if code != ExitUsage || !strings.Contains(stderr, c.msg) || !strings.Contains(stderr, name) {
			t.Errorf("%s: exit %d, stderr %q; want %q naming the file", name, code, stderr, c.msg)
		}
	}
}

func TestSaveRefusesUnwritablePlace(t *testing.T) {
	code, _, stderr := run(t, "--facts", readyFacts, "--save", filepath.Join(t.TempDir(), "no", "such", "dir", "f.json"))
	if code != ExitUsage || !strings.Contains(stderr, "writing") || !strings.Contains(stderr, "f.json") {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
}

func TestFromReport(t *testing.T) {
	report := "Ultralytics YOLOv8.1.3 🚀 Python-3.10.11 torch-2.1.0+cpu\n" +
		"ValueError: Invalid CUDA 'device=0' requested. Use 'device=cpu' or pass valid CUDA device(s)\n"
	var out, errb bytes.Buffer
	code := Doctor(context.Background(), []string{"--from", "-", "--json"}, Env{Stdin: strings.NewReader(report), Stdout: &out, Stderr: &errb})
	if code != ExitNotReady {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep struct {
		Findings []struct {
			ID, Cause string
			Evidence  []string
		}
		Facts struct {
			Origin string
			Paste  struct{ Signatures []struct{ ID string } }
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Facts.Origin != "paste" || len(rep.Findings) == 0 || rep.Findings[0].Cause != "cpu_only_build" {
		t.Fatalf("report: %+v", rep)
	}
	if !strings.Contains(strings.Join(rep.Findings[0].Evidence, "\n"), "Invalid CUDA 'device=0'") {
		t.Fatalf("the symptom should be evidence of the root cause: %q", rep.Findings[0].Evidence)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "paste.txt")
	if err := os.WriteFile(p, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	code, md, _ := run(t, "--from", p, "--markdown")
	if code != ExitNotReady || !strings.Contains(md, "cpu_only_build") {
		t.Fatalf("--from FILE --markdown: exit %d\n%s", code, md)
	}
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, []byte(" \n"), 0o644)
	for _, args := range [][]string{{"--from", empty}, {"--from", filepath.Join(dir, "missing.txt")}, {"--from", p, "--deep"}, {"--from", p, "--facts", readyFacts}} {
		if code, _, stderr := run(t, args...); code != ExitUsage || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

func TestDoctorInputsAreBounded(t *testing.T) {
	for _, args := range [][]string{{"--facts", "/dev/zero"}, {"--from", "/dev/zero"}} {
		code, _, stderr := run(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, "/dev/zero") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	big := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(big, []byte("{\"schema\": 1, \"pad\": \""+strings.Repeat("x", MaxFacts)+"\"}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "--facts", big); code != ExitUsage || !strings.Contains(stderr, "more than") {
		t.Errorf("a facts file over the cap: exit %d, stderr %q", code, stderr)
	}
}

// Terminal escapes in a pasted report never reach the terminal.
func TestPastedEscapesAreStripped(t *testing.T) {
	report := "\x1b]0;owned\x07RuntimeError: \x1b[31mFound no NVIDIA driver on your system.\x1b[0m\x1b[2J\n"
	var out, errb bytes.Buffer
	Doctor(context.Background(), []string{"--from", "-"}, Env{Stdin: strings.NewReader(report), Stdout: &out, Stderr: &errb})
	if strings.ContainsRune(out.String(), 0x1b) || !strings.Contains(out.String(), "Found no NVIDIA driver") {
		t.Fatalf("output:\n%q", out.String())
	}
}

// FuzzLoadFacts: any bytes as a --facts file give facts or an error naming
// the file, never a panic.
func FuzzLoadFacts(f *testing.F) {
	f.Add([]byte(`{"schema": 1, "nvml": {"status": "ok", "gpus": [{"index": 0, "name": "X"}]}}`))
	f.Add([]byte(`{"facts": {"schema": 1}}`))
	f.Add([]byte(`{"schema": 1, "nvml": {"gpus": "many"}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "facts.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		facts, err := LoadFacts(p)
		if err != nil && !strings.Contains(err.Error(), "facts.json") && !strings.Contains(err.Error(), "reading facts") {
			t.Fatalf("error does not name the file: %v", err)
		}
		if err == nil && facts.Origin != "saved" {
			t.Fatalf("loaded facts not marked saved: %+v", facts)
		}
	})
}
