package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutside: a path, with its symbolic links resolved, leads out of the
// folder it belongs to.
var ErrOutside = errors.New("outside the folder")

// Root is a folder whose files are read only from inside it: a dataset, a
// run. Symbolic links are followed while they stay inside; one that leads
// out is refused with ErrOutside, so a downloaded dataset cannot make
// gpuwizard read (or show, or copy) a file elsewhere on the machine.
type Root struct {
	dir      string // as the user named it
	resolved string // absolute, links resolved
}

// NewRoot is the folder dir; its own links are resolved once, so a dataset
// reached through a link (~/data -> /mnt/big/data) works.
func NewRoot(dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	res, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	return &Root{dir: dir, resolved: res}, nil
}

// Dir is the folder as it was named.
func (r *Root) Dir() string { return r.dir }

// Resolve gives path (absolute, or relative to the current folder) with
// every link resolved, or ErrOutside naming the link and where it leads.
// A path that does not exist gives the fs.ErrNotExist of the first part
// missing, except a dangling link, which names its target.
func (r *Root) Resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	res, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if target, lerr := os.Readlink(abs); lerr == nil {
			return "", fmt.Errorf("%s is a link to %s, which does not exist: %w", path, target, fs.ErrNotExist)
		}
		return "", err
	}
	if !inside(r.resolved, res) {
		return "", fmt.Errorf("%s leads to %s, %w %s: gpuwizard reads only the files inside it; copy the file in, or point gpuwizard at the folder that holds it",
			path, res, ErrOutside, r.dir)
	}
	return res, nil
}

// Contains says whether path, links resolved, is inside the root.
func (r *Root) Contains(path string) bool {
	_, err := r.Resolve(path)
	return err == nil
}

// Open opens a regular file inside the root (see the package's Open). A
// link to a device or a pipe is refused as such, wherever it leads.
func (r *Root) Open(path string) (*os.File, fs.FileInfo, error) {
	if err := r.Check(path); err != nil {
		return nil, nil, err
	}
	return Open(path)
}

// Check refuses what Open would refuse, without opening: anything but a
// regular file (a link to a device or a pipe is named as such, wherever it
// leads), a dangling link (naming where it leads) and a path leading out.
func (r *Root) Check(path string) error {
	if _, err := Check(path); err != nil {
		if _, rerr := os.Lstat(path); rerr == nil && errors.Is(err, fs.ErrNotExist) {
			_, err = r.Resolve(path) // a dangling link: say where it leads
		}
		return err
	}
	_, err := r.Resolve(path)
	return err
}

// ReadFile reads a regular file inside the root of at most limit bytes
// (see the package's ReadFile).
func (r *Root) ReadFile(path string, limit int64, what string) ([]byte, error) {
	if err := r.Check(path); err != nil {
		return nil, err
	}
	return ReadFile(path, limit, what)
}

// inside says whether p is dir or below it; both are clean and absolute.
func inside(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
