//go:build !linux && !windows

package watch

import (
	"errors"
	"fmt"
)

// nativeSource reads a fake Linux root (Root or FS); this system's own
// processes cannot be read.
func nativeSource(o *Options) (source, error) {
	if o.Root == "" && o.FS == nil {
		return nil, fmt.Errorf("watch: reading this system's processes: %w (Linux and Windows only; run gpuwizard doctor instead)", errors.ErrUnsupported)
	}
	return o.procFS(), nil
}

// Supported reports whether this system's own processes can be watched:
// not here (Linux and Windows only).
func Supported() bool { return false }
