package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"gpuwizard/gpu/compat"
	"gpuwizard/gpu/fleet"
)

const fleetUsage = `Usage: gpuwizard fleet slurm [flags]     the doctor on every node of a Slurm cluster
       gpuwizard fleet k8s [flags]       the manifests (or, with --run, the run) for Kubernetes
       gpuwizard fleet merge FILE...     one table from saved doctor --json reports

Which nodes of a cluster can train on their GPUs, and why the others
cannot: a row per node, and above it the problems shared by nodes with one
fix each. Run "gpuwizard fleet COMMAND -h" for a command's flags.

Exit status: 0 every node is ready, 1 a node is not ready or did not
answer, 2 usage error, or the scheduler could not list the nodes.
`

// Fleet runs `gpuwizard fleet slurm|k8s|merge`.
func Fleet(ctx context.Context, args []string, env Env) int {
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, fleetUsage)
		return ExitUsage
	}
	switch args[0] {
	case "slurm":
		return fleetSlurm(ctx, args[1:], env)
	case "k8s", "kubernetes":
		return fleetKube(ctx, args[1:], env)
	case "merge":
		return fleetMerge(args[1:], env)
	case "-h", "--help", "-help", "help":
		fmt.Fprint(env.Stdout, fleetUsage)
		return ExitOK
	}
	fmt.Fprintf(env.Stderr, "fleet: unknown command %q\n\n%s", args[0], fleetUsage)
	return ExitUsage
}

// fleetFormat is the output flags every fleet command shares.
type fleetFormat struct{ json, markdown, csv *bool }

func addFormatFlags(fs *flag.FlagSet) fleetFormat {
	return fleetFormat{
		json:     fs.Bool("json", false, `print {"ready", "nodes": [{"node", "ready", "verdict", "gpus", "driver", "findings", ...}], "groups"} (the window opens it)`),
		markdown: fs.Bool("markdown", false, "print the table as Markdown"),
		csv:      fs.Bool("csv", false, "print a line per node as CSV, for a spreadsheet"),
	}
}

// ok says whether at most one format was chosen.
func (f fleetFormat) ok(env Env, cmd string) bool {
	n := 0
	for _, b := range []*bool{f.json, f.markdown, f.csv} {
		if *b {
			n++
		}
	}
	if n > 1 {
		fmt.Fprintf(env.Stderr, "fleet %s: choose one of --json, --markdown and --csv\n", cmd)
	}
	return n <= 1
}

// write prints the fleet's report and returns the exit code.
func (f fleetFormat) write(env Env, nodes []fleet.Node) int {
	r := fleet.New(nodes)
	var err error
	switch {
	case *f.json:
		err = r.WriteJSON(env.Stdout)
	case *f.markdown:
		err = r.WriteMarkdown(env.Stdout)
	case *f.csv:
		err = r.WriteCSV(env.Stdout)
	default:
		err = r.WriteText(env.Stdout, env.Color)
	}
	if err != nil {
		printErr(env.Stderr, "fleet: writing the report:", err)
		return ExitUsage
	}
	if r.Ready {
		return ExitOK
	}
	return ExitFailed
}

// fleetArgsOK refuses arguments after the flags.
func fleetArgsOK(fs *flag.FlagSet, env Env, cmd string) bool {
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "fleet %s: unexpected argument %q (see gpuwizard fleet %s -h)\n", cmd, fs.Arg(0), cmd)
		return false
	}
	return true
}

func fleetMergeHelp() help {
	return help{
		usage: "Usage: gpuwizard fleet merge [flags] FILE...",
		about: `Joins doctor reports saved on each node, however they were gathered (pdsh,
Ansible, an ssh loop): one table, the problems grouped across nodes. Each
FILE holds what "gpuwizard doctor --json" printed (or facts saved with
--save); a node is named by its report's hostname, else by its file's name.
A file that cannot be read or holds no report is a row with the reason.
`,
		examples: `  for h in gpu01 gpu02 gpu03; do ssh $h gpuwizard doctor --json > $h.json; done
  gpuwizard fleet merge *.json
  gpuwizard fleet merge --json reports/*.json > fleet.json
`,
		exit: "0 every node is ready, 1 a node is not ready or its file holds no report, 2 usage error.\n",
	}
}

func fleetMerge(args []string, env Env) int {
	fs := flag.NewFlagSet("fleet merge", flag.ContinueOnError)
	format := addFormatFlags(fs)
	if code, ok := parseFlags(fs, args, env, fleetMergeHelp()); !ok {
		return code
	}
	if !format.ok(env, "merge") {
		return ExitUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(env.Stderr, "fleet merge: name the saved reports (gpuwizard fleet merge node1.json node2.json ...)")
		return ExitUsage
	}
	m, err := compat.LoadMatrix()
	if err != nil {
		printErr(env.Stderr, "fleet merge:", err)
		return ExitUsage
	}
	return format.write(env, fleet.ReadFiles(fs.Args(), m))
}

func fleetSlurmHelp() help {
	return help{
		usage: "Usage: gpuwizard fleet slurm [flags]",
		about: `Runs "gpuwizard doctor --json" on every node of a Slurm cluster, from a
login node: one srun a node (16 at once), one task each, asking for the
node's GPUs so that Slurm sets CUDA_VISIBLE_DEVICES as it does for a job.
When the binary is not on a shared file system (NFS, Lustre, GPFS, BeeGFS,
CephFS), srun --bcast copies it to each node, and the copies are removed
after. Nodes that are down or drained, that time out or print something
else than a report are rows too, with the reason and a fix.
`,
		examples: `  gpuwizard fleet slurm --partition gpu
  gpuwizard fleet slurm --nodelist 'gpu[01-40]' --gpus-per-node 1 --deep
  gpuwizard fleet slurm --json > fleet.json     (open it in the window)
`,
		exit: "0 every node is ready, 1 a node is not ready or did not answer, 2 usage error or sinfo could not list the nodes.\n",
	}
}

func fleetSlurm(ctx context.Context, args []string, env Env) int {
	fs := flag.NewFlagSet("fleet slurm", flag.ContinueOnError)
	var o fleet.SlurmOptions
	fs.StringVar(&o.Partition, "partition", "", "only the nodes of this `PARTITION` (srun --partition too)")
	fs.StringVar(&o.Nodelist, "nodelist", "", "only these `NODES` (a Slurm hostlist: gpu[01-40],gpu50)")
	fs.IntVar(&o.GPUsPerNode, "gpus-per-node", -1, "GPUs to ask for on each node (srun --gres=gpu:N); -1 every GPU the node has in Slurm, 0 none")
	fs.BoolVar(&o.Deep, "deep", false, "doctor --deep on each node: a real matmul and conv2d through each torch (slower)")
	fs.DurationVar(&o.Timeout, "timeout", 0, "time limit for each node's answer (default 2m, 5m with --deep)")
	binary := fs.String("binary", "", "the gpuwizard to run on the nodes (default: this one)")
	bcast := fs.String("bcast", "auto", "copy the binary to the nodes with srun --bcast: auto (when it is not on a shared file system), always, never")
	format := addFormatFlags(fs)
	if code, ok := parseFlags(fs, args, env, fleetSlurmHelp()); !ok {
		return code
	}
	if !format.ok(env, "slurm") || !fleetArgsOK(fs, env, "slurm") {
		return ExitUsage
	}
	if *bcast != "auto" && *bcast != "always" && *bcast != "never" {
		fmt.Fprintf(env.Stderr, "fleet slurm: --bcast %q: choose auto, always or never\n", *bcast)
		return ExitUsage
	}
	var err error
	if o.Binary, err = fleetBinary(*binary, env); err != nil {
		printErr(env.Stderr, "fleet slurm:", err)
		return ExitUsage
	}
	shared, fsName := fleet.OnSharedFS(o.Binary)
	if *bcast == "always" || *bcast == "auto" && !shared {
		o.BcastTo = fmt.Sprintf("/tmp/gpuwizard-fleet-%d-%d", os.Getpid(), time.Now().Unix())
		fmt.Fprintf(env.Stderr, "fleet slurm: %s is not on a shared file system: srun --bcast copies it to %s on each node\n", o.Binary, o.BcastTo)
	} else if shared {
		fmt.Fprintf(env.Stderr, "fleet slurm: running %s in place (on %s)\n", o.Binary, fsName)
	}
	if o.Matrix, err = compat.LoadMatrix(); err != nil {
		printErr(env.Stderr, "fleet slurm:", err)
		return ExitUsage
	}
	nodes, err := fleet.Slurm(ctx, o)
	if err != nil {
		printErr(env.Stderr, "fleet slurm:", err)
		return ExitUsage
	}
	return format.write(env, nodes)
}

// fleetBinary is the gpuwizard to send to the nodes: the one named, else
// this program.
func fleetBinary(named string, env Env) (string, error) {
	if named != "" {
		st, err := os.Stat(named)
		if err != nil || !runnable(st.Mode()) {
			return "", fmt.Errorf("--binary %s: not an executable file (give the path of gpuwizard)", named)
		}
		return named, nil
	}
	if env.Executable != "" {
		return env.Executable, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding this program to send to the nodes: %w (name it with --binary)", err)
	}
	return exe, nil
}

func fleetKubeHelp() help {
	return help{
		usage: "Usage: gpuwizard fleet k8s [flags]          (prints the manifests)\n       gpuwizard fleet k8s --run [flags]    (applies them, collects the reports, deletes them)",
		about: `Checks the GPU nodes of a Kubernetes cluster with a Job each: one pod
pinned to the node by node affinity, asking for its nvidia.com/gpu, running
"gpuwizard doctor --json". The image is yours (--image, with gpuwizard in
it); without one, a plain image (--base-image) waits for the binary, which
--run copies into each pod with kubectl cp (no ConfigMap, no registry).
Without --run the manifests are printed, for kubectl apply -f. With --run
they are applied, each pod's log read as its node's report, and the Jobs
deleted. The nodes are those --nodes names, else those --selector picks.
`,
		examples: `  gpuwizard fleet k8s --image registry.example.com/gpuwizard:1 > fleet.yaml
  gpuwizard fleet k8s --run --namespace ops
  gpuwizard fleet k8s --run --nodes gpu-a,gpu-b --gpus-per-node 1 --json > fleet.json
`,
		exit: "0 every node is ready, 1 a node is not ready or did not answer, 2 usage error or kubectl failed.\n",
	}
}

func fleetKube(ctx context.Context, args []string, env Env) int {
	fs := flag.NewFlagSet("fleet k8s", flag.ContinueOnError)
	var k fleet.KubeRun
	fs.StringVar(&k.Image, "image", "", "an `IMAGE` holding gpuwizard (default: --base-image, and the binary copied in)")
	fs.StringVar(&k.Command, "command", "gpuwizard", "gpuwizard's path in --image")
	fs.StringVar(&k.BaseImage, "base-image", "debian:12-slim", "the image the binary is copied into when there is no --image (needs sh and tar)")
	fs.StringVar(&k.Namespace, "namespace", "default", "the namespace of the Jobs")
	nodes := fs.String("nodes", "", "the nodes to check, comma-separated (default: those --selector picks)")
	fs.StringVar(&k.Selector, "selector", fleet.DefaultSelector, "a label selector for the GPU nodes")
	fs.IntVar(&k.GPUsPerNode, "gpus-per-node", -1, "nvidia.com/gpu each pod asks for; -1 every allocatable GPU of the node, 0 none (then runtime class nvidia, every GPU visible)")
	fs.StringVar(&k.RuntimeClass, "runtime-class", "", "the pods' runtimeClassName (default: none; nvidia with --gpus-per-node 0)")
	fs.BoolVar(&k.Deep, "deep", false, "doctor --deep in each pod (slower)")
	fs.DurationVar(&k.Timeout, "timeout", 0, "each Job's deadline (default 2m, 5m with --deep)")
	binary := fs.String("binary", "", "the gpuwizard copied into the pods without --image (default: this one)")
	run := fs.Bool("run", false, "apply the manifests with kubectl, collect the reports and delete the Jobs")
	format := addFormatFlags(fs)
	if code, ok := parseFlags(fs, args, env, fleetKubeHelp()); !ok {
		return code
	}
	if !format.ok(env, "k8s") || !fleetArgsOK(fs, env, "k8s") {
		return ExitUsage
	}
	if *nodes != "" {
		k.Names = strings.Split(*nodes, ",")
	}
	k.Runner = fleet.ExecRunner{}
	k.RunID = strconv.FormatInt(time.Now().UnixNano()%(36*36*36*36*36*36), 36)
	if !*run {
		return fleetManifests(ctx, k, env)
	}
	var err error
	if k.Image == "" {
		if k.Binary, err = fleetBinary(*binary, env); err != nil {
			printErr(env.Stderr, "fleet k8s:", err)
			return ExitUsage
		}
	}
	if k.Matrix, err = compat.LoadMatrix(); err != nil {
		printErr(env.Stderr, "fleet k8s:", err)
		return ExitUsage
	}
	rows, err := k.Run(ctx)
	if err != nil {
		printErr(env.Stderr, "fleet k8s:", err)
		return ExitUsage
	}
	return format.write(env, rows)
}

// fleetManifests prints the manifests: for the nodes named with a GPU
// count given, without asking the cluster; else for those kubectl lists.
func fleetManifests(ctx context.Context, k fleet.KubeRun, env Env) int {
	var nodes []fleet.KubeNode
	if len(k.Names) > 0 && k.GPUsPerNode >= 0 {
		for _, n := range k.Names {
			nodes = append(nodes, fleet.KubeNode{Name: n})
		}
	} else {
		var down []fleet.Node
		var err error
		nodes, down, err = fleet.KubeNodes(ctx, k.Runner, k.Names, k.Selector)
		if err != nil {
			printErr(env.Stderr, "fleet k8s:", errors.Join(err, errors.New("(name the nodes with --nodes and their GPUs with --gpus-per-node to write the manifests without a cluster)")))
			return ExitUsage
		}
		for _, d := range down {
			fmt.Fprintf(env.Stderr, "fleet k8s: no Job for %s: %s\n", d.Node, d.Reason)
		}
	}
	m, err := fleet.Manifests(nodes, k.KubeOptions)
	if err == nil {
		_, err = env.Stdout.Write(m)
	}
	if err != nil {
		printErr(env.Stderr, "fleet k8s:", err)
		return ExitUsage
	}
	return ExitOK
}
