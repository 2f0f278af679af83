//go:build linux

package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gpuwizard/gpu/fleet"
)

// slurmPrograms are Debian's slurmctld, slurmd, slurm-client and munge
// (make deps installs them).
var slurmPrograms = []string{"munged", "slurmctld", "slurmd", "srun", "sinfo", "scontrol"}

// slurmCluster is a single-node Slurm on loopback in a folder of its own:
// its own munge socket, ports, state and logs. Its daemons run in the
// foreground as this test's children and are stopped by PID.
type slurmCluster struct {
	dir, conf, node string
	daemons         []*exec.Cmd
}

// freePort is a TCP port on loopback that nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startSlurm writes the configuration (two nodes: this machine with two
// stand-in GPUs, and "gwdown", which never runs a slurmd), starts munged,
// slurmctld and slurmd, and waits until the node is idle.
func startSlurm(t *testing.T) *slurmCluster {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".")
	c := &slurmCluster{dir: t.TempDir(), node: host}
	c.conf = filepath.Join(c.dir, "slurm.conf")
	d := func(parts ...string) string { return filepath.Join(append([]string{c.dir}, parts...)...) }
	for _, sub := range []string{"munge", "state", "spool", "dev", "log"} {
		if err := os.Mkdir(d(sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 1024)
	rand.Read(key)
	if err := os.WriteFile(d("munge", "key"), key, 0o400); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"gpu0", "gpu1"} { // gres.conf takes character devices only: /dev/null's numbers
		if err := syscall.Mknod(d("dev", g), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			t.Fatal(err)
		}
	}
	conf := fmt.Sprintf(`ClusterName=gwtest
SlurmctldHost=%[1]s(127.0.0.1)
SlurmctldPort=%[3]d
SlurmdPort=%[4]d
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=%[2]s/munge/sock
CredType=cred/munge
StateSaveLocation=%[2]s/state
SlurmdSpoolDir=%[2]s/spool
SlurmctldPidFile=%[2]s/slurmctld.pid
SlurmdPidFile=%[2]s/slurmd.pid
SlurmctldLogFile=%[2]s/log/slurmctld.log
SlurmdLogFile=%[2]s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
GresTypes=gpu
MpiDefault=none
ReturnToService=2
NodeName=%[1]s NodeAddr=127.0.0.1 CPUs=1 Gres=gpu:2 State=UNKNOWN
NodeName=gwdown NodeAddr=127.0.0.1 Port=%[5]d CPUs=1 State=UNKNOWN
PartitionName=gw Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`, host, c.dir, freePort(t), freePort(t), freePort(t))
	gres := fmt.Sprintf("NodeName=%s Name=gpu File=%s/dev/gpu[0-1]\n", host, c.dir)
	if err := os.WriteFile(c.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d("gres.conf"), []byte(gres), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLURM_CONF", c.conf)
	t.Cleanup(c.stop)
	c.start(t, "munged", "--foreground", "--force", "--key-file="+d("munge", "key"), "--socket="+d("munge", "sock"),
		"--pid-file="+d("munge", "pid"), "--log-file="+d("log", "munged.log"), "--seed-file="+d("munge", "seed"))
	c.waitFor(t, d("munge", "sock"))
	c.start(t, "slurmctld", "-D", "-i")
	c.start(t, "slurmd", "-D")
	c.waitIdle(t)
	return c
}

// start runs a daemon in the foreground, as this test's child.
func (c *slurmCluster) start(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.conf)
	log, err := os.Create(filepath.Join(c.dir, "log", name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	log.Close()
	c.daemons = append(c.daemons, cmd)
}

// stop ends the daemons by their PIDs, newest first: SIGTERM, then
// SIGKILL after 10 s.
func (c *slurmCluster) stop() {
	for i := len(c.daemons) - 1; i >= 0; i-- {
		cmd := c.daemons[i]
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
}

func (c *slurmCluster) waitFor(t *testing.T, path string) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s did not appear in 20 s: %s", path, c.logs())
}

// waitIdle waits until sinfo shows this machine's node idle.
func (c *slurmCluster) waitIdle(t *testing.T) {
	t.Helper()
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		out, _ := exec.Command("sinfo", "--noheader", "--Node", "--nodes="+c.node, "--format=%T").Output()
		if strings.TrimSpace(string(out)) == "idle" {
			return
		}
	}
	t.Fatalf("node %s is not idle after 60 s: %s", c.node, c.logs())
}

// logs are the daemons' logs, for a failure's message.
func (c *slurmCluster) logs() string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(c.dir, "log", "*"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if len(data) > 3000 {
			data = data[len(data)-3000:]
		}
		fmt.Fprintf(&b, "\n--- %s\n%s", filepath.Base(f), data)
	}
	return b.String()
}

// TestFleetSlurmEndToEnd runs `gpuwizard fleet slurm` on a real Slurm: the
// node runs this test binary as gpuwizard (copied with srun --bcast) and
// answers with its report; the drained node is a row with its reason.
func TestFleetSlurmEndToEnd(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not run: it starts slurmd, which must run as root to launch job steps (CI runs make test as root)")
	}
	for _, p := range slurmPrograms {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s is not installed: make deps installs Debian's slurmctld, slurmd, slurm-client and munge (%v)", p, err)
		}
	}
	start := time.Now()
	c := startSlurm(t)
	t.Logf("single-node Slurm up in %s", time.Since(start).Round(time.Millisecond))
	if out, err := exec.Command("scontrol", "update", "NodeName=gwdown", "State=DRAIN", "Reason=bad fan").CombinedOutput(); err != nil {
		t.Fatalf("scontrol: %v %s", err, out)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(asMainEnv, "1") // srun passes the environment on: the node runs this binary as gpuwizard
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	began := time.Now()
	code := Fleet(ctx, []string{"slurm", "--json", "--binary", exe, "--bcast", "always", "--timeout", "90s"},
		Env{Stdout: &stdout, Stderr: &stderr})
	t.Logf("fleet slurm on the single-node cluster: %s", time.Since(began).Round(time.Millisecond))
	var r fleet.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("exit %d, output is not a fleet report: %v\n%s\n%s%s", code, err, stdout.String(), stderr.String(), c.logs())
	}
	byName := map[string]fleet.Node{}
	for _, n := range r.Nodes {
		byName[n.Node] = n
	}
	n, ok := byName[c.node]
	if !ok || n.State != fleet.StateAnswered || n.Verdict == "" {
		t.Fatalf("node %s: %+v\n%s%s", c.node, n, stderr.String(), c.logs())
	}
	if n.Visible != "0,1" {
		t.Errorf("CUDA_VISIBLE_DEVICES on the node %q, want 0,1 (both stand-in GPUs asked for)", n.Visible)
	}
	if d := byName["gwdown"]; d.State != fleet.StateDown || !strings.Contains(d.Reason, "bad fan") {
		t.Errorf("gwdown: %+v", d)
	}
	if code != ExitFailed || r.Ready {
		t.Errorf("exit %d ready %v: a drained node makes the fleet not ready", code, r.Ready)
	}
	copyPath := strings.TrimSpace(strings.SplitN(strings.SplitN(stderr.String(), "copies it to ", 2)[1], " on each node", 2)[0])
	if _, err := os.Stat(copyPath); !os.IsNotExist(err) {
		t.Errorf("the copy %s srun --bcast made was not removed: %v", copyPath, err)
	}
}
