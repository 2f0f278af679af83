package cli

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
)

// BuildStamp is what the Go toolchain recorded about this binary.
type BuildStamp struct {
	Version  string // the module version: a tag, or a pseudo-version from the commit
	Commit   string // VCS revision
	Time     string // the commit's time (RFC 3339)
	Modified bool   // built from a tree with uncommitted changes
	Go       string // toolchain
	Platform string // GOOS/GOARCH
}

// ReadBuildStamp reads the stamp from the binary's build information.
func ReadBuildStamp() BuildStamp {
	b := BuildStamp{Version: "(unknown)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if v := bi.Main.Version; v != "" {
		b.Version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the stamp in one line.
func (b BuildStamp) String() string {
	s := "gpuwizard " + b.Version
	if b.Commit != "" {
		c := b.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		s += " (commit " + c
		if b.Time != "" {
			s += ", " + b.Time
		}
		if b.Modified {
			s += ", with uncommitted changes"
		}
		s += ")"
	}
	return s
}

// versionHelp is the help of `gpuwizard version`.
func versionHelp() help {
	return help{
		usage: "Usage: gpuwizard version",
		about: `Prints the version, the commit and its date, the Go toolchain and platform,
and where the window program (gpuwizard-gui) is, if it is installed.
`,
		examples: `  gpuwizard version
  gpuwizard --version
`,
		exit: "0, 2 usage error.\n",
	}
}

// Version prints `gpuwizard version`: the build stamp, the toolchain and
// whether the window binary is there.
func Version(args []string, env Env) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if code, ok := parseFlags(fs, args, env, versionHelp()); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "version: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	b := ReadBuildStamp()
	fmt.Fprintln(env.Stdout, b)
	fmt.Fprintf(env.Stdout, "built with %s for %s\n", b.Go, b.Platform)
	if p, ok := FindWindowBinary(env); ok {
		fmt.Fprintf(env.Stdout, "window: %s\n", p)
	} else {
		fmt.Fprintf(env.Stdout, "window: %s not found beside this binary or on PATH (the commands work without it)\n", WindowBinary)
	}
	return ExitOK
}
