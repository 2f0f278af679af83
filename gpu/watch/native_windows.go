//go:build windows

package watch

import (
	"errors"
	"fmt"
)

// nativeSource reads a fake Linux root (Root or FS) on Windows; this
// system's own processes are read through the Windows API (winSource).
func nativeSource(o *Options) (source, error) {
	if o.Root == "" && o.FS == nil {
		return nil, fmt.Errorf("watch: reading this system's processes: %w", errors.ErrUnsupported)
	}
	return o.procFS(), nil
}

// Supported reports whether this system's own processes can be watched.
func Supported() bool { return false }
