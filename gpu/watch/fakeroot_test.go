package watch

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/root from the table in fakeroot_test.go")

// fakeProc is one process of the fake machine in testdata/root.
type fakeProc struct {
	pid, ppid int
	comm      string
	state     byte
	uid       int
	ticks     uint64 // utime; stime is 0
	threads   int
	start     uint64
	cmdline   []string
	environ   []string
	exe, cwd  string
	maps      []string      // mapped files, each on a few lines as the kernel shows them
	fds       []string      // open files (the targets of /proc/PID/fd/N, from 3 on)
	ago       time.Duration // started this long before the fixture's clock (0: a day after boot, long ago)
}

// bootTime is the fake machine's boot (/proc/stat's btime): a day before
// the fixture's clock (2026-11-21 12:00 UTC).
const bootTime = 1795262400 - 86400

const (
	venv     = "/home/ada/project/.venv"
	venvSite = venv + "/lib/python3.12/site-packages"
	cpuVenv  = "/home/ada/cpuvenv"
	cpuSite  = cpuVenv + "/lib/python3.12/site-packages"
	tfEnv    = "/home/ada/miniconda3/envs/tf"
	tfSite   = tfEnv + "/lib/python3.11/site-packages"
)

// Library sets as the processes map them.
var (
	baseLibs  = []string{"/usr/bin/python3.12", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6"}
	torchCUDA = []string{
		venvSite + "/torch/lib/libc10.so", venvSite + "/torch/lib/libtorch_cpu.so", venvSite + "/torch/lib/libtorch_cuda.so",
		venvSite + "/torch/_C.cpython-312-x86_64-linux-gnu.so",
		venvSite + "/nvidia/cuda_runtime/lib/libcudart.so.12", venvSite + "/nvidia/cublas/lib/libcublas.so.12",
		venvSite + "/nvidia/cublas/lib/libcublasLt.so.12", venvSite + "/nvidia/cudnn/lib/libcudnn.so.9",
	}
	libcuda = []string{"/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05"}
	// A CUDA context on GPU 0 (or 1): the device files it holds and maps.
	gpu0Files = []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia0"}
	gpu1Files = []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia1"}
	torchCPU  = []string{cpuSite + "/torch/lib/libc10.so", cpuSite + "/torch/lib/libtorch_cpu.so", cpuSite + "/torch/_C.cpython-312-x86_64-linux-gnu.so"}
	debTorch  = []string{"/usr/bin/python3.11", "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0", "/usr/lib/x86_64-linux-gnu/libc10.so.1.13.0",
		"/usr/lib/python3/dist-packages/torch/_C.cpython-311-x86_64-linux-gnu.so"}
	tfLibs = []string{"/home/ada/miniconda3/envs/tf/bin/python3.11", tfSite + "/tensorflow/libtensorflow_framework.so.2",
		tfSite + "/tensorflow/python/_pywrap_tensorflow_internal.so"}
)

func cat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

var adaEnv = []string{"HOME=/home/ada", "USER=ada", "PATH=" + venv + "/bin:/usr/local/bin:/usr/bin:/bin", "VIRTUAL_ENV=" + venv, "PWD=/home/ada/project"}

func withEnv(extra ...string) []string { return append(append([]string(nil), adaEnv...), extra...) }

var train = []string{venv + "/bin/python", "train.py", "--epochs", "10"}

// fakeProcs is the machine's process table.
var fakeProcs = []fakeProc{
	{pid: 1, ppid: 0, comm: "systemd", uid: 0, threads: 1, cmdline: []string{"/sbin/init"}},
	{pid: 4000, ppid: 1, comm: "bash", uid: 1000, threads: 1, cmdline: []string{"-bash"}, environ: adaEnv, exe: "/usr/bin/bash", cwd: "/home/ada/project", maps: []string{"/usr/bin/bash"}},
	// On GPU 0, with two DataLoader workers (forked: the same command line).
	{pid: 4242, ppid: 4000, comm: "python", uid: 1000, threads: 24, ticks: 5000, cmdline: train, environ: adaEnv, exe: "/usr/bin/python3.12", cwd: "/home/ada/project", maps: cat(baseLibs, torchCUDA, libcuda, gpu0Files), fds: gpu0Files},
	{pid: 4243, ppid: 4242, comm: "python", uid: 1000, threads: 2, ticks: 800, cmdline: train, environ: adaEnv, exe: "/usr/bin/python3.12", cwd: "/home/ada/project", maps: cat(baseLibs, torchCUDA, libcuda, gpu0Files), fds: gpu0Files},
	{pid: 4244, ppid: 4242, comm: "python", uid: 1000, threads: 2, ticks: 810, cmdline: train, environ: adaEnv, exe: "/usr/bin/python3.12", cwd: "/home/ada/project", maps: cat(baseLibs, torchCUDA, libcuda, gpu0Files), fds: gpu0Files},
	// CUDA torch loaded, CUDA never initialised, not on any GPU.
	{pid: 5001, ppid: 4000, comm: "python", uid: 1000, threads: 9, ticks: 900, cmdline: []string{venv + "/bin/python", "train_forgot_cuda.py"}, environ: adaEnv, exe: "/usr/bin/python3.12", cwd: "/home/ada/project", maps: cat(baseLibs, torchCUDA)},
	// A CPU-only wheel in another venv.
	{pid: 5101, ppid: 4000, comm: "python", uid: 1000, threads: 9, ticks: 900, cmdline: []string{cpuVenv + "/bin/python", "train.py"},
		environ: []string{"HOME=/home/ada", "PATH=" + cpuVenv + "/bin:/usr/bin:/bin", "VIRTUAL_ENV=" + cpuVenv}, exe: "/usr/bin/python3.12", cwd: "/home/ada/project", maps: cat(baseLibs, torchCPU)},
	// CUDA_VISIBLE_DEVICES="" hides the GPUs.
	{pid: 5201, ppid: 4000, comm: "python", uid: 1000, threads: 9, ticks: 900, cmdline: train, environ: withEnv("CUDA_VISIBLE_DEVICES="), exe: "/usr/bin/python3.12", cwd: "/home/ada/project", maps: cat(baseLibs, torchCUDA, libcuda), fds: []string{"/dev/nvidiactl"}},
	// On GPU 1, but the GPU idles while the main process loads data.
	{pid: 5301, ppid: 4000, comm: "python", uid: 1000, threads: 12, ticks: 9000, cmdline: []string{venv + "/bin/python", "train_slow_loader.py"}, environ: adaEnv, exe: "/usr/bin/python3.12", cwd: "/home/ada/project", maps: cat(baseLibs, torchCUDA, libcuda, gpu1Files), fds: gpu1Files},
	// Another user's training: its maps, environ and exe cannot be read.
	{pid: 5401, ppid: 1, comm: "python3", uid: 1001, threads: 16, ticks: 1200, cmdline: []string{"python3", "train.py"}, environ: []string{"HOME=/home/bob"}, exe: "/usr/bin/python3.12", cwd: "/home/bob", maps: cat(baseLibs, torchCUDA, libcuda)},
	// TensorFlow built for CUDA, running without its CUDA libraries.
	{pid: 5501, ppid: 4000, comm: "python", uid: 1000, threads: 30, ticks: 700, cmdline: []string{tfEnv + "/bin/python", "fit.py"},
		environ: []string{"HOME=/home/ada", "PATH=" + tfEnv + "/bin:/usr/bin:/bin", "CONDA_PREFIX=" + tfEnv}, exe: tfEnv + "/bin/python3.11", cwd: "/home/ada/project", maps: tfLibs},
	// TensorFlow with its CUDA libraries loaded, but no GPU opened.
	{pid: 5502, ppid: 4000, comm: "python", uid: 1000, threads: 30, ticks: 700, cmdline: []string{tfEnv + "/bin/python", "fit.py"},
		environ: []string{"HOME=/home/ada", "PATH=" + tfEnv + "/bin:/usr/bin:/bin", "CONDA_PREFIX=" + tfEnv}, exe: tfEnv + "/bin/python3.11", cwd: "/home/ada/project",
		maps: cat(tfLibs, []string{tfSite + "/nvidia/cuda_runtime/lib/libcudart.so.12", tfSite + "/nvidia/cublas/lib/libcublas.so.12"}, libcuda)},
	// Ultralytics told to use the CPU.
	{pid: 5601, ppid: 4000, comm: "yolo", uid: 1000, threads: 14, ticks: 1500, cmdline: []string{venv + "/bin/python", venv + "/bin/yolo", "train", "data=coco8.yaml", "model=yolo11n.pt", "device=cpu"},
		environ: adaEnv, exe: "/usr/bin/python3.12", cwd: "/home/ada/project", maps: cat(baseLibs, torchCUDA)},
	// torchrun with two ranks, one per GPU.
	{pid: 5700, ppid: 4000, comm: "torchrun", uid: 1000, threads: 4, ticks: 300, cmdline: []string{venv + "/bin/python", venv + "/bin/torchrun", "--nproc-per-node=2", "train.py"},
		environ: adaEnv, exe: "/usr/bin/python3.12", cwd: "/home/ada/project", maps: cat(baseLibs, torchCUDA)},
	{pid: 5701, ppid: 5700, comm: "python", uid: 1000, threads: 20, ticks: 4000, cmdline: []string{venv + "/bin/python", "-u", "train.py"},
		environ: withEnv("RANK=0", "LOCAL_RANK=0", "WORLD_SIZE=2"), exe: "/usr/bin/python3.12", cwd: "/home/ada/project", maps: cat(baseLibs, torchCUDA, libcuda, []string{venvSite + "/nvidia/nccl/lib/libnccl.so.2"}, gpu0Files), fds: gpu0Files},
	{pid: 5702, ppid: 5700, comm: "python", uid: 1000, threads: 20, ticks: 4100, cmdline: []string{venv + "/bin/python", "-u", "train.py"},
		environ: withEnv("RANK=1", "LOCAL_RANK=1", "WORLD_SIZE=2"), exe: "/usr/bin/python3.12", cwd: "/home/ada/project", maps: cat(baseLibs, torchCUDA, libcuda, []string{venvSite + "/nvidia/nccl/lib/libnccl.so.2"}, gpu1Files), fds: gpu1Files},
	// A short run that ends while it is watched.
	{pid: 5800, ppid: 4000, comm: "python", uid: 1000, threads: 9, ticks: 100, cmdline: []string{venv + "/bin/python", "quick.py"}, environ: adaEnv, exe: "/usr/bin/python3.12", cwd: "/home/ada/project", maps: cat(baseLibs, torchCUDA, libcuda)},
	// Debian's python3-torch (CPU-only) run by the system Python.
	{pid: 5900, ppid: 4000, comm: "python3", uid: 1000, threads: 3, ticks: 600, cmdline: []string{"/usr/bin/python3", "train_cpu.py"},
		environ: []string{"HOME=/home/ada", "PATH=/usr/bin:/bin"}, exe: "/usr/bin/python3.11", cwd: "/home/ada/project", maps: debTorch},
	// A Python that has loaded no framework (and never will).
	{pid: 6000, ppid: 4000, comm: "python3", uid: 1000, threads: 1, ticks: 10, cmdline: []string{"/usr/bin/python3", "-m", "http.server"},
		environ: []string{"HOME=/home/ada", "PATH=/usr/bin:/bin"}, exe: "/usr/bin/python3.11", cwd: "/home/ada", maps: []string{"/usr/bin/python3.11"}},
	// Started as `env CUDA_VISIBLE_DEVICES= python train.py`: after the
	// exec (the test writes the env stage first). CUDA started and opened no GPU.
	{pid: 6100, ppid: 4000, comm: "python", uid: 1000, threads: 9, ticks: 900, cmdline: train, environ: withEnv("CUDA_VISIBLE_DEVICES="), exe: "/usr/bin/python3.12", cwd: "/home/ada/project",
		maps: cat(baseLibs, torchCUDA, libcuda), fds: []string{"/dev/nvidiactl"}, ago: 2 * time.Second},
	// An idle Jupyter kernel that imported a CUDA torch.
	{pid: 6200, ppid: 4000, comm: "python", uid: 1000, threads: 12, ticks: 300, cmdline: []string{venv + "/bin/python", "-m", "ipykernel_launcher", "-f", "/home/ada/.local/share/jupyter/runtime/kernel-6200.json"},
		environ: adaEnv, exe: "/usr/bin/python3.12", cwd: "/home/ada/project", maps: cat(baseLibs, torchCUDA)},
	// Not Python at all.
	{pid: 6300, ppid: 4000, comm: "sleep", uid: 1000, threads: 1, ticks: 0, cmdline: []string{"/bin/sleep", "1000"}, environ: adaEnv, exe: "/usr/bin/sleep", cwd: "/home/ada/project",
		maps: []string{"/usr/bin/sleep", "/usr/lib/x86_64-linux-gnu/libc.so.6"}},
	// Started 5 s ago: torch imported, CUDA not touched yet.
	{pid: 6400, ppid: 4000, comm: "python", uid: 1000, threads: 6, ticks: 400, cmdline: []string{venv + "/bin/python", "train.py", "--data", "big/"}, environ: adaEnv, exe: "/usr/bin/python3.12", cwd: "/home/ada/project",
		maps: cat(baseLibs, torchCUDA), ago: 5 * time.Second},
	// A shell script whose child trains (CUDA_VISIBLE_DEVICES=-1 in the child's environment only).
	{pid: 6500, ppid: 4000, comm: "bash", uid: 1000, threads: 1, ticks: 5, cmdline: []string{"/bin/bash", "run.sh"}, environ: adaEnv, exe: "/usr/bin/bash", cwd: "/home/ada/project", maps: []string{"/usr/bin/bash"}},
	{pid: 6501, ppid: 6500, comm: "python", uid: 1000, threads: 9, ticks: 900, cmdline: train, environ: withEnv("CUDA_VISIBLE_DEVICES=-1"), exe: "/usr/bin/python3.12", cwd: "/home/ada/project",
		maps: cat(baseLibs, torchCUDA, libcuda), fds: []string{"/dev/nvidiactl"}},
	// gpuwizard's own trainer, told to use the CPU.
	{pid: 6600, ppid: 4000, comm: "gpuwizard", uid: 1000, threads: 8, ticks: 2000, cmdline: []string{"/home/ada/bin/gpuwizard", "train", "--device", "cpu", "--epochs", "3"}, environ: adaEnv, exe: "/home/ada/bin/gpuwizard", cwd: "/home/ada/project",
		maps: []string{"/home/ada/bin/gpuwizard", "/usr/lib/x86_64-linux-gnu/libc.so.6"}},
	// A Hugging Face script told --no_cuda.
	{pid: 6700, ppid: 4000, comm: "python", uid: 1000, threads: 9, ticks: 900, cmdline: []string{venv + "/bin/python", "run_glue.py", "--model_name_or_path", "bert-base-cased", "--no_cuda"}, environ: adaEnv, exe: "/usr/bin/python3.12", cwd: "/home/ada/project",
		maps: cat(baseLibs, torchCUDA)},
	// On GPU 1 with four DataLoader workers that the test keeps busy while the main process waits.
	{pid: 6800, ppid: 4000, comm: "python", uid: 1000, threads: 20, ticks: 3000, cmdline: []string{venv + "/bin/python", "train_augment.py"}, environ: adaEnv, exe: "/usr/bin/python3.12", cwd: "/home/ada/project",
		maps: cat(baseLibs, torchCUDA, libcuda, gpu1Files), fds: gpu1Files},
	{pid: 6801, ppid: 6800, comm: "python", uid: 1000, threads: 2, ticks: 1000, cmdline: []string{venv + "/bin/python", "train_augment.py"}, environ: adaEnv, exe: "/usr/bin/python3.12", cwd: "/home/ada/project", maps: cat(baseLibs, torchCUDA, libcuda, gpu1Files), fds: gpu1Files},
	{pid: 6802, ppid: 6800, comm: "python", uid: 1000, threads: 2, ticks: 1000, cmdline: []string{venv + "/bin/python", "train_augment.py"}, environ: adaEnv, exe: "/usr/bin/python3.12", cwd: "/home/ada/project", maps: cat(baseLibs, torchCUDA, libcuda, gpu1Files), fds: gpu1Files},
	{pid: 6803, ppid: 6800, comm: "python", uid: 1000, threads: 2, ticks: 1000, cmdline: []string{venv + "/bin/python", "train_augment.py"}, environ: adaEnv, exe: "/usr/bin/python3.12", cwd: "/home/ada/project", maps: cat(baseLibs, torchCUDA, libcuda, gpu1Files), fds: gpu1Files},
	{pid: 6804, ppid: 6800, comm: "python", uid: 1000, threads: 2, ticks: 1000, cmdline: []string{venv + "/bin/python", "train_augment.py"}, environ: adaEnv, exe: "/usr/bin/python3.12", cwd: "/home/ada/project", maps: cat(baseLibs, torchCUDA, libcuda, gpu1Files), fds: gpu1Files},
	// In a container (the test adds /.dockerenv): NVML lists it as host PID 31337 on GPU 0.
	{pid: 6900, ppid: 4000, comm: "python", uid: 1000, threads: 24, ticks: 5000, cmdline: []string{venv + "/bin/python", "train_in_container.py"}, environ: adaEnv, exe: "/usr/bin/python3.12", cwd: "/home/ada/project",
		maps: cat(baseLibs, torchCUDA, libcuda, gpu0Files), fds: gpu0Files},
}

// fakeFiles are the machine's other files: users, CPUs, a GPU on PCI, and
// the Python environments the processes run.
var fakeFiles = map[string]string{
	"etc/passwd":     "root:x:0:0:root:/root:/bin/bash\nada:x:1000:1000:Ada:/home/ada:/bin/bash\nbob:x:1001:1001:Bob:/home/bob:/bin/bash\n",
	"etc/os-release": "ID=ubuntu\nPRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\n",
	"proc/stat":      "cpu  1 2 3 4\ncpu0 1 2 3 4\ncpu1 1 2 3 4\ncpu2 1 2 3 4\ncpu3 1 2 3 4\ncpu4 1 2 3 4\ncpu5 1 2 3 4\ncpu6 1 2 3 4\ncpu7 1 2 3 4\nintr 0\nbtime " + fmt.Sprint(bootTime) + "\n",
	"proc/driver/nvidia/gpus/0000:01:00.0/information":                          "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 140\nBus Location: \t 0000:01:00.0\nDevice Minor: \t 0\n",
	"proc/driver/nvidia/gpus/0000:02:00.0/information":                          "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 141\nBus Location: \t 0000:02:00.0\nDevice Minor: \t 1\n",
	"proc/sys/kernel/osrelease":                                                 "6.8.0-45-generic\n",
	"proc/modules":                                                              "nvidia_uvm 1867776 0 - Live 0x0000000000000000 (PO)\nnvidia 62783488 21 nvidia_uvm, Live 0x0000000000000000 (PO)\n",
	"proc/driver/nvidia/version":                                                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 10:00:00 UTC 2025\n",
	"sys/bus/pci/devices/0000:01:00.0/vendor":                                   "0x10de\n",
	"sys/bus/pci/devices/0000:01:00.0/device":                                   "0x2330\n",
	"sys/bus/pci/devices/0000:01:00.0/class":                                    "0x030200\n",
	"sys/bus/pci/devices/0000:02:00.0/vendor":                                   "0x10de\n",
	"sys/bus/pci/devices/0000:02:00.0/device":                                   "0x2330\n",
	"sys/bus/pci/devices/0000:02:00.0/class":                                    "0x030200\n",
	"usr/bin/python3.12":                                                        "",
	"usr/bin/python3.11":                                                        "",
	"home/ada/project/.venv/pyvenv.cfg":                                         "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n",
	"home/ada/project/.venv/bin/python":                                         "",
	"home/ada/project/.venv/bin/yolo":                                           "#!/home/ada/project/.venv/bin/python\n",
	"home/ada/project/.venv/bin/torchrun":                                       "#!/home/ada/project/.venv/bin/python\n",
	venvSite[1:] + "/torch-2.5.1+cu124.dist-info/METADATA":                      "Name: torch\nVersion: 2.5.1+cu124\n",
	venvSite[1:] + "/torch/version.py":                                          "from typing import Optional\n__version__ = '2.5.1+cu124'\ndebug = False\ncuda: Optional[str] = '12.4'\ngit_version = 'abc'\nhip: Optional[str] = None\n",
	venvSite[1:] + "/nvidia_cudnn_cu12-9.1.0.70.dist-info/METADATA":             "Name: nvidia-cudnn-cu12\n",
	venvSite[1:] + "/ultralytics-8.3.0.dist-info/METADATA":                      "Name: ultralytics\n",
	"home/ada/cpuvenv/pyvenv.cfg":                                               "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n",
	"home/ada/cpuvenv/bin/python":                                               "",
	cpuSite[1:] + "/torch-2.5.1+cpu.dist-info/METADATA":                         "Name: torch\nVersion: 2.5.1+cpu\n",
	cpuSite[1:] + "/torch/version.py":                                           "from typing import Optional\n__version__ = '2.5.1+cpu'\ndebug = False\ncuda: Optional[str] = None\ngit_version = 'abc'\nhip: Optional[str] = None\n",
	tfEnv[1:] + "/bin/python3.11":                                               "",
	tfEnv[1:] + "/conda-meta/history":                                           "",
	tfSite[1:] + "/tensorflow-2.15.0.dist-info/METADATA":                        "Name: tensorflow\nVersion: 2.15.0\n",
	tfSite[1:] + "/tensorflow/python/platform/build_info.py":                    "build_info = {'cpu_compiler': '/usr/bin/clang-17', 'cuda_version': '12.2', 'cudnn_version': '8', 'is_cuda_build': True, 'is_rocm_build': False, 'is_tensorrt_build': True}\n",
	"usr/lib/python3/dist-packages/torch-1.13.0a0+gitunknown.egg-info/PKG-INFO": "Name: torch\nVersion: 1.13.0a0+gitunknown\n",
	"usr/lib/python3/dist-packages/torch/version.py":                            "__version__ = '1.13.0a0'\ndebug = False\ncuda = None\ngit_version = 'Unknown'\nhip = None\n",
}

var fakeLinks = map[string]string{
	"usr/bin/python3":                         "python3.11",
	tfEnv[1:] + "/bin/python":                 "python3.11",
	"sys/bus/pci/devices/0000:01:00.0/driver": "../../../bus/pci/drivers/nvidia",
	"sys/bus/pci/devices/0000:02:00.0/driver": "../../../bus/pci/drivers/nvidia",
}

func (p fakeProc) stat() string {
	state := p.state
	if state == 0 {
		state = 'S'
	}
	fields := make([]string, 52)
	for i := range fields {
		fields[i] = "0"
	}
	fields[0], fields[1], fields[2], fields[3] = fmt.Sprint(p.pid), "("+p.comm+")", string(state), fmt.Sprint(p.ppid)
	fields[4], fields[5], fields[7] = fmt.Sprint(p.pid), fmt.Sprint(p.ppid), "-1"
	fields[13] = fmt.Sprint(p.ticks)
	fields[19] = fmt.Sprint(p.threads)
	fields[21] = fmt.Sprint(p.startTicks())
	return strings.Join(fields, " ") + "\n"
}

// startTicks is the process's start in clock ticks after boot.
func (p fakeProc) startTicks() uint64 {
	if p.ago > 0 {
		return uint64(86400*100 - p.ago.Milliseconds()/10)
	}
	return 1000 + uint64(p.pid) + p.start
}

func (p fakeProc) status() string {
	return fmt.Sprintf("Name:\t%s\nState:\t%c\nPid:\t%d\nPPid:\t%d\nUid:\t%d\t%d\t%d\t%d\nThreads:\t%d\nNSpid:\t%d\nCpus_allowed_list:\t0-7\n",
		p.comm, 'S', p.pid, p.ppid, p.uid, p.uid, p.uid, p.uid, p.threads, p.pid)
}

func (p fakeProc) mapsText() string {
	var b strings.Builder
	addr := uint64(0x55d0c0000000)
	for i, f := range p.maps {
		for _, perms := range []string{"r--p", "r-xp", "rw-p"} {
			fmt.Fprintf(&b, "%x-%x %s 00000000 fd:01 %d                       %s\n", addr, addr+0x1000, perms, 1000+i, f)
			addr += 0x1000
		}
		if i == 0 {
			fmt.Fprintf(&b, "%x-%x rw-p 00000000 00:00 0                          [heap]\n", addr, addr+0x21000)
			addr += 0x21000
		}
	}
	b.WriteString("7ffd5a1e0000-7ffd5a201000 rw-p 00000000 00:00 0                          [stack]\n")
	b.WriteString("7ffd5a3f6000-7ffd5a3fa000 r--p 00000000 00:00 0                          [vvar]\n")
	return b.String()
}

func nul(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return strings.Join(xs, "\x00") + "\x00"
}

// buildRoot writes the fake machine under dir.
func buildRoot(t testing.TB, dir string) {
	t.Helper()
	write := func(rel, content string) {
		full := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(rel, target string) {
		full := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
	}
	for rel, c := range fakeFiles {
		write(rel, c)
	}
	if err := os.MkdirAll(filepath.Join(dir, "sys/bus/pci/drivers/nvidia"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("sys/bus/pci/drivers/nvidia/.keep", "")
	for rel, target := range fakeLinks {
		link(rel, target)
	}
	for _, p := range fakeProcs {
		for rel, f := range procFiles(p) {
			if f.Mode&fs.ModeSymlink != 0 {
				link(rel, string(f.Data))
			} else {
				write(rel, string(f.Data))
			}
		}
	}
}

// procFiles are one process's /proc files, by path under the root;
// symbolic links are MapFiles of mode fs.ModeSymlink whose data is the
// target.
func procFiles(p fakeProc) fstest.MapFS {
	d := fmt.Sprintf("proc/%d/", p.pid)
	m := fstest.MapFS{}
	file := func(rel, content string) { m[d+rel] = &fstest.MapFile{Data: []byte(content), Mode: 0o644} }
	link := func(rel, target string) {
		m[d+rel] = &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink | 0o777}
	}
	file("stat", p.stat())
	file("status", p.status())
	file("cmdline", nul(p.cmdline))
	file("environ", nul(p.environ))
	file("maps", p.mapsText())
	if p.exe != "" {
		link("exe", p.exe)
	}
	if p.cwd != "" {
		link("cwd", p.cwd)
	}
	link("fd/0", "/dev/null")
	for i, f := range p.fds {
		link(fmt.Sprintf("fd/%d", i+3), f)
	}
	file(fmt.Sprintf("task/%d/children", p.pid), childrenOf(p.pid))
	file("cgroup", "0::/user.slice/user-1000.slice/session-2.scope\n")
	file("schedstat", fmt.Sprintf("%d 0 100\n", p.ticks*10_000_000))
	return m
}

// childrenOf is /proc/PID/task/PID/children: the children's PIDs, each
// followed by a space.
func childrenOf(pid int) string {
	var b strings.Builder
	for _, c := range fakeProcs {
		if c.ppid == pid {
			fmt.Fprintf(&b, "%d ", c.pid)
		}
	}
	return b.String()
}

// snapshotTree reads a tree into path → content ("-> target" for links).
func snapshotTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "-> " + target
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The fake machine under testdata/root is what the table above describes
// (go test -run TestFakeRoot -update rewrites it).
func TestFakeRoot(t *testing.T) {
	want := t.TempDir()
	buildRoot(t, want)
	if *update {
		if err := os.RemoveAll("testdata/root"); err != nil {
			t.Fatal(err)
		}
		buildRoot(t, "testdata/root")
		return
	}
	got, exp := snapshotTree(t, "testdata/root"), snapshotTree(t, want)
	var diff []string
	for k, v := range exp {
		if got[k] != v {
			diff = append(diff, k)
		}
	}
	for k := range got {
		if _, ok := exp[k]; !ok {
			diff = append(diff, k+" (extra)")
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		t.Fatalf("testdata/root differs from the table (run go test -run TestFakeRoot -update): %v", diff)
	}
}

// isPIDPath reports whether rel (slash-separated) is under proc/<pid>.
func isPIDPath(rel string) bool {
	rest, ok := strings.CutPrefix(rel, "proc/")
	if !ok {
		return false
	}
	first, _, _ := strings.Cut(rest, "/")
	_, err := strconv.Atoi(first)
	return err == nil
}

// copyBase copies testdata/root but its processes to a temporary folder a
// test may change: the files the doctor's probe reads by path. The
// processes live in memory (machineFS): thousands of small files are slow
// to copy.
func copyBase(t testing.TB) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir("testdata/root", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata/root", p)
		if isPIDPath(filepath.ToSlash(rel)) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// fakeProcsFS is every fake process's /proc files.
func fakeProcsFS() fstest.MapFS {
	m := fstest.MapFS{}
	for _, p := range fakeProcs {
		maps.Copy(m, procFiles(p))
	}
	return m
}

// machineFS is the fake machine as the watcher reads it: the processes
// from memory, every other file from the disk copy.
type machineFS struct {
	disk  fs.FS
	procs fstest.MapFS
}

func (m machineFS) pick(name string) fs.FS {
	if isPIDPath(name) {
		return m.procs
	}
	return m.disk
}

func (m machineFS) Open(name string) (fs.File, error)    { return m.pick(name).Open(name) }
func (m machineFS) ReadFile(name string) ([]byte, error) { return fs.ReadFile(m.pick(name), name) }
func (m machineFS) Stat(name string) (fs.FileInfo, error) {
	return fs.Stat(m.pick(name), name)
}
func (m machineFS) ReadLink(name string) (string, error) {
	return m.pick(name).(fs.ReadLinkFS).ReadLink(name)
}
func (m machineFS) Lstat(name string) (fs.FileInfo, error) {
	return m.pick(name).(fs.ReadLinkFS).Lstat(name)
}

// ReadDir merges /proc's process folders into the disk's.
func (m machineFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if name != "proc" {
		return fs.ReadDir(m.pick(name), name)
	}
	disk, err := fs.ReadDir(m.disk, name)
	if err != nil {
		return nil, err
	}
	mem, err := fs.ReadDir(m.procs, name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return append(disk, mem...), nil
}

var _ fs.ReadLinkFS = machineFS{}

func fakeProcByPID(pid int) fakeProc {
	for _, p := range fakeProcs {
		if p.pid == pid {
			return p
		}
	}
	return fakeProc{}
}

// denyFS refuses to read some files, as the kernel does for another
// user's /proc/PID/maps, environ and exe.
type denyFS struct {
	fsys fs.FS
	deny map[string]bool
}

func (d denyFS) err(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: fs.ErrPermission}
}

func (d denyFS) Open(name string) (fs.File, error) {
	if d.deny[name] {
		return nil, d.err("open", name)
	}
	return d.fsys.Open(name)
}

func (d denyFS) ReadFile(name string) ([]byte, error) {
	if d.deny[name] {
		return nil, d.err("open", name)
	}
	return fs.ReadFile(d.fsys, name)
}

func (d denyFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(d.fsys, name) }

func (d denyFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(d.fsys, name) }

func (d denyFS) ReadLink(name string) (string, error) {
	if d.deny[name] {
		return "", d.err("readlink", name)
	}
	return d.fsys.(fs.ReadLinkFS).ReadLink(name)
}

func (d denyFS) Lstat(name string) (fs.FileInfo, error) { return d.fsys.(fs.ReadLinkFS).Lstat(name) }

var _ fs.ReadLinkFS = denyFS{}

func contains(xs []string, sub string) bool {
	for _, x := range xs {
		if strings.Contains(x, sub) {
			return true
		}
	}
	return false
}
