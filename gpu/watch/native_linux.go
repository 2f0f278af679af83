//go:build linux

package watch

// nativeSource reads Linux's /proc: the live one under Root (or FS).
func nativeSource(o *Options) (source, error) { return o.procFS(), nil }

// Supported reports whether this system's own processes can be watched:
// on Linux through /proc.
func Supported() bool { return true }
