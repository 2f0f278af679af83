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

// The watch of a command it starts reads the command's /proc: Linux only
// today (watch_unix.go; a Windows watcher is another issue's work).

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

// With --json, each JSON line starts a line of standard output, however
// the command writes its own lines, and the command's bytes pass through.
func TestWatchCommandJSONLines(t *testing.T) {
	script := `printf 'half'; sleep 0.5; printf ' line\n'; sleep 0.3; printf 'end'`
	code, out, _ := runWatch(t, context.Background(), Env{}, "--json", "--interval", "100ms", "--", "sh", "-c", script)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var own []string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	jsonLines := 0
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "{") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("a broken JSON line %q: %v", l, err)
			}
			jsonLines++
			continue
		}
		own = append(own, l)
	}
	if strings.Join(own, "|") != "half line|end" || jsonLines < 2 {
		t.Fatalf("command lines %q, %d JSON lines:\n%s", own, jsonLines, out)
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
