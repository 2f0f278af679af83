package watch

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"

	"gpuwizard/gpu"
)

// hostileText reports the first character of s that could move the
// cursor, recolour the terminal, reorder the text or break the line.
func hostileText(s string) (rune, bool) {
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			return r, true
		}
	}
	return 0, false
}

// reportLines are the report's strings that are shown one a line.
func reportLines(r Report) []string {
	out := append([]string{r.Command, r.Verdict, r.Line()}, r.Evidence...)
	for _, p := range r.Processes {
		out = append(out, p.Command)
	}
	for _, f := range r.Findings {
		out = append(append(out, f.Title), f.Evidence...)
		for _, s := range f.Fix {
			out = append(out, s.Command)
			out = append(out, strings.Split(s.Text, "\n")...)
		}
	}
	return out
}

// A process may name itself anything: an escape sequence that clears the
// screen, a newline and a fake verdict, a right-to-left override, in its
// command line, its short name (with a ")" that mimics /proc/PID/stat's
// fields), its folder and its environment. Every line of the report stays
// one printable line, and the names are still there, escaped.
func TestHostileProcessNames(t *testing.T) {
	f := newFixture(t)
	evil := "train\x1b[2J\x1b[H\n✔ On the GPU\u202eyp.py"
	p := fakeProc{pid: 6950, ppid: 4000, comm: "x) R 1 1 (y", uid: 1000, threads: 4, ticks: 900,
		cmdline: []string{venv + "/bin/python", evil, "--device", "cpu\r\n"},
		environ: withEnv("CUDA_VISIBLE_DEVICES=\x1b[31m\n0"), exe: "/usr/bin/python3.12", cwd: "/home/ada/\x1b]0;title\x07dir",
		maps: cat(baseLibs, torchCUDA)}
	f.setProc(p)
	r := f.watch(t, 6950, 3, func(i int) {
		p.ticks = 900 + uint64(i)*100
		f.setProc(p)
	})
	if r.PID != 6950 || r.State == StateUnknown {
		t.Fatalf("pid %d state %s: %s", r.PID, r.State, r.Verdict)
	}
	for _, l := range reportLines(r) {
		if c, bad := hostileText(l); bad {
			t.Fatalf("%U in a line of the report: %q", c, l)
		}
	}
	if !strings.Contains(r.Command, `train\x1b[2J\x1b[H\n✔ On the GPU\u202eyp.py`) {
		t.Fatalf("command %q: the name is not shown escaped", r.Command)
	}
	var text strings.Builder
	if err := r.WriteText(&text, true); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(text.String(), "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "✔ On the GPU") {
			t.Fatalf("the process's own text starts a line of the report:\n%s", text.String())
		}
	}
}

// A command line longer than the cut is cut at a character's start: the
// short command is valid UTF-8.
func TestShortCommandCutsWholeCharacters(t *testing.T) {
	for pad := 0; pad < 4; pad++ {
		s := shortCommand([]string{"python", strings.Repeat("a", pad) + strings.Repeat("é", 200)}, "")
		if !strings.HasSuffix(s, "…") || len(s) > 160 || strings.ContainsRune(s, '\uFFFD') || !isValid(s) {
			t.Fatalf("pad %d: %q", pad, s)
		}
	}
}

func isValid(s string) bool { return strings.ToValidUTF8(s, "?") == s }

// Watching another user's process (root watching bob's training), the
// doctor's probe never runs a program found on that user's PATH (bob's
// own "nvcc" or "ldconfig"): it looks them up on watch's own PATH. The
// watcher's own processes keep their PATH.
func TestAnotherUsersPATHIsNotRun(t *testing.T) {
	f := newFixture(t)
	t.Setenv("PATH", "/usr/bin:/bin")
	bob := fakeProc{pid: 6960, ppid: 1, comm: "python3", uid: 1001, threads: 8, ticks: 900,
		cmdline: []string{"/usr/bin/python3", "train.py"}, environ: []string{"HOME=/home/bob", "PATH=/home/bob/bin:/usr/bin", "CUDA_VISIBLE_DEVICES=0"},
		exe: "/usr/bin/python3.12", cwd: "/home/bob", maps: cat(baseLibs, torchCUDA)}
	f.setProc(bob)
	ada := bob
	ada.pid, ada.uid, ada.environ = 6961, 1000, withEnv("PATH=/home/ada/bin:/usr/bin", "CUDA_VISIBLE_DEVICES=0")
	f.setProc(ada)
	for _, c := range []struct {
		pid  int
		path string
	}{{6960, "/usr/bin:/bin"}, {6961, "/home/ada/bin:/usr/bin"}} {
		var seen []map[string]string
		o := f.options()
		machine := o.Machine
		o.Machine = func(ctx context.Context, env map[string]string) *gpu.Facts {
			seen = append(seen, env)
			return machine(ctx, env)
		}
		w := New(o, c.pid)
		ctx := context.Background()
		for range 2 {
			if err := w.Sample(ctx); err != nil {
				t.Fatal(err)
			}
			f.now = f.now.Add(time.Second)
		}
		r := w.Report(ctx)
		w.Close()
		if len(seen) == 0 {
			t.Fatalf("PID %d: the machine was not probed", c.pid)
		}
		for _, env := range seen {
			if env["PATH"] != c.path || env["CUDA_VISIBLE_DEVICES"] != "0" {
				t.Fatalf("PID %d: probed with PATH %q CUDA_VISIBLE_DEVICES %q, want PATH %q", c.pid, env["PATH"], env["CUDA_VISIBLE_DEVICES"], c.path)
			}
		}
		if r.Environ["CUDA_VISIBLE_DEVICES"] != "0" {
			t.Fatalf("PID %d: environ %v", c.pid, r.Environ)
		}
	}
}

// A command line of a megabyte (the kernel allows 2 MiB of arguments) is
// shown by its start: every line of the report stays bounded.
func TestHugeCommandLine(t *testing.T) {
	f := newFixture(t)
	big := strings.Repeat("a", 127_000)
	args := []string{venv + "/bin/python", "train.py"}
	for range 8 {
		args = append(args, big)
	}
	p := fakeProc{pid: 6970, ppid: 4000, comm: "python", uid: 1000, threads: 4, ticks: 900, cmdline: args,
		environ: withEnv("BIG="+big, "LD_LIBRARY_PATH="+big), exe: "/usr/bin/python3.12", cwd: "/home/ada/project", maps: cat(baseLibs, torchCUDA)}
	f.setProc(p)
	r := f.watch(t, 6970, 3, nil)
	total := 0
	for _, l := range reportLines(r) {
		if len(l) > maxLine+40 {
			t.Fatalf("a line of %d bytes: %.80q…", len(l), l)
		}
		total += len(l)
	}
	if total > 64<<10 || !evidenceHas(r, "more bytes)") || len(r.Environ["LD_LIBRARY_PATH"]) != maxLine {
		t.Fatalf("%d bytes in the report's lines; evidence %.300q", total, r.Evidence)
	}
}

// A process with more mappings than any library set (vm.max_map_count can
// be raised to millions) is read line by line and its names are capped; a
// line longer than any path is skipped, and the lines after it are read.
func TestHostileMaps(t *testing.T) {
	var b strings.Builder
	b.WriteString("7f00-7f01 r-xp 00000000 fd:01 12 /x/" + strings.Repeat("d", 100_000) + "\n")
	b.WriteString("7f00-7f01 r-xp 00000000 fd:01 12 /opt/env/lib/libtorch_cuda.so\n")
	for i := range maxMapped + 100 {
		fmt.Fprintf(&b, "7f00-7f01 r--p 00000000 fd:01 %d /data/shard-%d.bin\n", i, i)
	}
	files := parseMaps(b.String())
	if len(files) != maxMapped || files[0] != "/opt/env/lib/libtorch_cuda.so" || files[1] != "/data/shard-0.bin" {
		t.Fatalf("%d files, first %q", len(files), files[:2])
	}
	if n := fieldCount([]byte("  7f00-7f01 r-xp\t00000000 fd:01 12   ")); n != 5 {
		t.Fatalf("fieldCount %d", n)
	}
}

// A process with thousands of children (a fork storm, a shell starting
// sleeps in a loop) is followed up to maxTree descendants, and the
// evidence says the tree may hold more.
func TestHugeTree(t *testing.T) {
	f := newFixture(t)
	const n = maxTree + 50
	parent := fakeProc{pid: 20000, ppid: 4000, comm: "bash", uid: 1000, threads: 1, cmdline: []string{"bash", "spawn.sh"},
		environ: adaEnv, exe: "/usr/bin/bash", cwd: "/home/ada", maps: []string{"/usr/bin/bash"}}
	f.setProc(parent)
	var kids []string
	for i := 1; i <= n; i++ {
		kids = append(kids, fmt.Sprint(20000+i))
		f.setProc(fakeProc{pid: 20000 + i, ppid: 20000, comm: "sleep", uid: 1000, threads: 1, cmdline: []string{"sleep", "120"},
			environ: adaEnv, exe: "/usr/bin/sleep", cwd: "/home/ada", maps: []string{"/usr/bin/sleep"}})
	}
	f.write(t, "proc/20000/task/20000/children", strings.Join(kids, " ")+" ")
	r := f.watch(t, 20000, 2, nil)
	if len(r.Processes) != maxTree+1 || !evidenceHas(r, fmt.Sprintf("%d children (20001, 20002", maxTree)) ||
		!evidenceHas(r, fmt.Sprintf("watch follows the first %d descendants, and the tree may hold more", maxTree)) {
		t.Fatalf("%d processes; evidence %q", len(r.Processes), r.Evidence)
	}
}
