package trainer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gpuwizard/internal/safefile"
)

// ErrRunInUse is returned (wrapped) when another process trains in the run
// folder; the message names its PID.
var ErrRunInUse = errors.New("trainer: run folder in use")

// LockFile is the file in a run folder that a training process holds an
// exclusive flock(2) on, with its PID inside. The kernel releases the lock
// when the process ends, however it ends (kill -9 included), so a lock
// never outlives its trainer; the file itself stays.
const LockFile = ".lock"

// runLock is a held run-folder lock.
type runLock struct{ f *os.File }

// lockRunDir takes the run folder's lock without waiting, or says who
// holds it.
func lockRunDir(dir string) (*runLock, error) {
	p := filepath.Join(dir, LockFile)
	f, err := openLockFile(p)
	if err != nil {
		return nil, fmt.Errorf("trainer: locking the run folder: %w", err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("trainer: locking %s: %w", p, err)
	}
	if !held {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		who := "another gpuwizard"
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil && pid > 0 {
			who = fmt.Sprintf("another gpuwizard (PID %d)", pid)
			return nil, fmt.Errorf("%w: %s: %s is training in it: wait for it to finish, or stop it (kill -INT %d: it saves a resumable checkpoint), then try again",
				ErrRunInUse, dir, who, pid)
		}
		return nil, fmt.Errorf("%w: %s: %s is training in it: wait for it to finish, or stop it, then try again", ErrRunInUse, dir, who)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &runLock{f: f}, nil
}

// openLockFile opens (or creates) a run folder's lock file without ever
// following a link: gpuwizard writes its PID there and truncates it, so a
// .lock planted as a link to another file would empty that file. Such a
// link (or anything else that is not a regular file) is never gpuwizard's
// own: it is removed, not what it points to, and a fresh file made.
func openLockFile(p string) (*os.File, error) {
	f, err := safefile.OpenNoFollow(p, os.O_RDWR|os.O_CREATE, 0o644)
	if !errors.Is(err, safefile.ErrNotRegular) {
		return f, err
	}
	if rmErr := os.Remove(p); rmErr != nil {
		return nil, fmt.Errorf("%w (removing it: %w)", err, rmErr)
	}
	return safefile.OpenNoFollow(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
}

// release lets the lock go (idempotent; nil does nothing).
func (l *runLock) release() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Truncate(0) // no stale PID for people who read the file
	l.f.Close()     // closing releases the flock
	l.f = nil
}
