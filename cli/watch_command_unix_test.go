//go:build unix

package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// These tests start commands through sh: Unix only (the Windows watcher is
// tested in gpu/watch under Wine).

func TestWatchCommandPassesThroughAndExits(t *testing.T) {
	code, out, stderr := runWatch(t, context.Background(), Env{}, "--interval", "100ms", "--", "sh", "-c", "echo one; sleep 0.4; echo two >&2; exit 3")
	if code != 3 {
		t.Fatalf("the command's exit status: %d\n%s", code, stderr)
	}
	if out != "one\n" {
		t.Fatalf("stdout %q: the command's output only", out)
	}
	if !strings.Contains(stderr, "two\n") || !strings.Contains(stderr, "ended after") || !strings.Contains(stderr, "with exit status 3") {
		t.Fatalf("stderr:\n%s", stderr)
	}
	code, _, stderr = runWatch(t, context.Background(), Env{}, "--", "gpuwizard-no-such-command")
	if code != 127 || !strings.Contains(stderr, "cannot start gpuwizard-no-such-command") {
		t.Fatalf("missing command: %d %s", code, stderr)
	}
	code, _, _ = runWatch(t, context.Background(), Env{}, "--once", "--window", "200ms", "--", "sh", "-c", "sleep 0.5; exit 4")
	if code != ExitFailed {
		t.Fatalf("--once gives the verdict's status, not the command's: %d", code)
	}
}

// With --json, standard output holds watch's JSON lines alone: the
// command's standard output goes to standard error, its bytes unchanged.
func TestWatchCommandJSONLines(t *testing.T) {
	script := `printf 'half'; sleep 0.5; printf ' line\n'; sleep 0.3; printf 'end'`
	code, out, stderr := runWatch(t, context.Background(), Env{}, "--json", "--interval", "100ms", "--", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	jsonLines := 0
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("standard output holds a line that is not watch's JSON %q: %v", sc.Text(), err)
		}
		jsonLines++
	}
	if jsonLines < 2 || stderr != "half line\nend" {
		t.Fatalf("%d JSON lines; stderr %q (want the command's output unchanged)", jsonLines, stderr)
	}
}

// A command that ends at once is named by its command line, never
// "[true]".
func TestWatchCommandThatEndsAtOnce(t *testing.T) {
	for i := 0; i < 5; i++ {
		code, _, stderr := runWatch(t, context.Background(), Env{}, "--interval", "100ms", "--", "true")
		if code != 0 || strings.Contains(stderr, "[true]") {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	}
}

// --interval 2s reports every 2 s, not every 3.
func TestWatchIntervalKeepsTheBeat(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 5 s")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second+500*time.Millisecond)
	defer cancel()
	_, out, _ := runWatch(t, ctx, Env{}, "--json", "--interval", "1s", "--", "sleep", "30")
	var times []float64
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct {
			Elapsed float64 `json:"elapsed_s"`
			Final   bool    `json:"final"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && !m.Final {
			times = append(times, m.Elapsed)
		}
	}
	if len(times) < 5 {
		t.Fatalf("%d reports in 5.5 s at --interval 1s (want 5): %v", len(times), times)
	}
	for i := 1; i < len(times); i++ {
		if d := times[i] - times[i-1]; d < 0.7 || d > 1.3 {
			t.Fatalf("reports %v s apart: %v", d, times)
		}
	}
}

func TestWatchStopsTheCommandItStarted(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the grace period")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	code, _, stderr := runWatch(t, ctx, Env{}, "--interval", "100ms", "--", "sleep", "30")
	if code != 128+15 || time.Since(start) > 10*time.Second {
		t.Fatalf("exit %d after %s (want 143: SIGTERM after the grace period)\n%s", code, time.Since(start), stderr)
	}
	if !strings.Contains(stderr, "with exit status 143") {
		t.Fatalf("summary: %s", stderr)
	}
}
