package fakemachine

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpuwizard/gpu/nvml"
)

// WindowsDir is the fake Windows workstation's folder, relative to the
// test of a package directly under gpu (gpu/probe, gpu/doctor): root/
// holds its drive C: (root/C/Windows/System32/nvml.dll is
// C:\Windows\System32\nvml.dll), commands.txt the outputs of the
// commands the probe runs there, env.txt its shell's environment.
const WindowsDir = "../testdata/windows"

// WindowsUser's folders on the workstation.
const (
	WindowsHome    = `C:\Users\ada`
	WindowsProject = `C:\Users\ada\projects\yolo`
	WindowsVenv    = `C:\Users\ada\projects\yolo\.venv`
	WindowsSite    = `C:\Users\ada\projects\yolo\.venv\Lib\site-packages`
	WindowsPython  = `C:\Users\ada\AppData\Local\Programs\Python\Python312`
)

// WindowsMachine is the fake Windows 11 workstation of testdata/windows:
// an RTX 4090 on driver 560.94 (Windows' 32.0.15.6094), CUDA 12.4 under
// Program Files, cuDNN 9.5 from NVIDIA's installer, Python 3.12 and 3.11
// from python.org with the py launcher, Miniconda, and the project's venv
// (activated) with torch 2.5.1+cu124 and Ultralytics. Its files are
// copied into Files (keys are Windows paths), so that a test can change
// them before Build; nv is its NVML.
func WindowsMachine(t testing.TB, nv nvml.Library) *Machine {
	t.Helper()
	m := &Machine{Files: map[string]string{}, Links: map[string]string{}, Env: map[string]string{},
		Run: Runner{}, NVML: nv, GOOS: "windows", Home: WindowsHome, Cwd: WindowsProject,
		// Nothing here hangs: a long timeout keeps a slow source answering
		// (under Wine on a loaded machine the python source took more than
		// the default 2 s). A test of hangs sets its own.
		Timeout: 20 * time.Second}
	root := filepath.Join(WindowsDir, "root")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		parts := strings.Split(rel, string(filepath.Separator))
		m.Files[parts[0]+`:\`+strings.Join(parts[1:], `\`)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatalf("reading the fake Windows workstation: %v", err)
	}
	m.Run = readCommands(t, filepath.Join(WindowsDir, "commands.txt"))
	for _, line := range readLines(t, filepath.Join(WindowsDir, "env.txt")) {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			m.Env[k] = v
		}
	}
	return m
}

// readCommands reads commands.txt: "$ COMMAND" lines, each followed by
// its output.
func readCommands(t testing.TB, path string) Runner {
	t.Helper()
	r := Runner{}
	key := ""
	var out []string
	flush := func() {
		if key != "" {
			r[key] = strings.Join(out, "\n") + "\n"
		}
	}
	for _, line := range readLines(t, path) {
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			flush()
			key, out = cmd, nil
			continue
		}
		if key != "" {
			out = append(out, line)
		}
	}
	flush()
	if len(r) == 0 {
		t.Fatalf("%s holds no command", path)
	}
	return r
}

func readLines(t testing.TB, path string) []string {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var lines []string
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// RTX4090 is a GeForce RTX 4090 (Ada, compute capability 8.9) at PCI
// bus 1, as the workstation's NVML reports it.
func RTX4090() GPUSpec {
	return GPUSpec{Name: "NVIDIA GeForce RTX 4090", CC: [2]int{8, 9}, TotalMiB: 24564, UsedMiB: 1210}
}
