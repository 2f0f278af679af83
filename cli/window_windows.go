package cli

import "io/fs"

// WindowBinary is the name of the window program, installed beside
// gpuwizard.exe.
const WindowBinary = "gpuwizard-gui.exe"

// runnable says whether a file of mode m can be run: Windows runs a
// regular .exe file and has no execute bits.
func runnable(m fs.FileMode) bool { return m.IsRegular() }
