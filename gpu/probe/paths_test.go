package probe

import (
	"path/filepath"
	"slices"
	"testing"
)

// Windows' path rules hold on every host: drive letters, UNC shares,
// slashes read as backslashes, names without case, PATH's quoted entries.
func TestWindowsPathRules(t *testing.T) {
	w := newWindowsRules(".COM;.EXE;.BAT;.CMD;.PY")
	cases := []struct{ got, want string }{
		{w.join(`C:\Program Files`, "NVIDIA", `..\NVIDIA GPU Computing Toolkit`, "CUDA"), `C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA`},
		{w.join(`c:/Users/ada/`, `.venv\Scripts`, "python.exe"), `C:\Users\ada\.venv\Scripts\python.exe`},
		{w.join(`\\nas\share`, "datasets", "coco"), `\\nas\share\datasets\coco`},
		{w.dir(`C:\Users\ada\python.exe`), `C:\Users\ada`},
		{w.dir(`C:\python.exe`), `C:\`},
		{w.dir(`C:\`), `C:\`},
		{w.dir(`\\nas\share\x.yaml`), `\\nas\share\`},
		{w.base(`C:\Users\ada\.venv\`), ".venv"},
		{w.base(`C:\`), `\`},
		{w.fromComponents([]string{"C", "Windows", "System32"}), `C:\Windows\System32`},
		{w.fromComponents([]string{"UNC", "nas", "share", "x"}), `\\nas\share\x`},
		{w.key(`C:\WINDOWS\system32\`), `c:\windows\system32`},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: got %q, want %q", i, c.got, c.want)
		}
	}
	for p, abs := range map[string]bool{`C:\x`: true, `c:/x`: true, `\\nas\share\x`: true, `C:x`: false, `\x`: false, `x\y`: false, `/home/ada`: false} {
		if w.isAbs(p) != abs {
			t.Errorf("isAbs(%q) = %v", p, !abs)
		}
	}
	if got := w.components(`\\nas\share\data\a.png`); !slices.Equal(got, []string{"UNC", "nas", "share", "data", "a.png"}) {
		t.Errorf("components %q", got)
	}
	if got := w.splitList(`C:\a;"C:\Program Files\b";;C:\c\`); !slices.Equal(got, []string{`C:\a`, `C:\Program Files\b`, `C:\c\`}) {
		t.Errorf("splitList %q", got)
	}
	if got := w.exeNames("py"); !slices.Equal(got, []string{"py.com", "py.exe", "py.bat", "py.cmd", "py.py"}) {
		t.Errorf("exeNames %q", got)
	}
	if !w.executable("nvcc.EXE", 0o644) || w.executable("nvcc", 0o755) {
		t.Error("a Windows command is known by its extension, not its mode")
	}
	if got := FakeRootFile("root", "windows", `D:\data\x`); got != filepath.Join("root", "D", "data", "x") {
		t.Errorf("FakeRootFile %q", got)
	}
}

// Linux's rules are path's, whatever the host: a Linux fake root read
// under Windows keeps /home/ada, ':' between PATH entries.
func TestPosixPathRules(t *testing.T) {
	var p posixRules
	if got := p.join("/home/ada", "project", ".venv/bin", "python"); got != "/home/ada/project/.venv/bin/python" {
		t.Errorf("join %q", got)
	}
	if got := p.splitList("/a::/b"); !slices.Equal(got, []string{"/a", "/b"}) {
		t.Errorf("splitList %q", got)
	}
	if got := p.fromComponents(p.components("/usr//lib/../bin/")); got != "/usr/bin" {
		t.Errorf("round trip %q", got)
	}
	if got := FakeRootFile("root", "linux", "/proc/modules"); got != filepath.Join("root", "proc", "modules") {
		t.Errorf("FakeRootFile %q", got)
	}
}
