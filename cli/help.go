package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// help is a command's help text: how to call it and what it does, examples,
// then its flags (from its flag set) and its exit status.
type help struct {
	usage    string // "Usage: gpuwizard lint [flags] PATH", and more lines
	about    string // a paragraph: what the command does
	examples string // two or three command lines, indented
	exit     string // the exit status line(s)
}

// write prints the help with fs's flags to w.
func (h help) write(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s\n\n%s\nExamples:\n%s\nFlags:\n", h.usage, h.about, h.examples)
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
	fmt.Fprintf(w, "\nExit status: %s", h.exit)
}

// parseFlags parses a command's flags. -h or --help prints the help on
// standard output and gives exit status 0; a wrong flag prints what is
// wrong and the help on standard error and gives 2. ok is true when the
// command should run.
func parseFlags(fs *flag.FlagSet, args []string, env Env, h help) (code int, ok bool) {
	fs.SetOutput(env.Stderr) // where the flag package says what is wrong
	fs.Usage = func() {}     // the help is printed below, on the right stream
	err := fs.Parse(args)
	switch {
	case err == nil:
		return ExitOK, true
	case errors.Is(err, flag.ErrHelp):
		h.write(env.Stdout, fs)
		return ExitOK, false
	}
	fmt.Fprintln(env.Stderr)
	h.write(env.Stderr, fs)
	return ExitUsage, false
}
