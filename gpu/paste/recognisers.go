package paste

import (
	"regexp"
	"strconv"
	"strings"

	"gpuwizard/gpu"
)

// recogniser reads one kind of line of one report format.
type recogniser struct {
	format string         // the format the line belongs to ("collect_env", "nvidia-smi", ...); "" adds none
	hint   string         // a lower-case part every such line contains: a cheap test first ("" none)
	anyOf  []string       // or: lower-case parts one of which every such line contains
	re     *regexp.Regexp // the line
	lower  bool           // re is lower-case and runs on the line's ASCII lowered (faster than (?i) on prose)
	// test, when set, says whether the line (s, and low: s lower-cased)
	// is this recogniser's, instead of re; apply then gets no submatches.
	test  func(s, low string) bool
	apply func(pp *parser, m []string, s string)
	last  bool // a line this recogniser reads holds nothing else
}

// recognisers is the table of line formats, tried in order on every
// cleaned line. It is never modified.
var recognisers = []recogniser{
	// A one-line script (python -c "import torch; print(...); print(...)"):
	// its prints' values are on the next lines, in order; a print of
	// something else takes its line too ("?").
	{anyOf: []string{"-c "}, re: oneLinerRE, apply: func(pp *parser, m []string, s string) {
		pp.queries, pp.oneLiner = nil, true
		for _, pm := range printRE.FindAllStringSubmatch(s, maxQueries) {
			q := "?"
			if replQueryRE.MatchString(pm[1]) {
				q = pm[1]
			}
			pp.queries = append(pp.queries, q)
		}
	}},
	// A REPL query: its value is on the next line (replAnswer).
	{anyOf: []string{"torch.", "tf.", "jax."}, re: replQueryRE, last: true, apply: func(pp *parser, m []string, s string) {
		if pp.oneLiner {
			pp.queries, pp.oneLiner = nil, false
		}
		if len(pp.queries) < maxQueries {
			pp.queries = append(pp.queries, m[1])
		}
	}},
	// --- python -m torch.utils.collect_env ---------------------------------
	{format: "collect_env", hint: "pytorch version:", re: regexp.MustCompile(`^PyTorch version:\s*(\S+)`), last: true,
		apply: func(pp *parser, m []string, s string) { pp.torch(m[1], s) }},
	{format: "collect_env", hint: "cuda used to build pytorch:", re: regexp.MustCompile(`^CUDA used to build PyTorch:\s*(.+)$`), last: true,
		apply: func(pp *parser, m []string, s string) {
			v := strings.TrimSpace(m[1])
			pk := pp.setPackage("torch", "", "")
			if _, ok := gpu.ParseVersion(v); ok {
				pk.CUDA, pk.CPUOnly = gpu.MajorMinor(v), false
			} else if v == "None" || v == "Could not collect" {
				pk.CPUOnly = pk.ROCm == ""
			}
			pk.BuildNote = `report: "` + s + `"`
			pp.quote("torch", s)
		}},
	{format: "collect_env", hint: "rocm used to build pytorch:", re: regexp.MustCompile(`^ROCM used to build PyTorch:\s*(.+)$`), last: true,
		apply: func(pp *parser, m []string, s string) {
			if v := strings.TrimSpace(m[1]); validVersion(v) {
				pk := pp.setPackage("torch", "", "")
				pk.ROCm, pk.CPUOnly = v, false
			}
		}},
	{hint: "os:", re: regexp.MustCompile(`^OS:\s*(.+)$`), last: true, apply: (*parser).osLine},
	{hint: "python version:", re: regexp.MustCompile(`^Python version:\s*(\d+\.\d+)`), last: true,
		apply: func(pp *parser, m []string, s string) { pp.env.Version = m[1] }},
	{hint: "python platform:", re: regexp.MustCompile(`^Python platform:\s*(.+)$`), last: true,
		apply: func(pp *parser, m []string, s string) {
			if strings.Contains(strings.ToLower(m[1]), "windows") {
				pp.f.Host.OS = "windows"
			}
			pp.quote("os", s)
		}},
	{hint: "is cuda available:", re: regexp.MustCompile(`^Is CUDA available:\s*(True|False|Yes|No)`), last: true,
		apply: func(pp *parser, m []string, s string) { pp.cudaAvailable(m[1] == "True" || m[1] == "Yes", s) }},
	// docTR's and others' copy of collect_env, one line per backend: "Is
	// CUDA available (PyTorch): Yes" (the TensorFlow line's N/A is no answer).
	{hint: "is cuda available (pytorch):", re: regexp.MustCompile(`^Is CUDA available \(PyTorch\):\s*(True|False|Yes|No)\b`), last: true,
		apply: func(pp *parser, m []string, s string) { pp.cudaAvailable(m[1] == "True" || m[1] == "Yes", s) }},
	{hint: "cuda runtime version:", re: regexp.MustCompile(`^CUDA runtime version:\s*(\d+\.\d+(?:\.\d+)?)`), last: true,
		apply: func(pp *parser, m []string, s string) { pp.toolkit(m[1], s) }},
	{hint: "gpu models and configuration:", re: regexp.MustCompile(`^GPU models and configuration:\s*(.*)$`), last: true,
		apply: func(pp *parser, m []string, s string) {
			rest := strings.TrimSpace(m[1])
			if g := ceGPULineRE.FindStringSubmatch(rest); g != nil {
				pp.gpu(g[2], "", s)
			} else if rest == "" {
				pp.section = "ce_gpus"
			} else if !strings.Contains(rest, "Could not collect") && !strings.Contains(rest, "No CUDA") {
				pp.gpu(rest, "", s)
			}
		}},
	{hint: "nvidia driver version:", re: regexp.MustCompile(`^Nvidia driver version:\s*(\d+\.\d+(?:\.\d+)?)`), last: true,
		apply: func(pp *parser, m []string, s string) { pp.f.NVML.DriverVersion = m[1]; pp.quote("driver", s) }},
	{hint: "cudnn version:", re: regexp.MustCompile(`^cuDNN version:\s*(.*)$`), last: true,
		apply: func(pp *parser, m []string, s string) {
			v := strings.TrimSpace(m[1])
			switch {
			case strings.HasPrefix(v, "Probably one of"):
				pp.section = "ce_cudnn"
			case validVersion(v):
				pp.library(gpu.Library{Name: "libcudnn", Soname: "cuDNN " + v, Version: v, Origin: "report (collect_env)"})
				pp.quote("cudnn", s)
			default:
				pp.cudnnFile(v, s)
			}
		}},

	// --- nvidia-smi ------------------------------------------------------
	// The header: "Driver Version" and "CUDA Version"; from driver 610 on,
	// "KMD Version" and "CUDA UMD Version" (the same two values).
	{format: "nvidia-smi", anyOf: []string{"driver version:", "kmd version:"}, re: regexp.MustCompile(`NVIDIA-SMI\s+(\S+)\s+(?:Driver|KMD) Version:\s*(\S+)(?:\s+CUDA(?: UMD)? Version:\s*(\S+))?`), last: true,
		apply: func(pp *parser, m []string, s string) {
			pp.f.NVML.Status, pp.f.NVML.DriverVersion = gpu.NVMLOK, m[2]
			if validVersion(m[3]) {
				pp.f.NVML.CUDADriverVersion = m[3]
			}
			pp.quote("driver", s)
			if pp.f.Host.WSL == 0 && linuxSMIRE.MatchString(m[1]) && windowsDriverRE.MatchString(m[2]) {
				// Linux's nvidia-smi (555.42.03) over a Windows driver
				// (555.85): WSL 2, whose driver is the Windows one.
				pp.f.Host.OS, pp.f.Host.WSL = "linux", 2
				pp.quote("os", s)
			}
		}},
	{format: "nvidia-smi", hint: "|", re: regexp.MustCompile(`^\|\s+(\d+)\s+(.+?)\s+(On|Off|WDDM|TCC)\s*\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)`), last: true,
		apply: func(pp *parser, m []string, s string) {
			g := pp.gpu(m[2], "", s)
			g.PCIBusID = m[4]
			pp.lastGPU = g.Index
		}},
	{hint: "mib", re: regexp.MustCompile(`^\|.*?(\d+)MiB\s*/\s*(\d+)MiB\s*\|\s*(\d+)%`), last: true,
		apply: func(pp *parser, m []string, s string) {
			if pp.lastGPU < 0 {
				return
			}
			g := &pp.f.NVML.GPUs[pp.lastGPU]
			used, _ := strconv.ParseUint(m[1], 10, 64)
			total, _ := strconv.ParseUint(m[2], 10, 64)
			util, _ := strconv.Atoi(m[3])
			if total >= used {
				g.MemoryUsedMiB, g.MemoryTotalMiB, g.MemoryFreeMiB = used, total, total-used
			}
			g.UtilizationPct = &util
			pp.quote("gpu_memory", s)
			pp.lastGPU = -1
		}},
	{hint: "mib", re: regexp.MustCompile(`^\|\s+(\d+)\s+(?:(?:N/A|\d+)\s+(?:N/A|\d+)\s+)?(\d+)\s+(C|G|C\+G|M)\s+(.+?)\s+(\d+)MiB\s*\|`), last: true,
		apply: func(pp *parser, m []string, s string) {
			idx, _ := strconv.Atoi(m[1])
			pid, _ := strconv.ParseUint(m[2], 10, 32)
			mib, _ := strconv.ParseUint(m[5], 10, 64)
			for i := range pp.f.NVML.GPUs {
				if pp.f.NVML.GPUs[i].Index == idx && m[3] != "G" {
					pp.f.NVML.GPUs[i].Processes = append(pp.f.NVML.GPUs[i].Processes, gpu.Process{PID: uint32(pid), Name: m[4], UsedMiB: mib})
					pp.quote("gpu_memory", s)
				}
			}
		}},
	{format: "nvidia-smi", hint: "uuid", re: regexp.MustCompile(`^GPU (\d+):\s*(.+?)\s*\(UUID:\s*(GPU-[0-9a-fA-F-]+)\)`), last: true,
		apply: func(pp *parser, m []string, s string) { pp.gpu(m[2], "", s).UUID = m[3] }},

	// --- nvidia-smi -q ---------------------------------------------------
	{format: "nvidia-smi-q", hint: "nvsmi log", re: regexp.MustCompile(`=+NVSMI LOG=+`), last: true,
		apply: func(pp *parser, m []string, s string) { pp.f.NVML.Status = gpu.NVMLOK }},
	{anyOf: []string{"driver version", "kmd version"}, re: regexp.MustCompile(`^(?:Driver|KMD) Version\s+:\s*(\d+\.\d+(?:\.\d+)?)\s*(?:\[[^\]]*\]\s*)?$`), last: true,
		apply: func(pp *parser, m []string, s string) {
			pp.f.NVML.DriverVersion = m[1]
			pp.quote("driver", s)
		}},
	// Windows' form of the driver version (dxdiag, Device Manager, WMI): winreport.go.
	{anyOf: []string{"driver version", "driverversion"}, re: winDriverLineRE, last: true, apply: (*parser).windowsDriver},
	{anyOf: []string{"cuda version", "cuda umd version"}, re: regexp.MustCompile(`^CUDA(?: UMD)? Version\s+:\s*(\d+\.\d+)\s*(?:\[[^\]]*\]\s*)?$`), last: true,
		apply: func(pp *parser, m []string, s string) {
			pp.f.NVML.CUDADriverVersion = m[1]
			pp.quote("driver", s)
		}},
	{hint: "gpu ", re: regexp.MustCompile(`^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)\s*$`), last: true,
		apply: func(pp *parser, m []string, s string) {
			pp.f.NVML.GPUs = append(pp.f.NVML.GPUs, gpu.GPU{Index: len(pp.f.NVML.GPUs), PCIBusID: m[1]})
			pp.lastGPU = len(pp.f.NVML.GPUs) - 1
			pp.section = "smiq_gpu"
		}},

	// --- nvcc, CUDA toolkits ----------------------------------------------
	{format: "nvcc", hint: "cuda compilation tools", re: regexp.MustCompile(`Cuda compilation tools, release (\d+\.\d+)(?:, V(\S+))?`), last: true,
		apply: func(pp *parser, m []string, s string) {
			v := m[1]
			if m[2] != "" {
				v = strings.TrimRight(m[2], ".")
			}
			pp.toolkit(v, s)
		}},

	// --- Ultralytics / YOLOv5 banners and checks --------------------------
	{format: "ultralytics", hint: "python-", re: regexp.MustCompile(`Python-(\d+\.\d+(?:\.\d+)?)\s+torch-(\S+)(?:\s+(CUDA:(\d+)\s*\(([^,()]+(?:\([^)]*\))?[^,()]*),\s*(\d+)\s*MiB\)|CPU|MPS))?`),
		apply: func(pp *parser, m []string, s string) {
			pp.env.Version = gpu.MajorMinor(m[1])
			pp.torch(m[2], s)
			switch {
			case m[4] != "":
				mib, _ := strconv.ParseUint(m[6], 10, 64)
				g := pp.gpu(m[5], "", s)
				if g.MemoryTotalMiB == 0 {
					g.MemoryTotalMiB = mib
				}
				pp.p.DeviceUsed = "cuda:" + m[4]
			case m[3] != "":
				pp.p.DeviceUsed = strings.ToLower(m[3])
			}
			pp.quote("device", s)
		}},
	{hint: "torch.cuda.is_available()", re: regexp.MustCompile(`torch\.cuda\.is_available\(\)\s*[:=]?\s*(True|False)\b`),
		apply: func(pp *parser, m []string, s string) { pp.cudaAvailable(m[1] == "True", s) }},
	{hint: "device_count", re: regexp.MustCompile(`torch\.cuda\.device_count\(\)\s*[:=]?\s*(\d+)`),
		apply: func(pp *parser, m []string, s string) { pp.quote("cuda_available", s) }},
	{hint: "cuda_visible_devices", re: regexp.MustCompile(`(?:(?:os\.environ|os)\[['"]CUDA_VISIBLE_DEVICES['"]\]\s*[:=]\s*['"]?|(?:^|[\s\x60]|export\s+|set\s+)CUDA_VISIBLE_DEVICES=\s*['"]?)([-\w,$]*)`),
		apply: func(pp *parser, m []string, s string) {
			v := strings.TrimSpace(m[1])
			if v != "None" && v != "" || strings.Contains(s, "CUDA_VISIBLE_DEVICES=") && !strings.Contains(s, "$") {
				pp.f.Env = append(pp.f.Env, gpu.EnvVar{Name: "CUDA_VISIBLE_DEVICES", Value: v, Set: true})
			}
			pp.quote("env", s)
		}},

	// --- TensorFlow logs ------------------------------------------------------
	{format: "tensorflow", hint: "compute capability", re: regexp.MustCompile(`name:\s*(.+?),\s*pci bus id:\s*([0-9a-fA-F:.]+),\s*compute capability:\s*(\d+\.\d+)`),
		apply: func(pp *parser, m []string, s string) {
			g := pp.gpu(m[1], m[3], s)
			g.PCIBusID = m[2]
			pp.p.Devices = appendUnique(pp.p.Devices, "gpu")
		}},
	{format: "tensorflow", hint: "computecapability", re: regexp.MustCompile(`name:\s*(.+?)\s+computeCapability:\s*(\d+\.\d+)`),
		apply: func(pp *parser, m []string, s string) { pp.gpu(m[1], m[2], s) }},
	{format: "tensorflow", hint: "major:", re: regexp.MustCompile(`name:\s*(.+?)\s+major:\s*(\d+)\s+minor:\s*(\d+)`),
		apply: func(pp *parser, m []string, s string) { pp.gpu(m[1], m[2]+"."+m[3], s) }},
	{format: "tensorflow", hint: "tensorflow/", re: regexp.MustCompile(`tensorflow/|dso_loader\.cc`),
		apply: func(pp *parser, m []string, s string) {}},

	// --- JAX -------------------------------------------------------------
	{format: "jax", hint: "device(id=", re: regexp.MustCompile(`\[(CpuDevice|TFRT_CPU_0|GpuDevice|CudaDevice|cuda|gpu)\(id=`),
		apply: func(pp *parser, m []string, s string) {
			if strings.Contains(strings.ToLower(m[1]), "cpu") {
				pp.p.Devices = appendUnique(pp.p.Devices, "cpu")
			} else {
				pp.p.Devices = appendUnique(pp.p.Devices, "gpu")
			}
			pp.quote("jax", s)
		}},

	// --- kernel log (dmesg) ------------------------------------------------
	{format: "dmesg", hint: "nvrm", re: regexp.MustCompile(`NVRM version:.*Kernel Module\s+(\d+\.\d+(?:\.\d+)?)`),
		apply: func(pp *parser, m []string, s string) {
			pp.f.Driver.ModuleVersion, pp.f.Driver.ProcVersion = m[1], s
			pp.quote("driver", s)
		}},
	{format: "dmesg", hint: "nvrm: api mismatch", re: regexp.MustCompile(`NVRM: API mismatch: the client has the version (\d+\.\d+(?:\.\d+)?), but\s+(?:NVRM: )?this kernel module has the version (\d+\.\d+(?:\.\d+)?)`),
		apply: func(pp *parser, m []string, s string) {
			pp.f.Driver.ModuleVersion = m[2]
			pp.quote("driver", s)
		}},
	{format: "dkms", hint: "installed", re: regexp.MustCompile(`^nvidia/(\d+\.\d+(?:\.\d+)?),\s*\S+,\s*\S+:\s*installed`),
		apply: func(pp *parser, m []string, s string) { pp.quote("driver", s) }},
	{hint: "nouveau", re: regexp.MustCompile(`nouveau`),
		apply: func(pp *parser, m []string, s string) {
			low := strings.ToLower(s)
			if strings.Contains(low, "blacklist") || strings.Contains(low, "modeset=0") {
				return
			}
			pp.f.Driver.Modules = appendUnique(pp.f.Driver.Modules, "nouveau")
			pp.quote("driver", s)
		}},

	// --- containers and platforms ---------------------------------------------
	{format: "docker-run", hint: "docker", re: regexp.MustCompile("(?:^|[\\s`'\"])(?:sudo\\s+)?(nvidia-docker|docker)(?:\\s+container)?\\s+run\\b(.*)$"),
		apply: func(pp *parser, m []string, s string) {
			gpus := m[1] == "nvidia-docker" || strings.Contains(m[2], "--gpus") || strings.Contains(m[2], "--runtime=nvidia") ||
				strings.Contains(m[2], "--runtime nvidia") || strings.Contains(m[2], "nvidia.com/gpu")
			if pp.p.DockerRun == "" { // the first start is the one the report is about
				pp.p.DockerRun, pp.p.DockerGPUs = trimQuote(s), &gpus
			}
			if pp.f.Host.Container == "" {
				pp.f.Host.Container = "docker"
			}
			pp.quote("os", s)
		}},
	{hint: "wsl", re: regexp.MustCompile(`(?i)microsoft-standard-WSL2|/usr/lib/wsl/|\bWSL ?2?\b|wsl\.exe`),
		apply: func(pp *parser, m []string, s string) {
			pp.f.Host.OS, pp.f.Host.WSL = "linux", 2
			if strings.Contains(s, "/usr/lib/wsl/lib") {
				pp.f.Host.WSLLibDir = true
			}
			pp.quote("os", s)
		}},
	// WSL spelled out. (A Windows drive where WSL mounts it, /mnt/c/, is
	// also where a Linux mounts a Windows partition: not WSL alone.)
	{hint: "subsystem for linux", re: regexp.MustCompile(`(?i)subsystem for linux`),
		apply: func(pp *parser, m []string, s string) {
			if pp.f.Host.WSL == 0 {
				pp.f.Host.OS, pp.f.Host.WSL = "linux", 2
			}
			pp.quote("os", s)
		}},
	// A Singularity/Apptainer start: --nv (or --nvccli) hands it the
	// host's GPUs and driver, like docker's --gpus.
	{anyOf: []string{"singularity", "apptainer"}, re: regexp.MustCompile("(?:^|[\\s`'\"$>])(singularity|apptainer)\\s+(?:exec|run|shell|instance\\s+start)\\b(.*)$"),
		apply: func(pp *parser, m []string, s string) {
			gpus := strings.Contains(m[2], "--nv") // --nv, --nvccli
			if pp.p.DockerRun == "" {
				pp.p.DockerRun, pp.p.DockerGPUs = trimQuote(s), &gpus
			}
			inContainer(pp, m, s)
		}},
	// Containers in words, a Dockerfile's FROM (upper case; Python's "from
	// x import y" is not) and image tags that name a CUDA: three cheap
	// tests instead of one pattern tried on every line that says "cuda".
	// Chinese, Japanese and Korean reports say "container" in their words
	// (容器, コンテナ, 컨테이너) or put docker before a locative (docker里)
	// or a verb (docker部署: deployed with docker). A Compose file's GPU
	// reservation (capabilities: [gpu]) is a container's too.
	{anyOf: []string{"docker", "container", "pod", "kubernetes", "k8s", "singularity", "apptainer", "enroot", "pyxis", "容器", "コンテナ", "컨테이너"},
		test: func(s, _ string) bool { return namesContainer(asciiLower(s)) }, apply: inContainer},
	// Container and docker in Spanish, Portuguese, Russian, French, Korean
	// and Japanese (ドッカー), a Compose file's GPU reservation, and the
	// platforms that run every app in a container (Portainer, Unraid,
	// Fargate; not a Kubernetes distribution, whose GPU operator builds
	// the host's driver): rarer words, tried apart.
	{anyOf: []string{"도커", "ドッカー", "contenedor", "contêiner", "контейнер", "докер", "capabilities", "conteneur", "portainer", "unraid", "fargate"}, lower: true,
		re:    regexp.MustCompile(`도커|ドッカー|contenedor|contêiner|контейнер|докер|conteneur|capabilities:\s*\[\s*gpu\s*\]|\b(?:portainer|unraid|fargate)\b`),
		apply: inContainer},
	// docker with a verb or a preposition of another language before it
	// ("deployed it with docker", "usando docker", "в docker"), or a noun
	// after it ("the docker deployment"): words read around the literal,
	// cheaper than alternations tried at every byte of every line.
	{hint: "docker", test: func(_, low string) bool { return dockerInWords(low) }, apply: inContainer},
	// Docker Compose's own output: a service's log line ("app-1  | ...",
	// "app_1  | ..." before Compose v2) and its progress ("✔ Container
	// ollama  Started").
	{hint: "|", test: func(s, _ string) bool { return composeLogLine(s) }, apply: inContainer},
	{hint: "container ", test: func(_, low string) bool { return composeProgress(low) }, apply: inContainer},
	{hint: "from", re: regexp.MustCompile(`^FROM\s+\S+(?:\s+AS\s+\S+)?\s*$`), apply: inContainer},
	{hint: "cuda", anyOf: []string{":"}, test: func(s, _ string) bool { return cudaImageTag(asciiLower(s)) }, apply: inContainer},
	{anyOf: []string{"srun", "sbatch", "salloc", "slurm"}, re: regexp.MustCompile(`(?:^|\s)(?:srun|sbatch|salloc)\s|^#SBATCH\b|\bslurm\b`),
		apply: func(pp *parser, m []string, s string) {
			pp.p.Scheduler = "slurm"
			pp.quote("env", s)
		}},
	// In words: the first answer, unless a later one says False (a report
	// that tells of a machine where it works is about the one where not).
	{hint: "is_available", re: regexp.MustCompile("(?i)is_available\\(\\)`?\\s*(?:returns?|returned|gives|gave|is|was|would be|will be|is always|always returns?|keeps? returning|=|->|prints?|printed|shows?|outputs?|返回|输出|显示|结果(?:是|为)?|就是|也是|还是|一直是|总是|为|是|が|は|가|이)\\s*:?\\s*`?(true|false)\\b"),
		apply: func(pp *parser, m []string, s string) {
			if v := strings.EqualFold(m[1], "true"); pp.p.CUDAAvailable == nil || !v && *pp.p.CUDAAvailable {
				pp.cudaAvailable(v, s)
			}
		}},
	{hint: "pip", re: regexp.MustCompile(`\bpip3?\s+install\b.*\btorch(?:==[\w.+]+)?(?:\s|$)`),
		apply: func(pp *parser, m []string, s string) {
			if !strings.Contains(s, "index-url") && !strings.Contains(s, "-f ") && !strings.Contains(s, "download.pytorch.org") {
				pp.p.PipTorchNoIndex = true
				pp.quote("torch", s)
			}
		}},
	{hint: "microsoft windows", re: regexp.MustCompile(`Microsoft Windows`),
		apply: func(pp *parser, m []string, s string) { pp.f.Host.OS = "windows" }},
	// "colab" inside a hyphenated name (requirements-win-colab-cuda.txt, a
	// repository's name) says nothing of where the program runs.
	{hint: "col", re: regexp.MustCompile(`(?i)(?:^|[^\w-])colab(?:$|[^\w-])|google\.colab|\bgoogle[ -]coll?ab\b`), apply: (*parser).colab},
	{hint: "/content/", re: regexp.MustCompile(`(?:^|["'\s])/content/`),
		apply: func(pp *parser, m []string, s string) {
			if pp.f.Host.Container == "" {
				pp.f.Host.Container = "colab"
			}
			pp.quote("os", s)
		}},

	// --- package lists -----------------------------------------------------
	{format: "pip", hint: "==", re: regexp.MustCompile(`^(?:\[(?:pip3?|conda)\]\s+|\+\s+)?([A-Za-z][A-Za-z0-9_.-]*)(?:\[[\w,-]+\])?==(\S+?),?\s*$`),
		apply: func(pp *parser, m []string, s string) { pp.pipLine(m[1], m[2], s) }},
	{anyOf: []string{"torch", "tensorflow", "nvidia", "jax", "onnx", "paddle", "mmcv", "detectron", "xformers", "ultralytics", "yolo", "keras", "cupy", "triton", "tensorrt"}, re: regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_.-]*)\s+(\d+\.\d+[0-9A-Za-z.+-]*)(?:\s+(?:/\S+|[A-Za-z]:\\\S+|pypi_0\s+pypi))?\s*$`),
		apply: func(pp *parser, m []string, s string) { pp.pipLine(m[1], m[2], s) }},
	{format: "pip", hint: "successfully installed", re: regexp.MustCompile(`^Successfully installed (.+)$`),
		apply: func(pp *parser, m []string, s string) {
			for _, w := range strings.Fields(m[1]) {
				if i := strings.LastIndex(w, "-"); i > 0 && i+1 < len(w) && w[i+1] >= '0' && w[i+1] <= '9' {
					pp.pipLine(w[:i], w[i+1:], s)
				}
			}
		}},
	{format: "conda", anyOf: []string{"torch", "cpuonly", "cuda", "cudnn", "tensorflow", "jaxlib", "onnxruntime", "paddle"}, re: regexp.MustCompile(`^(?:\[conda\]\s+)?(pytorch|torchvision|torchaudio|pytorch-cuda|pytorch-mutex|cpuonly|cudatoolkit|cuda-toolkit|cuda-runtime|cuda-version|cudnn|tensorflow(?:-gpu|-base)?|jaxlib|onnxruntime(?:-gpu)?|paddlepaddle(?:-gpu)?)\s+(\d[0-9A-Za-z.+_-]*)\s+(\S+)(?:\s+(\S+))*\s*$`),
		apply: func(pp *parser, m []string, s string) { pp.condaLine(m[1], m[2], m[3], s) }},

	// --- versions in tracebacks, REPLs and prose ------------------------------
	{hint: "torch", re: regexp.MustCompile(`(?i)\b(?:py)?torch(?:\s*==\s*|\s*[:=-]\s*|\s+version(?:\s+is)?\s*:?\s*|\s+)v?(\d+\.\d+(?:\.\d+)?(?:(?:a|b|rc|\.dev|\.post)\d+)?(?:\+[A-Za-z0-9.]+)?)\b`),
		apply: func(pp *parser, m []string, s string) {
			if !strings.Contains(s, "torchvision") && !strings.Contains(s, "torchaudio") && !strings.Contains(s, "Python-") {
				pp.torch(m[1], s)
			}
		}},
	{hint: "tensorflow version", re: regexp.MustCompile(`(?i)^[-*\s]*tensorflow version[^:\n]{0,40}:\s*(?:v[\w.-]*\s+)?v?(\d+\.\d+(?:\.\d+)?)\b`),
		apply: func(pp *parser, m []string, s string) {
			pp.setPackage("tensorflow", m[1], "")
			pp.quote("tensorflow", s)
		}},
	{hint: "cuda/cudnn version", re: regexp.MustCompile(`(?i)cuda/cudnn version\s*:\s*(?:cuda\s*)?v?(\d{1,2}\.\d)`),
		apply: func(pp *parser, m []string, s string) {
			pp.prose("cuda", m[1])
			pp.quote("toolkit", s)
		}},
	{hint: "torchvision", re: regexp.MustCompile(`(?i)\btorchvision(?:\s*==\s*|\s+version(?:\s+is)?\s*:?\s*|\s*:\s*)v?(\d+\.\d+(?:\.\d+)?(?:\+[A-Za-z0-9.]+)?)\b`),
		apply: func(pp *parser, m []string, s string) {
			pk := pp.setPackage("torchvision", m[1], "")
			tagBuild(pk, s)
			pp.quote("torch", s)
		}},
	{hint: "-gpu", re: regexp.MustCompile(`(?i)\b(tensorflow-gpu|paddlepaddle-gpu|paddle-gpu|onnxruntime-gpu)\b`),
		apply: func(pp *parser, m []string, s string) {
			low := strings.ToLower(s)
			if strings.Contains(low, "please") || strings.Contains(low, "try to") || strings.Contains(low, "should") ||
				strings.Contains(low, "change it to") || strings.Contains(low, "change to") || strings.Contains(low, "switch to") || strings.Contains(low, "better,") {
				return // advice (a tool's, or the reporter's), not what the user installed
			}
			name := strings.ToLower(m[1])
			if i := strings.Index(low, name); i >= 0 && notInstalled(low[:i], low[i+len(name):]) {
				return
			}
			pp.p.GPUPackages = appendUnique(pp.p.GPUPackages, name)
		}},
	{hint: "ii ", re: regexp.MustCompile(`^ii\s+(?:nvidia-driver-\d+|nvidia-\d{3}|nvidia-driver|xserver-xorg-video-nvidi\S*|libnvidia-compute-\d+|nvidia-kernel-\S+|nvidia-dkms-\d+)\s+(\d{3}\.\d{1,3}(?:\.\d+)?)`),
		apply: func(pp *parser, m []string, s string) {
			if pp.f.NVML.DriverVersion == "" {
				pp.f.NVML.DriverVersion = m[1]
			}
			pp.formats["dpkg"] = true
			pp.quote("driver", s)
		}},
	{hint: "physicaldevice", re: regexp.MustCompile(`\[PhysicalDevice\(name='/physical_device:CPU:0'[^\]]*\]\s*$`),
		apply: func(pp *parser, m []string, s string) {
			if !strings.Contains(s, "GPU") {
				pp.p.Devices = appendUnique(pp.p.Devices, "cpu")
			}
		}},
	{hint: "tensorflow", re: regexp.MustCompile(`(?i)\btensorflow(?:-gpu|-cpu|-intel)?(?:\s*==\s*|\s*[:=-]\s*|\s+version\s*:?\s*|\s+)v?(\d+\.\d+(?:\.\d+)?)\b`),
		apply: func(pp *parser, m []string, s string) {
			pp.setPackage("tensorflow", m[1], "")
			pp.quote("tensorflow", s)
		}},
	{hint: "tf", re: regexp.MustCompile(`\bTF\s*v?(\d\.\d{1,2}(?:\.\d+)?)\b`),
		apply: func(pp *parser, m []string, s string) {
			if _, ok := pp.env.Package("tensorflow"); !ok {
				pp.setPackage("tensorflow", m[1], "")
				pp.quote("tensorflow", s)
			}
		}},
	{hint: "sys.executable", re: regexp.MustCompile(`sys\.executable[^'"\n]*['"]?([^'"\s]+python[^'"\s]*)`),
		apply: func(pp *parser, m []string, s string) {
			p := strings.ReplaceAll(m[1], `\\`, `\`)
			pp.p.Interpreters = appendUnique(pp.p.Interpreters, p)
			pp.quote("python", s)
		}},
	{hint: "python", re: regexp.MustCompile(`^['"]([A-Za-z]:\\\S*python\d*(?:\.exe)?|/\S*/bin/python[\d.]*)['"]$`),
		apply: func(pp *parser, m []string, s string) {
			pp.p.Interpreters = appendUnique(pp.p.Interpreters, strings.ReplaceAll(m[1], `\\`, `\`))
			pp.quote("python", s)
		}},
	// nvidia-smi's CUDA version in words ("nvidia-smi shows CUDA Version:
	// 11.4"): the CUDA the driver runs, when no table says it.
	{anyOf: []string{"nvidia-smi"}, lower: true, re: regexp.MustCompile(`nvidia-smi\b[^\n]{0,40}\bcuda version\W{0,3}(?:is |of )?(\d{1,2}\.\d)\b`),
		apply: func(pp *parser, m []string, s string) {
			if pp.f.NVML.CUDADriverVersion == "" {
				pp.f.NVML.CUDADriverVersion = m[1]
			}
			pp.quote("driver", s)
		}},
	// The driver's version in words ("my driver is 470", "driver 535.183",
	// "el driver es 470", "驱动版本 470"): a fact of prose, not a table's.
	{anyOf: []string{"driver", "controlador", "драйвер", "驱动"}, lower: true,
		re: regexp.MustCompile(`(?:\b(?:nvidia |gpu )?(?:driver|controlador)|драйвер|驱动)(?: version| versión| versão| версии|版本)?\s*(?:is|es|é|:|=|-|是|为|：)?\s*(?:v|r)?([3-9][0-9]{2})(\.[0-9]{1,3})?(?:\.[0-9]+)?(?:[^0-9.]|$)`),
		apply: func(pp *parser, m []string, s string) {
			pp.prose("driver_words", m[1]+m[2])
			pp.quote("driver", s)
		}},
	{hint: "too old", re: regexp.MustCompile(`too old \(found version (\d+)\)`),
		apply: func(pp *parser, m []string, s string) {
			n, _ := strconv.Atoi(m[1])
			if c := gpu.CUDAFromInt(n); c != "" && pp.f.NVML.CUDADriverVersion == "" {
				pp.f.NVML.CUDADriverVersion = c
			}
			pp.quote("driver", s)
		}},
	{hint: "is not compatible", re: regexp.MustCompile(`(\S.*?) with CUDA capability sm_(\d+) is not compatible`),
		apply: func(pp *parser, m []string, s string) {
			name := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(m[1], "UserWarning:"), "Warning:"))
			if i := strings.LastIndex(name, ": "); i >= 0 {
				name = name[i+2:]
			}
			pp.gpu(name, gpu.ArchFromSM("sm_"+m[2]), s)
		}},
	{hint: "cuda capabilit", re: regexp.MustCompile(`supports CUDA capabilities ((?:(?:sm|compute)_\d+a?\s*)+)`),
		apply: func(pp *parser, m []string, s string) {
			pp.p.ArchList = strings.Fields(m[1])
			pp.quote("torch", s)
		}},
	{hint: "cuda capability", re: regexp.MustCompile(`Found GPU\d+ (.+?) which is of cuda capability (\d+)\.(\d+)`),
		apply: func(pp *parser, m []string, s string) { pp.gpu(m[1], m[2]+"."+m[3], s) }},
	{hint: "-packages", re: regexp.MustCompile(`File "([^"]*?)[/\\](?:site|dist)-packages[/\\](torch|tensorflow|ultralytics|jax|onnxruntime)[/\\]`),
		apply: func(pp *parser, m []string, s string) {
			if pp.env.Prefix == "" {
				pp.env.Prefix = m[1]
			}
			if mm := pyInPathRE.FindStringSubmatch(m[1]); mm != nil && pp.env.Version == "" {
				pp.env.Version = mm[1] + "." + mm[2]
			}
			pp.formats["traceback"] = true
			pp.quote("python", s)
		}},
	{hint: "total capac", re: regexp.MustCompile(`\(GPU (\d+); ([\d.]+) ([GM]iB) total capacity`),
		apply: func(pp *parser, m []string, s string) { pp.oom(m[1], m[2], m[3], s) }},
	{hint: "total capac", re: regexp.MustCompile(`GPU (\d+) has a total capac[a-z]*ty of ([\d.]+) ([GM]iB)`),
		apply: func(pp *parser, m []string, s string) { pp.oom(m[1], m[2], m[3], s) }},
	{hint: "cuda", re: regexp.MustCompile(`(?i)\bcuda(?:\s+toolkit)?(?:\s+version)?\s*[:=]?\s*v?(\d{1,2}\.\d)\b`),
		apply: func(pp *parser, m []string, s string) { pp.prose("cuda", m[1]) }},
	{hint: "libcudart.so.", re: regexp.MustCompile(`libcudart\.so\.(\d+\.\d+)\.\d+`),
		apply: func(pp *parser, m []string, s string) { pp.prose("cuda", m[1]) }},
	{hint: "cudnn", re: regexp.MustCompile(`(?i)\bcudnn(?:\s+version)?\s*[:=]?\s*v?(\d\.\d+(?:\.\d+)?)\b`),
		apply: func(pp *parser, m []string, s string) { pp.prose("cudnn", m[1]) }},
	{hint: "driver", re: regexp.MustCompile(`(?i)\b(?:nvidia\s+)?driver(?:\s+version)?\s*[:=]?\s*v?(\d{3}\.\d{1,3}(?:\.\d+)?)\b`),
		apply: func(pp *parser, m []string, s string) {
			pp.prose("driver", m[1])
			if pp.f.NVML.DriverVersion == "" {
				pp.f.NVML.DriverVersion = m[1]
				pp.quote("driver", s)
			}
		}},
	// A GPU model named in prose: the consumer series (RTX 3090, gtx1080ti,
	// 940MX), the workstation ones (RTX A6000, RTX 6000 Ada, Quadro
	// M4000) and the data-centre ones (Tesla K40m, T4, A10G, L40S, H100).
	// Every match names a model (an "NVIDIA" or "GeForce" before it is
	// optional), so the models' parts are the cheap test: "nvidia" alone
	// would send every line of a log to the pattern.
	{anyOf: []string{"rtx", "gtx", "gt", "mx", "titan", "quadro", "tesla", "k10", "k20", "k40", "k80", "m40", "m60", "p4", "p100", "v100", "t4",
		"a10", "a16", "a30", "a40", "a800", "h20", "h100", "h800", "b100", "b200", "b300", "l4", "l20", "0ti", "0 ti"},
		re: proseGPURE, apply: func(pp *parser, m []string, s string) { pp.gpuInProse(tiName(m[1]), s) }},
	// The 50 series in Chinese, Japanese and Korean (50系显卡, 50シリーズ):
	// Blackwell cards, whatever the model.
	{anyOf: []string{"50系", "50シリーズ", "50 시리즈", "50시리즈"},
		re: series50RE, apply: func(pp *parser, m []string, s string) { pp.gpuInProse("RTX 50 series", s) }},
}

var (
	oneLinerRE      = regexp.MustCompile(`\bpython[0-9.]*(?:\.exe)? -c ['"]?[^\n]*\bprint\(`)
	printRE         = regexp.MustCompile(`print\(((?:[^()]|\([^()]*\))*)\)`)
	linuxSMIRE      = regexp.MustCompile(`^\d{3}\.\d{2,3}\.\d{2}$`)
	windowsDriverRE = regexp.MustCompile(`^\d{3}\.\d{2}$`)
	series50RE      = regexp.MustCompile(`(?i)(?:^|[^0-9])50\s?(?:系|シリーズ|시리즈)`)
	ceGPULineRE     = regexp.MustCompile(`^GPU (\d+):\s*(.+?)(?:\s*\(UUID: ([^)]+)\))?\s*$`)
	pyInPathRE      = regexp.MustCompile(`(?i)python(\d)\.?(\d{1,2})`)
	replQueryRE     = regexp.MustCompile(`^(?:print\()?(torch\.__version__|torch\.version\.cuda|torch\.cuda\.is_available\(\)|tf\.__version__|jax\.devices\(\)|tf\.config\.list_physical_devices\(['"]GPU['"]\))\)?\s*$`)
	replValueRE     = regexp.MustCompile(`^'?([0-9][0-9A-Za-z.+]*|True|False|None|\[\])'?\s*$`)
	windowsRE       = regexp.MustCompile(`\b[A-Za-z]:\\(?:Users|Program Files|ProgramData|Windows|Python\d*|Anaconda\d?|ProgramFiles|tools|miniconda\d?)\\`)
	cudnnFileRE     = regexp.MustCompile(`(?:libcudnn[a-z_]*\.so\.(\d+(?:\.\d+)*)|cudnn64_(\d+)\.dll)`)
	smiqKeyRE       = regexp.MustCompile(`^([A-Za-z][A-Za-z .()/-]*?)\s+:\s*(.*)$`)
	smiqSection     = regexp.MustCompile(`^(FB Memory Usage|MIG Mode|Processes|Utilization)\s*$`)
	knownGPURE      = regexp.MustCompile(`(?i)^(?:(?:nvidia|geforce|quadro|tesla|titan)\b|(?:rtx|gtx|gt|mx)\s?\d|rtx\s+(?:pro\s+)?a?\d|\d{3,4}mx\b|[ahlbtvkp]\d{1,4}[a-z]?\b)`)
	proseGPURE      = regexp.MustCompile(`(?i)\b((?:nvidia\s+)?(?:geforce\s+)?(?:rtx\s?50(?:xx|\d0)?\s?series|rtx\s?50xx|rtx\s+(?:pro\s+)?a?\d{4}\s+(?:ada|blackwell)|rtx\s+(?:pro\s+)?a\d{4}|(?:rtx|gtx|gt|mx)\s?-?\d{3,4}(?:\s?(?:ti|super|max-q|laptop(?:\s+gpu)?|mobile|m|d)\b)*|[1-5]0[5-9]0\s?ti|[2-5]0[5-9]0\s?rtx|\d{3,4}mx|titan\s+(?:rtx|xp|x|v|z|black)|quadro\s+(?:rtx\s+)?[kmptg]?\d{3,4}|(?:tesla\s+)?(?:k(?:10|20x?|40[cm]?|80)|m(?:40|60)|p(?:4|40|100)|v100|t4|a(?:10g?|16|30|40|100|800)|h(?:20|100|200|800)|b(?:100|200|300)|l(?:4|20|40s?)|gh200|gb200)|tesla\s+m(?:4|6|10)))\b`)
)

func validVersion(s string) bool {
	_, ok := gpu.ParseVersion(s)
	return ok
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// colabWorked: a lower-cased line says the program works, or worked, on
// Colab ("with google colab I could use it", "it runs fine on Colab"):
// the run that fails is elsewhere. Words read around the literals, not a
// pattern tried at every byte of every line that names Colab.
func colabWorked(low string) bool {
	for _, p := range []string{"i could use", "i could run", "i can use", "i can run", "we could use", "we could run", "we can use", "we can run", "was able to use", "was able to run", "were able to use", "were able to run"} {
		if strings.Contains(low, p) {
			return true
		}
	}
	if strings.Contains(low, "collab") {
		low = strings.ReplaceAll(low, "collab", "colab")
	}
	return gpu.AnyAt(low, "colab", func(i int) bool {
		before := strings.TrimSuffix(low[max(0, i-40):i], "google ")
		for _, prep := range []string{" on ", " in ", " with "} {
			if !strings.HasSuffix(before, prep) {
				continue
			}
			head := strings.TrimSuffix(before, prep)
			for _, adv := range []string{" fine", " well", " perfectly"} {
				head = strings.TrimSuffix(head, adv)
			}
			for _, v := range []string{" works", " work", " worked", " runs", " ran"} {
				if strings.HasSuffix(head, v) {
					return true
				}
			}
		}
		return false
	})
}

// colab notes a Google Colab notebook, unless the line says the program
// works there.
func (pp *parser) colab(m []string, s string) {
	if colabWorked(pp.low) {
		pp.prose("hosted_worked", strings.TrimSpace(s))
		return
	}
	if pp.f.Host.Container == "" {
		pp.f.Host.Container = "colab"
	}
	pp.quote("os", s)
}

// osLine reads collect_env's "OS:" line.
func (pp *parser) osLine(m []string, s string) {
	name := m[1]
	pp.f.Host.DistroName = name
	switch low := strings.ToLower(name); {
	case strings.Contains(low, "windows"):
		pp.f.Host.OS = "windows"
	case strings.Contains(low, "macos") || strings.Contains(low, "mac os"):
		pp.f.Host.OS = "darwin"
	default:
		if pp.f.Host.OS == "" {
			pp.f.Host.OS = "linux"
		}
		for _, d := range []string{"ubuntu", "debian", "fedora", "arch", "centos", "rocky"} {
			if strings.Contains(low, d) {
				pp.f.Host.Distro = d
			}
		}
	}
	pp.quote("os", s)
}

func (pp *parser) cudaAvailable(v bool, s string) {
	pp.p.CUDAAvailable = &v
	pp.quote("cuda_available", s)
}

// cudnnFile records a cuDNN library named in a line.
func (pp *parser) cudnnFile(s, line string) {
	m := cudnnFileRE.FindStringSubmatch(s)
	if m == nil {
		return
	}
	v := m[1]
	so := "libcudnn.so." + m[1]
	if m[2] != "" {
		v, so = m[2], "cudnn64_"+m[2]+".dll"
	}
	pp.library(gpu.Library{Name: "libcudnn", Soname: so, Path: strings.TrimSpace(s), Version: v, Origin: "report"})
	pp.quote("cudnn", line)
}

// gpuInProse records a GPU model named in prose only when no tool's
// output named one: prose is the weakest source.
// notInstalled: the words before and after a GPU package's name on its
// line name it as what the user did not install ("paddlepaddle (not
// paddlepaddle-gpu)", "instead of tensorflow-gpu", "the setup does not
// include onnxruntime-gpu", "onnxruntime-gpu is not installed").
func notInstalled(before, after string) bool {
	before = strings.TrimRight(before, " (")
	if strings.HasSuffix(before, "not") || strings.HasSuffix(before, "instead of") || strings.HasSuffix(before, "rather than") || strings.HasSuffix(before, "without") {
		return true
	}
	before = " " + before[max(0, len(before)-50):] + " "
	for _, w := range []string{" not ", "n't ", "without ", "missing ", "lacks ", "lack of ", " no "} {
		if strings.Contains(before, w) {
			return true
		}
	}
	after = after[:min(len(after), 30)]
	for _, w := range []string{" is not installed", " isn't installed", " not installed", " missing"} {
		if strings.Contains(after, w) {
			return true
		}
	}
	return false
}

// tiName names a GeForce written by its number and Ti alone ("5070ti",
// "3060 Ti", only NVIDIA's cards are called so) as its series does: the
// 10 and 16 series GTX, the later ones RTX; and one written number first
// ("5090 rtx") as RTX 5090.
func tiName(name string) string {
	n := strings.TrimSpace(name)
	low := strings.ToLower(n)
	switch {
	case strings.HasSuffix(low, "rtx") && fourDigits(strings.TrimSpace(n[:len(n)-3])):
		return "RTX " + strings.TrimSpace(n[:len(n)-3]) // "5090 rtx": the number before the series, as some write it
	case !strings.HasSuffix(low, "ti") || n[0] < '1' || n[0] > '5' || !fourDigits(strings.TrimSpace(n[:len(n)-2])):
		return name
	case n[0] == '1':
		return "GTX " + strings.TrimSpace(n[:len(n)-2]) + " Ti"
	}
	return "RTX " + strings.TrimSpace(n[:len(n)-2]) + " Ti"
}

// fourDigits: s is a model number of four digits.
func fourDigits(s string) bool { return len(s) == 4 && strings.Trim(s, "0123456789") == "" }

func (pp *parser) gpuInProse(name, s string) {
	if len(pp.f.NVML.GPUs) > 0 || !knownGPURE.MatchString(name) {
		return
	}
	if _, ok := pp.p.Prose["gpu"]; ok {
		return
	}
	pp.prose("gpu", strings.TrimSpace(name))
}

// maxQueries is how many REPL expressions in a row wait for their values
// (a script's prints, then their output: 1.12.1, False, None).
const maxQueries = 8

// replAnswer reads the value a REPL printed for the first query waiting;
// a line that is no value ends the wait for all of them.
func (pp *parser) replAnswer(s string) bool {
	if leadIn(s) {
		return true // "and I got:", a quote or a fence before the values
	}
	q := pp.queries[0]
	pp.queries = pp.queries[1:]
	if q == "?" {
		return true // the value of a print the doctor does not read
	}
	if q == "jax.devices()" || strings.HasPrefix(q, "tf.config") {
		switch {
		case strings.Contains(s, "CpuDevice") || s == "[]":
			pp.p.Devices = appendUnique(pp.p.Devices, "cpu")
		case strings.Contains(s, "Device(") || strings.Contains(s, "cuda(") || strings.Contains(s, "PhysicalDevice(name='/physical_device:GPU"):
			pp.p.Devices = appendUnique(pp.p.Devices, "gpu")
		default:
			pp.queries = nil
			return false
		}
		pp.quote("jax", q+" → "+s)
		return true
	}
	m := replValueRE.FindStringSubmatch(s)
	if m == nil {
		pp.queries = nil
		return false
	}
	switch q {
	case "torch.__version__":
		if !plausibleTorch(m[1]) {
			pp.queries = nil
			return false
		}
		pp.torch(m[1], "torch.__version__ → "+m[1])
	case "torch.version.cuda":
		pk := pp.setPackage("torch", "", "")
		if m[1] == "None" {
			pk.CPUOnly = true
		} else {
			pk.CUDA = m[1]
		}
		pk.BuildNote = "report: torch.version.cuda → " + m[1]
		pp.quote("torch", "torch.version.cuda → "+m[1])
	case "torch.cuda.is_available()":
		pp.cudaAvailable(m[1] == "True", "torch.cuda.is_available() → "+m[1])
	case "tf.__version__":
		pp.setPackage("tensorflow", m[1], "")
		pp.quote("tensorflow", "tf.__version__ → "+m[1])
	}
	return true
}

// inSection reads the lines of a multi-line block; it reports whether the
// line belonged to it.
func (pp *parser) inSection(s string) bool {
	switch pp.section {
	case "ce_gpus":
		if m := ceGPULineRE.FindStringSubmatch(s); m != nil {
			pp.gpu(m[2], "", s).UUID = m[3]
			return true
		}
	case "ce_cudnn":
		if cudnnFileRE.MatchString(s) {
			pp.cudnnFile(s, s)
			return true
		}
	case "smiq_gpu", "smiq_fb", "smiq_mig":
		return pp.smiqLine(s)
	}
	pp.section = ""
	return false
}

// smiqLine reads a line of a GPU section of `nvidia-smi -q`.
func (pp *parser) smiqLine(s string) bool {
	if pp.lastGPU < 0 || pp.lastGPU >= len(pp.f.NVML.GPUs) {
		pp.section = ""
		return false
	}
	g := &pp.f.NVML.GPUs[pp.lastGPU]
	if m := smiqSection.FindStringSubmatch(s); m != nil {
		switch m[1] {
		case "FB Memory Usage":
			pp.section = "smiq_fb"
		case "MIG Mode":
			pp.section = "smiq_mig"
		default:
			pp.section = "smiq_gpu"
		}
		return true
	}
	m := smiqKeyRE.FindStringSubmatch(s)
	if m == nil {
		// A line that is no "key : value" ends the GPU's section only
		// when it starts another report.
		if strings.HasPrefix(s, "GPU ") || strings.Contains(s, "NVSMI LOG") {
			pp.section = ""
			return false
		}
		return true
	}
	key, val := strings.TrimSpace(m[1]), strings.TrimSpace(m[2])
	mib := func() uint64 {
		n, _ := strconv.ParseUint(strings.TrimSuffix(val, " MiB"), 10, 64)
		return n
	}
	switch {
	case key == "Product Name":
		g.Name = val
		pp.quote("gpu", s)
		pp.formats["nvidia-smi-q"] = true
	case key == "GPU UUID":
		g.UUID = val
	case key == "Total" && pp.section == "smiq_fb":
		g.MemoryTotalMiB = mib()
		pp.quote("gpu_memory", s)
	case key == "Used" && pp.section == "smiq_fb":
		g.MemoryUsedMiB = mib()
	case key == "Free" && pp.section == "smiq_fb":
		g.MemoryFreeMiB = mib()
	case key == "Current" && pp.section == "smiq_mig":
		on := val == "Enabled"
		g.MIGEnabled = &on
	case key == "Driver Version" || key == "KMD Version":
		if v := strings.Fields(val); len(v) > 0 && validVersion(v[0]) {
			pp.f.NVML.DriverVersion = v[0]
		}
	}
	return true
}

func (pp *parser) oom(gpuIndex, total, unit, line string) {
	idx, _ := strconv.Atoi(gpuIndex)
	t, _ := strconv.ParseFloat(total, 64)
	mib := t
	if unit == "GiB" {
		mib = t * 1024
	}
	for i := range pp.f.NVML.GPUs {
		if pp.f.NVML.GPUs[i].Index == idx && pp.f.NVML.GPUs[i].MemoryTotalMiB == 0 {
			pp.f.NVML.GPUs[i].MemoryTotalMiB = uint64(mib)
		}
	}
	pp.quote("gpu_memory", line)
}

// pipLine records a package of `pip list` or `pip freeze`.
func (pp *parser) pipLine(name, version, line string) {
	n := gpu.NormalizeName(name)
	if !gpu.Interesting(n) {
		return
	}
	pp.formats["pip"] = true
	if n == "torch" {
		pp.pipTorch = true
		pp.torch(version, line)
		return
	}
	pk := pp.setPackage(n, version, "")
	switch n {
	case "torchvision", "torchaudio", "jaxlib", "paddlepaddle-gpu", "mmcv", "mmcv-full", "xformers":
		tagBuild(pk, line)
	case "tensorflow-cpu", "onnxruntime", "paddlepaddle", "jax":
		if n != "jax" {
			pk.CPUOnly = true
		}
	case "tensorflow":
		// Before 2.1 the plain tensorflow package was the CPU build;
		// tensorflow-gpu was the GPU one.
		if validVersion(version) && !gpu.VersionAtLeast(version, "2.1") && !gpu.VersionAtLeast(version, "1.15") {
			pk.CPUOnly, pk.BuildNote = true, `report: "`+trimQuote(line)+`": before TensorFlow 2.1 (and 1.15) the tensorflow package was the CPU build`
		}
	}
	if strings.HasPrefix(n, "cupy-cuda") {
		pk.CUDA = strings.TrimPrefix(n, "cupy-cuda")
	}
	pp.quote(strings.SplitN(n, "-", 2)[0], line)
}

var condaCUDARE = regexp.MustCompile(`cuda(\d+)\.?(\d)`)

// condaLine records a package of `conda list`, whose build string says
// CPU or CUDA.
func (pp *parser) condaLine(name, version, build, line string) {
	pp.formats["conda"] = true
	switch name {
	case "pytorch":
		pk := pp.setPackage("torch", version, "")
		switch {
		case strings.Contains(build, "cpu"):
			pk.CPUOnly, pk.CUDA = true, ""
		case condaCUDARE.MatchString(build):
			m := condaCUDARE.FindStringSubmatch(build)
			pk.CUDA, pk.CPUOnly = m[1]+"."+m[2], false
		}
		pk.BuildNote = `report (conda): "` + trimQuote(line) + `"`
		pp.quote("torch", line)
	case "pytorch-mutex", "cpuonly":
		if name == "cpuonly" || build == "cpu" || strings.Contains(line, " cpu ") {
			pk := pp.setPackage("torch", "", "")
			pk.CPUOnly, pk.CUDA, pk.BuildNote = true, "", `report (conda): "`+trimQuote(line)+`"`
			pp.quote("torch", line)
		}
	case "cudatoolkit", "cuda-toolkit", "cuda-runtime", "cuda-version", "pytorch-cuda":
		pp.quote("toolkit", line)
		pp.prose("conda_cuda", gpu.MajorMinor(version))
	case "cudnn":
		pp.library(gpu.Library{Name: "libcudnn", Soname: "cudnn " + version, Version: version, Origin: "report (conda)"})
		pp.quote("cudnn", line)
	default:
		pk := pp.setPackage(name, version, "")
		if strings.Contains(build, "cpu") {
			pk.CPUOnly = true
		} else if m := condaCUDARE.FindStringSubmatch(build); m != nil {
			pk.CUDA = m[1] + "." + m[2]
		}
		pp.quote(strings.SplitN(name, "-", 2)[0], line)
	}
}

// The words around "docker" that say the program runs with it: a
// preposition that says so alone ("using docker", "usando docker", "в
// docker"), one that needs a verb before it ("deployed it with docker"),
// and nouns right after it ("the docker deployment").
var (
	dockerAlone = []string{" using ", " usando ", " uso ", " usar ", " con ", " em ", " en ", " dentro de ", " dentro do ", " в "}
	dockerPrep  = []string{" with ", " via ", " through ", " on "}
	dockerVerbs = []string{"deploy", "running", "run ", "started", "start "}
	dockerAfter = []string{" deployment", " deploy", " setup", " install", " version"}
	dockerKeys  = []string{"deploy", "install", "method", "running", "runtime", "environment", "platform", "部署", "方式"}
)

// dockerInWords: a lower-cased line says the program runs with docker.
func dockerInWords(low string) bool {
	return gpu.AnyAt(low, "docker", func(i int) bool {
		before := " " + low[max(0, i-30):i]
		// "not using docker", "I don't run it with docker".
		if strings.Contains(before, "not ") || strings.Contains(before, "n't ") || strings.Contains(before, "never ") || strings.Contains(before, "without ") {
			return false
		}
		for _, w := range dockerAfter {
			if strings.HasPrefix(low[i+len("docker"):], w) {
				return true
			}
		}
		for _, p := range dockerAlone {
			if strings.HasSuffix(before, p) {
				return true
			}
		}
		// An issue form's answer: "Deployment: Docker", "Install
		// method: docker".
		if k := strings.TrimRight(before, " "); strings.HasSuffix(k, ":") {
			for _, w := range dockerKeys {
				if strings.Contains(k, w) {
					return true
				}
			}
		}
		for _, p := range dockerPrep {
			if !strings.HasSuffix(before, p) {
				continue
			}
			for _, v := range dockerVerbs {
				if strings.Contains(before, v) {
					return true
				}
			}
		}
		return false
	})
}

// inContainer records that the report comes from a container.
func inContainer(pp *parser, m []string, s string) {
	if pp.f.Host.Container == "" {
		pp.f.Host.Container = "container"
	}
	pp.quote("os", s)
}

// leadIn: a line between a script and what it printed that is no value:
// a quote or a code fence alone, or a short "and I got:".
func leadIn(s string) bool {
	t := strings.Trim(s, " \t\"'`")
	if t == "" {
		return true
	}
	return len(t) <= 40 && (strings.HasSuffix(t, ":") || strings.HasSuffix(t, "：")) && !strings.Contains(t, "(")
}

// plausibleTorch: a torch release is 0.x to 3.x ("12.1" after a print of
// torch.__version__ is some other value).
func plausibleTorch(v string) bool {
	return len(v) >= 3 && v[0] >= '0' && v[0] <= '3' && v[1] == '.'
}
