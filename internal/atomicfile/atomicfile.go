// Package atomicfile replaces files so that a crash or a full disk leaves
// either the old file or the new one, never a torn one.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// CreateTemp implements FileSystem.
func (OS) CreateTemp(dir, pattern string) (File, error) { return os.CreateTemp(dir, pattern) }

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
