// Package safefile opens user-named files for reading. Only regular files
// are opened: symlinks are followed and their target checked, and folders,
// device files (a symlink to /dev/zero), named pipes (which would block the
// reader forever) and sockets are refused with a message naming the file.
// ReadFile reads with a size cap, so a file can never make the reader
// allocate without bound.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"gpuwizard/internal/plural"
)

// Sentinel errors, wrapped with the file's name and the fix.
var (
	// ErrNotRegular: the path is a folder, a device, a named pipe or a socket.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file is larger than the cap its reader allows.
	ErrTooLarge = errors.New("file too large")
)

// kind names what a non-regular file is, in words.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file"
}

// describe names path, and its target when it is a symlink.
func describe(path string) string {
	if lst, err := os.Lstat(path); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
		if target, err := filepath.EvalSymlinks(path); err == nil {
			return path + " (a link to " + target + ")"
		}
	}
	return path
}

// Stat is os.Stat whose usual failures read the same on every platform
// ("PATH: no such file or folder", not Windows' "GetFileAttributesEx
// PATH: The system cannot find the path specified"); the error still
// matches fs.ErrNotExist or fs.ErrPermission.
func Stat(path string) (fs.FileInfo, error) {
	st, err := os.Stat(path)
	switch {
	case err == nil:
		return st, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: no such file or folder: %w", path, fs.ErrNotExist)
	case errors.Is(err, fs.ErrPermission):
		return nil, fmt.Errorf("%s: permission denied: %w", path, fs.ErrPermission)
	}
	return nil, err
}

// Check stats path (following symlinks) and refuses anything but a regular
// file. It opens nothing, so a named pipe cannot block it.
func Check(path string) (fs.FileInfo, error) {
	st, err := Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, %w: gpuwizard reads only regular files; replace it with the file itself", describe(path), kind(st.Mode()), ErrNotRegular)
	}
	return st, nil
}

// Open opens a regular file for reading. The mode is checked before
// opening (so a named pipe never blocks), the file is opened non-blocking,
// and checked again on the open descriptor, which must be the same file:
// a path swapped between the two checks is refused too.
func Open(path string) (*os.File, fs.FileInfo, error) {
	st, err := Check(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	st2, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st2.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is %s, %w: gpuwizard reads only regular files; replace it with the file itself", describe(path), kind(st2.Mode()), ErrNotRegular)
	}
	if !os.SameFile(st, st2) {
		f.Close()
		return nil, nil, fmt.Errorf("%s changed while it was opened: %w; try again when nothing else writes to it", path, ErrNotRegular)
	}
	return f, st2, nil
}

// ReadFile reads a regular file of at most limit bytes. what names the
// file's role in the error ("the config file", "data.yaml").
func ReadFile(path string, limit int64, what string) ([]byte, error) {
	f, st, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > limit {
		return nil, tooLarge(path, st.Size(), limit, what)
	}
	// The file may grow after the stat: read one byte past the cap at most.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(path, int64(len(b)), limit, what)
	}
	return b, nil
}

func tooLarge(path string, size, limit int64, what string) error {
	return fmt.Errorf("%s is %s, more than the %s %s may have: %w; check that it is the right file", path, Size(size), Size(limit), what, ErrTooLarge)
}

// Size is a byte count in words: "512 KiB", "3.5 MiB".
func Size(n int64) string {
	switch {
	case n >= 1<<30:
		return trim(float64(n)/(1<<30)) + " GiB"
	case n >= 1<<20:
		return trim(float64(n)/(1<<20)) + " MiB"
	case n >= 1<<10:
		return trim(float64(n)/(1<<10)) + " KiB"
	}
	return plural.Count(int(n), "byte")
}

func trim(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s
}
