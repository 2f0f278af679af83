// Package atomicfile replaces files so that a crash or a full disk leaves
// either the old file or the new one, never a torn one.
package atomicfile

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// File is the part of *os.File a write needs.
type File interface {
	io.Writer
	Sync() error
	Close() error
	Name() string
}

// FileSystem is where files are written; tests pass one that fails.
type FileSystem interface {
	CreateTemp(dir, pattern string) (File, error)
	Rename(from, to string) error
	Remove(name string) error
}

// OS is the real file system.
type OS struct{}

// CreateTemp implements FileSystem: like os.CreateTemp, but the file is
// made with mode 0644 less the umask (os.CreateTemp makes 0600), since it
// becomes the file itself: a run's settings and results are as readable as
// any file the user makes.
func (OS) CreateTemp(dir, pattern string) (File, error) {
	prefix, suffix, _ := strings.Cut(pattern, "*")
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if os.IsExist(err) && try < 10000 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return f, nil
	}
}

// Rename implements FileSystem.
func (OS) Rename(from, to string) error { return os.Rename(from, to) }

// Remove implements FileSystem.
func (OS) Remove(name string) error { return os.Remove(name) }

// Write replaces path with data: a temporary file in the same folder,
// synced, renamed over path, then the folder synced. On any failure the old
// file is untouched and the temporary file removed. fsys nil is OS.
func Write(fsys FileSystem, path string, data []byte) error {
	if fsys == nil {
		fsys = OS{}
	}
	tmp, err := fsys.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	fail := func(err error) error {
		tmp.Close()
		fsys.Remove(tmp.Name())
		return fmt.Errorf("writing %s (the previous version is kept): %w", path, err)
	}
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() {
		os.Chmod(tmp.Name(), st.Mode().Perm()) // keep the replaced file's permissions
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		fsys.Remove(tmp.Name())
		return fmt.Errorf("writing %s (the previous version is kept): %w", path, err)
	}
	if err := fsys.Rename(tmp.Name(), path); err != nil {
		fsys.Remove(tmp.Name())
		return fmt.Errorf("writing %s (the previous version is kept): %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
