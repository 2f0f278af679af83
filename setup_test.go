//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// make deps refuses a Go older than go.mod's `go` line in one line that
// names the version needed and where to get it (Debian 12's own Go 1.19
// failed later with "package slices is not in GOROOT").
func TestCheckGoVersion(t *testing.T) {
	for _, c := range []struct {
		version string // what the fake go prints; "" for no go at all
		ok      bool
	}{
		{"go version go1.19.8 linux/amd64", false},
		{"go version go1.25.9 linux/amd64", false},
		{"go version go1.26rc1 linux/amd64", false},
		{"", false},
		{"go version go1.26 linux/amd64", true},
		{"go version go1.26.8 linux/amd64", true},
		{"go version go1.27.0 darwin/arm64", true},
	} {
		bin := t.TempDir()
		if c.version != "" {
			script := "#!/bin/sh\necho '" + c.version + "'\n"
			if err := os.WriteFile(filepath.Join(bin, "go"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("sh", "tools/check-go.sh", "go.mod")
		goName := "go"
		if c.version == "" {
			goName = "go-that-is-not-installed" // /usr/bin may hold a go
		}
		cmd.Env = append(os.Environ(), "PATH="+bin+":/usr/bin:/bin", "GO="+goName)
		out, err := cmd.CombinedOutput()
		msg := string(out)
		if c.ok {
			if err != nil || msg != "" {
				t.Errorf("%q: %v %q, want no complaint", c.version, err, msg)
			}
			continue
		}
		if err == nil || strings.Count(strings.TrimSpace(msg), "\n") != 0 ||
			!strings.Contains(msg, "Go 1.26 or newer is needed") || !strings.Contains(msg, "https://go.dev/dl/") {
			t.Errorf("%q: %v, %q; want one line naming Go 1.26 and https://go.dev/dl/, and a failure", c.version, err, msg)
		}
	}
}
