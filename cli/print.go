package cli

import (
	"fmt"
	"io"

	"gpuwizard/internal/printable"
)

// printErr writes "prefix err" on w, one message with the names in it
// (files, classes: they come from users' folders) escaped, so a file named
// with an escape sequence or a newline cannot drive the terminal or fake a
// line of output.
func printErr(w io.Writer, prefix string, err error) {
	fmt.Fprintln(w, prefix, printable.Text(err.Error()))
}
