package safefile

import (
	"fmt"
	"io/fs"
	"os"
)

// OpenNoFollow opens path for writing (flag as os.OpenFile's) without ever
// following a symbolic link at its last part: a link there is refused with
// ErrNotRegular, so a planted link cannot make a writer truncate or
// overwrite the file it points to. Anything but a regular file is refused
// too. The parts above path are trusted (the caller's own folder).
func OpenNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, %w: gpuwizard never writes through it; delete it and try again", describe(path), kindOrLink(st.Mode()), ErrNotRegular)
	}
	f, err := os.OpenFile(path, flag|noFollow|nonBlock, perm)
	if err != nil {
		if isLinkRefused(err) {
			return nil, fmt.Errorf("%s is a symbolic link, %w: gpuwizard never writes through it; delete it and try again", path, ErrNotRegular)
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	lst, lerr := os.Lstat(path)
	if !st.Mode().IsRegular() || lerr != nil || !os.SameFile(st, lst) {
		f.Close()
		return nil, fmt.Errorf("%s changed while it was opened or is not a regular file, %w: try again when nothing else writes to it", path, ErrNotRegular)
	}
	return f, nil
}

func kindOrLink(m fs.FileMode) string {
	if m&fs.ModeSymlink != 0 {
		return "a symbolic link"
	}
	return kind(m)
}
