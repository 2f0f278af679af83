package probe

import (
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// pathRules are the path rules of the probed machine, which need not be
// the host's: a test on Linux judges a Windows machine's fake root, and
// the tests of the Linux probe run under Windows (Wine) read a Linux one.
// Paths of the probed machine are built, split and compared with these
// rules only; they become files of the host through prober.file, which
// joins their components onto Options.Root with filepath.
type pathRules interface {
	join(elem ...string) string
	dir(p string) string
	base(p string) string
	isAbs(p string) bool
	// splitList splits a PATH-like list; empty entries are dropped.
	splitList(s string) []string
	// components are the names of an absolute path below its root, the
	// first naming its volume where the system has volumes: "/home/ada" →
	// home, ada; `C:\Users` → C, Users; `\\srv\share\x` → UNC, srv, share, x.
	components(p string) []string
	// fromComponents is the inverse of components.
	fromComponents(c []string) string
	// key is the form two paths naming the same file share (Windows
	// compares names without case).
	key(p string) string
	// exeNames are the file names a command name may have on disk
	// ("python" → python.exe, python.bat... on Windows).
	exeNames(name string) []string
	// executable says whether a regular file of that name and mode runs
	// as a command.
	executable(name string, mode fs.FileMode) bool
}

// posixRules are Linux's (and every Unix's) path rules.
type posixRules struct{}

func (posixRules) join(elem ...string) string { return path.Join(elem...) }
func (posixRules) dir(p string) string        { return path.Dir(p) }
func (posixRules) base(p string) string       { return path.Base(p) }
func (posixRules) isAbs(p string) bool        { return path.IsAbs(p) }
func (posixRules) key(p string) string        { return path.Clean(p) }

func (posixRules) splitList(s string) []string {
	var out []string
	for _, d := range strings.Split(s, ":") {
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}

func (posixRules) components(p string) []string {
	var out []string
	for _, c := range strings.Split(path.Clean("/"+p), "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

func (posixRules) fromComponents(c []string) string { return "/" + strings.Join(c, "/") }

func (posixRules) exeNames(name string) []string { return []string{name} }

// executable: a regular file with an execute bit. Where the host keeps no
// execute bits (a Linux fake root read on Windows), any regular file.
func (posixRules) executable(name string, mode fs.FileMode) bool {
	return mode.IsRegular() && (mode&0o111 != 0 || !hostExecBits)
}

// windowsRules are Windows' path rules: drive letters and UNC shares,
// backslashes (slashes read as backslashes), ';' between PATH entries,
// names compared without case, and commands known by their extension.
type windowsRules struct {
	// pathExt are the command extensions, lower case, from PATHEXT.
	pathExt []string
}

// defaultPathExt are the command extensions of a Windows without PATHEXT.
var defaultPathExt = []string{".com", ".exe", ".bat", ".cmd"}

func newWindowsRules(pathext string) windowsRules {
	var exts []string
	for _, e := range strings.Split(strings.ToLower(pathext), ";") {
		if e = strings.TrimSpace(e); strings.HasPrefix(e, ".") && len(e) > 1 {
			exts = append(exts, e)
		}
	}
	if len(exts) == 0 {
		exts = defaultPathExt
	}
	return windowsRules{pathExt: exts}
}

// winVolume splits p (backslashes only) into its volume ("C:", `\\srv\share`
// or "") and the rest.
func winVolume(p string) (vol, rest string) {
	if len(p) >= 2 && p[1] == ':' && isLetter(p[0]) {
		return strings.ToUpper(p[:1]) + ":", p[2:]
	}
	if strings.HasPrefix(p, `\\`) {
		parts := strings.SplitN(p[2:], `\`, 3)
		if len(parts) >= 2 && parts[0] != "" && parts[1] != "" {
			vol = `\\` + parts[0] + `\` + parts[1]
			if len(parts) == 3 {
				return vol, `\` + parts[2]
			}
			return vol, ""
		}
	}
	return "", p
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// clean is filepath.Clean with Windows' rules on any host.
func (windowsRules) clean(p string) string {
	p = strings.ReplaceAll(p, "/", `\`)
	vol, rest := winVolume(p)
	rooted := strings.HasPrefix(rest, `\`) || strings.HasPrefix(vol, `\\`)
	var names []string
	for _, n := range strings.Split(rest, `\`) {
		switch n {
		case "", ".":
		case "..":
			if len(names) > 0 && names[len(names)-1] != ".." {
				names = names[:len(names)-1]
			} else if !rooted {
				names = append(names, n)
			}
		default:
			names = append(names, n)
		}
	}
	s := strings.Join(names, `\`)
	switch {
	case rooted:
		return vol + `\` + s
	case s == "" && vol == "":
		return "."
	}
	return vol + s
}

func (w windowsRules) join(elem ...string) string {
	var parts []string
	for _, e := range elem {
		if e != "" {
			parts = append(parts, e)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return w.clean(strings.Join(parts, `\`))
}

func (w windowsRules) dir(p string) string {
	p = w.clean(p)
	vol, rest := winVolume(p)
	i := strings.LastIndex(rest, `\`)
	switch {
	case i < 0:
		if vol != "" {
			return vol
		}
		return "."
	case i == 0:
		return vol + `\`
	}
	return vol + rest[:i]
}

func (w windowsRules) base(p string) string {
	p = strings.TrimRight(strings.ReplaceAll(p, "/", `\`), `\`)
	_, rest := winVolume(p)
	if i := strings.LastIndex(rest, `\`); i >= 0 {
		rest = rest[i+1:]
	}
	if rest == "" {
		return `\`
	}
	return rest
}

func (windowsRules) isAbs(p string) bool {
	p = strings.ReplaceAll(p, "/", `\`)
	vol, rest := winVolume(p)
	return strings.HasPrefix(vol, `\\`) || vol != "" && strings.HasPrefix(rest, `\`)
}

// splitList splits PATH: ';' between entries, an entry may be quoted
// ("C:\Program Files\x" with its quotes) and is used without them.
func (windowsRules) splitList(s string) []string {
	var out []string
	for _, d := range strings.Split(s, ";") {
		d = strings.TrimSpace(d)
		if len(d) >= 2 && d[0] == '"' && d[len(d)-1] == '"' {
			d = d[1 : len(d)-1]
		}
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}

func (w windowsRules) components(p string) []string {
	vol, rest := winVolume(w.clean(p))
	var out []string
	switch {
	case strings.HasPrefix(vol, `\\`):
		out = append(out, "UNC")
		out = append(out, strings.Split(vol[2:], `\`)...)
	case vol != "":
		out = append(out, vol[:1])
	}
	for _, n := range strings.Split(rest, `\`) {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

func (w windowsRules) fromComponents(c []string) string {
	switch {
	case len(c) >= 3 && c[0] == "UNC":
		return w.clean(`\\` + strings.Join(c[1:], `\`))
	case len(c) >= 1 && len(c[0]) == 1 && isLetter(c[0][0]):
		return w.clean(strings.ToUpper(c[0]) + `:\` + strings.Join(c[1:], `\`))
	}
	return w.clean(`\` + strings.Join(c, `\`))
}

func (w windowsRules) key(p string) string { return strings.ToLower(w.clean(p)) }

func (w windowsRules) exeNames(name string) []string {
	if w.hasExt(name) {
		return []string{name}
	}
	out := make([]string, 0, len(w.pathExt))
	for _, e := range w.pathExt {
		out = append(out, name+e)
	}
	return out
}

func (w windowsRules) hasExt(name string) bool {
	low := strings.ToLower(name)
	for _, e := range w.pathExt {
		if strings.HasSuffix(low, e) {
			return true
		}
	}
	return false
}

func (w windowsRules) executable(name string, mode fs.FileMode) bool {
	return mode.IsRegular() && w.hasExt(name)
}

// FakeRootFile is where a file of the probed machine lies under a fake
// root (Options.Root), for tests that build one: its path's components,
// read with the rules of the system goos names, joined onto root.
func FakeRootFile(root, goos, path string) string {
	return filepath.Join(append([]string{root}, rulesFor(goos, "").components(path)...)...)
}

// rulesFor are the path rules of the system goos names.
func rulesFor(goos, pathext string) pathRules {
	if goos == "windows" {
		return newWindowsRules(pathext)
	}
	return posixRules{}
}
