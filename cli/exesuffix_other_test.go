//go:build !windows

package cli

// exeSuffix ends the name of a program the tests put on PATH.
const exeSuffix = ""
