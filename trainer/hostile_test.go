//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package trainer

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gpuwizard/internal/safefile"
)

// finishedRun trains the tiny model for 2 epochs and returns its folder.
func finishedRun(t *testing.T) string {
	t.Helper()
	cfg := tinyConfig(t, tinyDataset(t, 20))
	cfg.Epochs = 2
	_, res, err := collect(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res.RunDir
}

func flipBit(t *testing.T, path string, bit int) (restore func()) {
	t.Helper()
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b := append([]byte(nil), orig...)
	b[bit/8] ^= 1 << (bit % 8)
	os.WriteFile(path, b, 0o644)
	return func() { os.WriteFile(path, orig, 0o644) }
}

func TestCheckpointChecksumRefusesFlippedBits(t *testing.T) {
	dir := finishedRun(t)
	best, last := filepath.Join(dir, "best.ckpt"), filepath.Join(dir, "last.ckpt")
	raw, _ := os.ReadFile(best)
	if !bytes.HasPrefix(raw, []byte(checkpointMagic)) || len(raw) < 1000 {
		t.Fatalf("best.ckpt does not start with the header: % x", raw[:16])
	}
	// 200 single-bit flips anywhere in best.ckpt (header, payload, checksum):
	// every one is refused, none loads.
	rng := rand.New(rand.NewSource(1))
	bits := []int{0, 8*len(checkpointMagic) + 31, 8 * (checkpointHeader - 1), 8*len(raw) - 1}
	for len(bits) < 200 {
		bits = append(bits, rng.Intn(8*len(raw)))
	}
	for _, bit := range bits {
		restore := flipBit(t, best, bit)
		_, err := LoadCheckpoint(best)
		restore()
		if !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), best) {
			t.Fatalf("bit %d flipped: %v", bit, err)
		}
		if bit >= 8*len(checkpointMagic) && !errors.Is(err, ErrDamaged) {
			t.Fatalf("bit %d flipped: not reported as damaged: %v", bit, err)
		}
	}
	// The message offers the other checkpoint when it is intact.
	restore := flipBit(t, best, 8*2000+3)
	_, err := LoadCheckpoint(best)
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), best+" is damaged (its SHA-256 checksum does not match") ||
		!strings.Contains(err.Error(), last+" (epoch 2 of 2) is intact: predict with --model "+filepath.Join(dir, "last")) {
		t.Fatalf("damaged best.ckpt: %v", err)
	}
	restore()
	restore = flipBit(t, last, 8*2000+3)
	_, _, err = collect(context.Background(), Config{}, Options{Resume: dir, Extend: 1})
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), last+" is damaged") ||
		!strings.Contains(err.Error(), best+" (epoch ") || !strings.Contains(err.Error(), "cp "+best+" "+last+" && gpuwizard train --resume "+dir) {
		t.Fatalf("damaged last.ckpt on resume: %v", err)
	}
	// Both damaged: start again.
	flipBit(t, best, 8*2000+3)
	_, err = LoadCheckpoint(best)
	if !strings.Contains(err.Error(), "last.ckpt is not usable either") || !strings.Contains(err.Error(), "gpuwizard train --config "+filepath.Join(dir, "args.yaml")) {
		t.Fatalf("both damaged: %v", err)
	}
	restore()
	// Truncated: damaged, not a decoding error.
	os.WriteFile(best, raw[:len(raw)/2], 0o644)
	if _, err := LoadCheckpoint(best); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("truncated: %v", err)
	}
	// Not a checkpoint at all.
	os.WriteFile(best, []byte("hello, world: not a checkpoint"), 0o644)
	if _, err := LoadCheckpoint(best); !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), "not a gpuwizard checkpoint") {
		t.Fatalf("foreign file: %v", err)
	}
	// A newer layout, with a valid checksum, is named as such.
	ck, err := LoadCheckpoint(last)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := encodeCheckpoint(ck)
	if _, err := decodeCheckpoint("new.ckpt", withVersion(b, 3)); err == nil || !strings.Contains(err.Error(), "layout version 3") {
		t.Fatalf("newer layout: %v", err)
	}
}

// legacyBytes is ck as a version 1 file: a bare gob.
func legacyBytes(t *testing.T, ck *Checkpoint) []byte {
	c := *ck
	c.Version = legacyVersion
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&c); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestLegacyCheckpointLoadsWithAWarning(t *testing.T) {
	dir := finishedRun(t)
	last := filepath.Join(dir, "last.ckpt")
	ck, err := LoadCheckpoint(last)
	if err != nil || ck.Warning() != "" {
		t.Fatalf("a current checkpoint: %v, warning %q", err, ck.Warning())
	}
	os.WriteFile(last, legacyBytes(t, ck), 0o644)
	os.WriteFile(filepath.Join(dir, "best.ckpt"), legacyBytes(t, ck), 0o644)
	old, err := LoadCheckpoint(last)
	if err != nil || !strings.Contains(old.Warning(), last+" was written by an older gpuwizard and has no checksum") || old.Epoch != 2 {
		t.Fatalf("legacy: %v, %q", err, old.Warning())
	}
	p, err := LoadPredictor(dir)
	if err != nil || !strings.Contains(p.Warning(), "no checksum") {
		t.Fatalf("predictor on a legacy best.ckpt: %v", err)
	}
	// Resuming says so, and the next save writes the current layout.
	evs, _, err := collect(context.Background(), Config{}, Options{Resume: dir, Extend: 1})
	if err != nil {
		t.Fatal(err)
	}
	warned := false
	for _, e := range evs {
		warned = warned || (e.Kind == EventLog && strings.Contains(e.Message, "warning: "+last+" was written by an older gpuwizard"))
	}
	raw, _ := os.ReadFile(last)
	if !warned || !bytes.HasPrefix(raw, []byte(checkpointMagic)) {
		t.Fatalf("resume from a legacy checkpoint: warned %v, rewritten %v", warned, bytes.HasPrefix(raw, []byte(checkpointMagic)))
	}
}

func TestResumeWithoutCheckpoint(t *testing.T) {
	// A run killed (kill -9) before its first epoch ended, in the middle of
	// writing its first checkpoint: the folder has its settings and a torn
	// temporary file, but no checkpoint.
	cfg := tinyConfig(t, tinyDataset(t, 20))
	cfg.Epochs = 1
	dir := filepath.Join(cfg.Project, "train")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "args.yaml"), cfg.YAML(), 0o644)
	torn := filepath.Join(dir, ".last.ckpt.tmp-4242")
	os.WriteFile(torn, make([]byte, 1<<20), 0o644)
	ri, err := ReadRun(dir)
	if err != nil || ri.State != RunEmpty || !ri.CanResume || !strings.Contains(ri.Status, "resuming trains it again from the start") {
		t.Fatalf("the run before resuming: %+v, %v", ri, err)
	}
	evs, res, err := collect(context.Background(), Config{}, Options{Resume: dir})
	if err != nil || res.Epochs != 1 || res.RunDir != dir {
		t.Fatalf("resume without a checkpoint: %v (%+v)", err, res)
	}
	if !hasLog(evs, dir+" has no checkpoint (it stopped before its first epoch ended): resumed from the start") {
		t.Error("the log does not say the run starts again")
	}
	if _, err := os.Stat(torn); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the torn temporary file is still there: %v", err)
	}
	if ri, err := ReadRun(dir); err != nil || ri.State != RunFinished {
		t.Errorf("after resuming: %+v, %v", ri, err)
	}
	// Settings that no longer parse are said so.
	bad := filepath.Join(cfg.Project, "bad")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "args.yaml"), []byte("epochs: many\n"), 0o644)
	if _, _, err := collect(context.Background(), Config{}, Options{Resume: bad}); !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), "its settings cannot be read") {
		t.Errorf("resume with bad settings: %v", err)
	}
	for path, want := range map[string]string{
		filepath.Join(cfg.Project, "nothing"): "is not a run folder",
		t.TempDir():                           "has no last.ckpt and no readable args.yaml",
	} {
		if _, _, err := collect(context.Background(), Config{}, Options{Resume: path}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("resume %s: %v (want %q)", path, err, want)
		}
	}
}

func hasLog(evs []Event, s string) bool {
	for _, e := range evs {
		if e.Kind == EventLog && strings.Contains(e.Message, s) {
			return true
		}
	}
	return false
}

// A .lock planted as a link (to a user's file, a device, a pipe) is never
// written through: resume and Delete leave its target as it was.
func TestLockLinkIsNeverFollowed(t *testing.T) {
	dir := finishedRun(t)
	outside := t.TempDir()
	precious := filepath.Join(outside, "thesis.tex")
	os.WriteFile(precious, []byte("keep me\n"), 0o600)
	fifo := filepath.Join(outside, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{precious, fifo, "/dev/zero"} {
		lock := filepath.Join(dir, LockFile)
		os.Remove(lock)
		if err := os.Symlink(target, lock); err != nil {
			t.Fatal(err)
		}
		if ri, err := ReadRun(dir); err != nil || ri.State == RunRunning {
			t.Fatalf("%s: a linked .lock reads as %+v, %v", target, ri, err)
		}
		if _, _, err := collect(context.Background(), Config{}, Options{Resume: dir, Extend: 1}); err != nil {
			t.Fatalf("%s: resume: %v", target, err)
		}
		if st, err := os.Lstat(lock); err != nil || !st.Mode().IsRegular() {
			t.Errorf("%s: .lock is not a file of its own after resuming: %v", target, err)
		}
	}
	os.Remove(filepath.Join(dir, LockFile))
	os.Symlink(precious, filepath.Join(dir, LockFile))
	if err := DeleteRun(dir); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(precious); err != nil || string(b) != "keep me\n" {
		t.Fatalf("the linked file changed: %q, %v", b, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the run was not deleted: %v", err)
	}
}

// Export keeps each file's permissions and copies no link.
func TestExportKeepsPermissions(t *testing.T) {
	dir := finishedRun(t)
	os.Chmod(dir, 0o700)
	os.Chmod(filepath.Join(dir, "best.ckpt"), 0o600)
	secret := filepath.Join(t.TempDir(), "id_rsa")
	os.WriteFile(secret, []byte("secret"), 0o600)
	os.Symlink(secret, filepath.Join(dir, "notes.txt"))
	dest := filepath.Join(t.TempDir(), "shared")
	if err := ExportRun(context.Background(), dir, dest); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]os.FileMode{"best.ckpt": 0o600, "args.yaml": 0o644} {
		if st, err := os.Stat(filepath.Join(dest, name)); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v, %v (want %v)", name, st.Mode().Perm(), err, want)
		}
	}
	if st, err := os.Stat(dest); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the exported folder: %v, %v (want 0700 like the run)", st.Mode().Perm(), err)
	}
	if _, err := os.Lstat(filepath.Join(dest, "notes.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a link in the run was exported: %v", err)
	}
}

func TestStaleTempFilesAreRemovedAtTheNextSave(t *testing.T) {
	dir := finishedRun(t)
	stale := []string{".last.ckpt.tmp-123456", ".best.ckpt.tmp-42", ".results.csv.tmp-7"}
	for _, f := range stale {
		os.WriteFile(filepath.Join(dir, f), []byte("torn"), 0o644)
	}
	keep := filepath.Join(dir, "notes.tmp-1")
	os.WriteFile(keep, []byte("mine"), 0o644)
	if _, _, err := collect(context.Background(), Config{}, Options{Resume: dir, Extend: 1}); err != nil {
		t.Fatal(err)
	}
	for _, f := range stale {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s is still there after the next save", f)
		}
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a file that is not a temporary checkpoint was removed: %v", err)
	}
}

func TestRunFolderLock(t *testing.T) {
	dir := finishedRun(t)
	// Two resumes at once: the first holds the folder (paused), the
	// second is refused with the holder's PID.
	ctl := &Control{}
	ctl.Pause()
	ch := make(chan Event, 1000)
	first := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), Config{}, ch, Options{Resume: dir, Extend: 1, Control: ctl})
		first <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, _ := os.ReadFile(filepath.Join(dir, LockFile)); strings.TrimSpace(string(b)) == strconv.Itoa(os.Getpid()) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first resume never took the lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, _, err := collect(context.Background(), Config{}, Options{Resume: dir, Extend: 1})
	want := fmt.Sprintf("%s: another gpuwizard (PID %d) is training in it", dir, os.Getpid())
	if !errors.Is(err, ErrRunInUse) || !strings.Contains(err.Error(), want) {
		t.Fatalf("second resume: %v (want %q)", err, want)
	}
	ctl.Resume()
	go func() {
		for range ch {
		}
	}()
	if err := <-first; err != nil {
		t.Fatalf("first resume: %v", err)
	}
	close(ch)
	// Released: the folder can be resumed again, and the file holds no PID.
	if b, _ := os.ReadFile(filepath.Join(dir, LockFile)); len(b) != 0 {
		t.Fatalf("lock file after the run: %q", b)
	}
	if _, _, err := collect(context.Background(), Config{}, Options{Resume: dir, Extend: 1}); err != nil {
		t.Fatalf("resume after the first ended: %v", err)
	}
}

// TestLockHelper holds a run folder's lock in a child process until it is
// killed (see TestLockVanishesWhenTheProcessDies).
func TestLockHelper(t *testing.T) {
	dir := os.Getenv("GPUWIZARD_LOCK_HELPER")
	if dir == "" {
		return // only as a child process
	}
	if _, err := lockRunDir(dir); err != nil {
		fmt.Println("lock:", err)
		os.Exit(3)
	}
	fmt.Println("locked")
	time.Sleep(time.Minute)
	os.Exit(0)
}

func TestLockVanishesWhenTheProcessDies(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelper$")
	cmd.Env = append(os.Environ(), "GPUWIZARD_LOCK_HELPER="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	if !strings.Contains(string(buf[:n]), "locked") {
		t.Fatalf("helper: %q", buf[:n])
	}
	_, err = lockRunDir(dir)
	if !errors.Is(err, ErrRunInUse) || !strings.Contains(err.Error(), fmt.Sprintf("PID %d", cmd.Process.Pid)) {
		t.Fatalf("while the child holds it: %v", err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	l, err := lockRunDir(dir)
	if err != nil {
		t.Fatalf("after kill -9 of the holder: %v", err)
	}
	l.release()
}

func TestConfigFileIsCapped(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "run.yaml")
	syscall.Mkfifo(fifo, 0o644)
	start := time.Now()
	_, err := LoadConfigFile(fifo, Defaults())
	if !errors.Is(err, ErrConfig) || !errors.Is(err, safefile.ErrNotRegular) || !strings.Contains(err.Error(), fifo+" is a named pipe") || time.Since(start) > 5*time.Second {
		t.Fatalf("FIFO config: %v", err)
	}
	big := filepath.Join(dir, "big.yaml")
	os.WriteFile(big, append([]byte("epochs: 2\n#"), bytes.Repeat([]byte("x"), MaxConfigFile)...), 0o644)
	_, err = LoadConfigFile(big, Defaults())
	if !errors.Is(err, safefile.ErrTooLarge) || !strings.Contains(err.Error(), big+" is 1 MiB, more than the 1 MiB a config file may have") {
		t.Fatalf("big config: %v", err)
	}
	zero := filepath.Join(dir, "zero.yaml")
	os.Symlink("/dev/zero", zero)
	if _, err := LoadConfigFile(zero, Defaults()); !errors.Is(err, safefile.ErrNotRegular) {
		t.Fatalf("/dev/zero config: %v", err)
	}
}
