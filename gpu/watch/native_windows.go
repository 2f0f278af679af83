//go:build windows

package watch

// nativeSource reads Windows' own processes (winSource), or a fake Linux
// root (Root or FS) in tests.
func nativeSource(o *Options) (source, error) {
	if o.Root == "" && o.FS == nil {
		return newWinSource(), nil
	}
	return o.procFS(), nil
}

// Supported reports whether this system's own processes can be watched:
// on Windows through its process API.
func Supported() bool { return true }
