//go:build !windows

package cli

import "io/fs"

// WindowBinary is the name of the window program, installed beside
// gpuwizard.
const WindowBinary = "gpuwizard-gui"

// runnable says whether a file of mode m can be run: a regular file with
// an execute bit.
func runnable(m fs.FileMode) bool { return m.IsRegular() && m&0o111 != 0 }
