//go:build unix

package cli

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gpuwizard/internal/synth"
	"gpuwizard/trainer"
)

// A dropped SSH session (SIGHUP, with the terminal gone: every write fails)
// and SIGTERM stop `gpuwizard train` as Ctrl-C does: a resumable
// checkpoint, the run listed as stopped, exit status 130.
func TestTrainStopsCleanlyOnHangupAndTerm(t *testing.T) {
	data := t.TempDir()
	if err := synth.LeftRight(data, 40); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sig          syscall.Signal
		closeOutputs bool // the terminal is gone: writes fail (EPIPE)
	}{{syscall.SIGHUP, true}, {syscall.SIGTERM, false}, {syscall.SIGINT, true}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			project := t.TempDir()
			cmd := exec.Command(os.Args[0], "train", "--data", data, "--model", "mlp", "--image-size", "8",
				"--epochs", "10000", "--device", "cpu", "--project", project, "--name", "run")
			cmd.Env = append(os.Environ(), asMainEnv+"=1")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() }) // by its PID; a no-op once it has ended
			sc := bufio.NewScanner(stderr)
			started := false
			for !started && sc.Scan() {
				started = strings.HasPrefix(sc.Text(), "epoch 1/10000 ")
			}
			if !started {
				t.Fatalf("no epoch line from the training (%v)", sc.Err())
			}
			if c.closeOutputs {
				stdout.Close()
				stderr.Close()
			} else {
				go func() {
					for sc.Scan() {
					}
				}()
			}
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the training did not stop within 30 s")
			}
			if code := cmd.ProcessState.ExitCode(); code != ExitStopped {
				t.Fatalf("%s: %s, want exit status %d as for Ctrl-C", c.sig, cmd.ProcessState, ExitStopped)
			}
			run, err := trainer.ReadRun(filepath.Join(project, "run"))
			if err != nil || run.State != trainer.RunStopped || !run.CanResume || run.Epoch < 1 {
				t.Fatalf("%s: the run is %+v (%v), want stopped and resumable", c.sig, run, err)
			}
			ck, err := trainer.LoadCheckpoint(filepath.Join(project, "run", "last.ckpt"))
			if err != nil {
				t.Fatalf("%s: last.ckpt: %v", c.sig, err)
			}
			if ck.Epoch != run.Epoch {
				t.Fatalf("%s: last.ckpt holds epoch %d, state.json says %d", c.sig, ck.Epoch, run.Epoch)
			}
		})
	}
}
