package trainer

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockOffset is where the lock sits: a byte far past the PID the file
// holds, because a Windows byte-range lock also stops other processes
// from reading the bytes it covers, and they read the PID.
const lockOffset = 0x7fffffff

// tryLock takes an exclusive LockFileEx lock on f without waiting: false
// when another process (or another handle) holds it. Windows releases it
// when the handle is closed or the process ends, however it ends.
func tryLock(f *os.File) (bool, error) {
	ol := &windows.Overlapped{OffsetHigh: lockOffset}
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION), errors.Is(err, windows.ERROR_IO_PENDING):
		return false, nil
	}
	return false, err
}
