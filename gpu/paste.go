package gpu

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// PasteInterpreter names the Python of a pasted report, whose path is
// rarely known.
const PasteInterpreter = "the report's Python"

// Paste parsing: a report is read line by line after cleaning (CRLF,
// Markdown fences and quotes, shell and REPL prompts). Each recogniser
// fills facts it is sure of and records the line that proves them;
// anything it is not sure of stays unknown.

var (
	promptRE = regexp.MustCompile(`^(?:\([^)]{1,60}\)\s*)?(?:\$ |# |>>> ?|\.\.\. |PS [^>]{0,200}> ?|[A-Za-z]:\\[^>]{0,200}> ?|[\w.-]+@[\w.-]+:[^$#\n]{0,200}[$#] ?)`)
	quoteRE  = regexp.MustCompile(`^(?:>\s?)+`)

	ceTorchRE     = regexp.MustCompile(`^PyTorch version:\s*(\S+)`)
	ceBuiltRE     = regexp.MustCompile(`^CUDA used to build PyTorch:\s*(.+)$`)
	ceROCmRE      = regexp.MustCompile(`^ROCM used to build PyTorch:\s*(.+)$`)
	ceOSRE        = regexp.MustCompile(`^OS:\s*(.+)$`)
	cePythonRE    = regexp.MustCompile(`^Python version:\s*(\d+\.\d+)`)
	cePlatformRE  = regexp.MustCompile(`^Python platform:\s*(.+)$`)
	ceAvailRE     = regexp.MustCompile(`^Is CUDA available:\s*(True|False|Yes|No)`)
	ceRuntimeRE   = regexp.MustCompile(`^CUDA runtime version:\s*(\d+\.\d+(?:\.\d+)?)`)
	ceGPUsRE      = regexp.MustCompile(`^GPU models and configuration:\s*(.*)$`)
	ceGPULineRE   = regexp.MustCompile(`^GPU (\d+):\s*(.+?)(?:\s*\(UUID: ([^)]+)\))?\s*$`)
	ceDriverRE    = regexp.MustCompile(`^Nvidia driver version:\s*(\d+\.\d+(?:\.\d+)?)`)
	pipFreezeRE   = regexp.MustCompile(`^(?:\[(?:pip3?|conda)\]\s+)?([A-Za-z][A-Za-z0-9_.-]*)==(\S+)\s*$`)
	pipListRE     = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_.-]*)\s+(\d+\.\d+[0-9A-Za-z.+-]*)\s*$`)
	condaListRE   = regexp.MustCompile(`^(?:\[conda\]\s+)?(pytorch|torchvision|pytorch-cuda|pytorch-mutex|cudatoolkit|cudnn|tensorflow(?:-gpu)?)\s+(\d[0-9A-Za-z.+-]*)\s+(\S+)(?:\s+(\S+))*\s*$`)
	smiHeaderRE   = regexp.MustCompile(`NVIDIA-SMI\s+(\S+)\s+Driver Version:\s*(\S+)(?:\s+CUDA Version:\s*(\S+))?`)
	smiGPURE      = regexp.MustCompile(`^\|\s+(\d+)\s+(.+?)\s+(On|Off|WDDM|TCC)\s*\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)`)
	smiMemRE      = regexp.MustCompile(`(\d+)MiB\s*/\s*(\d+)MiB\s*\|\s*(\d+)%`)
	smiProcRE     = regexp.MustCompile(`^\|\s+(\d+)\s+(?:(?:N/A|\d+)\s+(?:N/A|\d+)\s+)?(\d+)\s+(C|G|C\+G|M)\s+(.+?)\s+(\d+)MiB\s*\|`)
	smiListRE     = regexp.MustCompile(`^GPU (\d+):\s*(.+?)\s*\(UUID:\s*(GPU-[0-9a-fA-F-]+)\)`)
	nvccRE        = regexp.MustCompile(`Cuda compilation tools, release (\d+\.\d+)(?:, V(\S+))?`)
	bannerRE      = regexp.MustCompile(`Python-(\d+\.\d+(?:\.\d+)?)\s+torch-(\S+)(?:\s+(CUDA:(\d+)\s*\(([^,()]+(?:\([^)]*\))?[^,()]*),\s*(\d+)\s*MiB\)|CPU|MPS))?`)
	yoloAvailRE   = regexp.MustCompile(`torch\.cuda\.is_available\(\):\s*(True|False)`)
	yoloCountRE   = regexp.MustCompile(`torch\.cuda\.device_count\(\):\s*(\d+)`)
	yoloCVDRE     = regexp.MustCompile(`os\.environ\['CUDA_VISIBLE_DEVICES'\]:\s*(.*)$`)
	torchVerRE    = regexp.MustCompile(`\btorch(?:\s*==\s*|\s*[:=-]\s*|\s+)v?(\d+\.\d+(?:\.\d+)?(?:(?:a|b|rc|\.dev|\.post)\d+)?(?:\+[A-Za-z0-9.]+)?)\b`)
	tfVerRE       = regexp.MustCompile(`\btensorflow(?:-gpu|-cpu)?(?:\s*==\s*|\s*[:=-]\s*|\s+)v?(\d+\.\d+\.\d+)\b`)
	foundVerRE    = regexp.MustCompile(`too old \(found version (\d+)\)`)
	archWarnRE    = regexp.MustCompile(`(\S.*?) with CUDA capability sm_(\d+) is not compatible`)
	archListRE    = regexp.MustCompile(`supports CUDA capabilities ((?:(?:sm|compute)_\d+a?\s*)+)`)
	tfDeviceRE    = regexp.MustCompile(`name:\s*(.+?),\s*pci bus id:\s*([0-9a-fA-F:.]+),\s*compute capability:\s*(\d+\.\d+)`)
	tfFoundRE     = regexp.MustCompile(`name:\s*(.+?)\s+computeCapability:\s*(\d+\.\d+)`)
	nvrmRE        = regexp.MustCompile(`NVRM version:.*Kernel Module\s+(\d+\.\d+(?:\.\d+)?)`)
	sitePkgRE     = regexp.MustCompile(`File "([^"]*?)[/\\](?:site|dist)-packages[/\\](torch|tensorflow|ultralytics)[/\\]`)
	pyInPathRE    = regexp.MustCompile(`(?i)python(\d)\.?(\d{1,2})`)
	oomRE         = regexp.MustCompile(`\(GPU (\d+); ([\d.]+) ([GM]iB) total capacity; ([\d.]+) ([GM]iB) already allocated`)
	oomNewRE      = regexp.MustCompile(`GPU (\d+) has a total capac[a-z]*ty of ([\d.]+) ([GM]iB) of which ([\d.]+) ([GM]iB) is free`)
	windowsPathRE = regexp.MustCompile(`\b[A-Za-z]:\\(?:Users|Program Files|ProgramData|Windows)\\`)
	dkmsRE        = regexp.MustCompile(`^nvidia/(\d+\.\d+(?:\.\d+)?),\s*\S+,\s*\S+:\s*installed`)
	replQueryRE   = regexp.MustCompile(`^(?:print\()?(torch\.__version__|torch\.version\.cuda|torch\.cuda\.is_available\(\)|tf\.__version__)\)?\s*$`)
	replValueRE   = regexp.MustCompile(`^'?([0-9][0-9A-Za-z.+]*|True|False|None)'?\s*$`)
)

// maxLine is how much of one line the line recognisers read.
const maxLine = 4096

// condaStart is a cheap test before the conda list regexp.
func condaStart(s string) bool {
	for _, p := range []string{"[conda]", "pytorch", "torchvision", "cudatoolkit", "cudnn", "tensorflow"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// pasteParser holds the state of one ParsePaste call.
type pasteParser struct {
	f       *Facts
	p       *PasteFacts
	env     *PythonEnv
	inGPUs  bool   // inside collect_env's multi-line GPU list
	lastGPU int    // index in f.NVML.GPUs of the last nvidia-smi GPU row, or -1
	query   string // the REPL expression whose value the next line holds
	formats map[string]bool
}

// ParsePaste reads whatever of the known reports a text holds (collect_env,
// nvidia-smi, nvcc --version, Ultralytics/YOLOv5 output, TensorFlow logs,
// tracebacks, pip and conda lists, REPL sessions), mixed with prose, in any
// order, into partial Facts. It never fails and never guesses.
func ParsePaste(text string, now time.Time) *Facts {
	f := &Facts{Schema: FactsSchema, CollectedAt: now.UTC(), Origin: "paste", Pythons: []PythonEnv{}}
	pp := &pasteParser{f: f, p: &PasteFacts{Quotes: map[string][]string{}}, lastGPU: -1, formats: map[string]bool{}}
	pp.env = &PythonEnv{Interpreter: PasteInterpreter, Kind: "paste", FoundVia: []string{"pasted report"}}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.Split(text, "\n")
	pp.p.Lines = len(lines)
	for _, raw := range lines {
		pp.line(raw)
	}
	// Error signatures are searched in the whole text: messages wrap.
	pp.p.Signatures = ClassifyText(text)
	for _, lib := range ParseLdconfig(text) {
		lib.Origin = "report (ldconfig -p)"
		f.CUDA.Libraries = append(f.CUDA.Libraries, lib)
		pp.formats["ldconfig"] = true
	}
	pp.finish()
	return f
}

func (pp *pasteParser) quote(kind, line string) {
	line = strings.TrimSpace(line)
	if len(line) > 240 {
		line = line[:240] + "…"
	}
	for _, q := range pp.p.Quotes[kind] {
		if q == line {
			return
		}
	}
	if len(pp.p.Quotes[kind]) < 6 {
		pp.p.Quotes[kind] = append(pp.p.Quotes[kind], line)
	}
}

// clean removes what forums and terminals add around a line.
func clean(raw string) (string, bool) {
	s := strings.TrimRight(raw, " \t")
	s = strings.TrimLeft(s, " \t")
	if strings.HasPrefix(s, ">") {
		s = quoteRE.ReplaceAllString(s, "")
	}
	if strings.HasPrefix(s, "```") || strings.HasPrefix(s, "~~~") {
		return "", false
	}
	if mayHavePrompt(s) {
		s = promptRE.ReplaceAllString(s, "")
	}
	return strings.TrimSpace(s), s != ""
}

// mayHavePrompt is a cheap test before the prompt regexp.
func mayHavePrompt(s string) bool {
	if s == "" {
		return false
	}
	switch s[0] {
	case '$', '#', '>', '.', '(', 'P':
		return true
	}
	if len(s) > 2 && s[1] == ':' {
		return true
	}
	head := s[:min(len(s), 120)]
	return strings.Contains(head, "@") && strings.Contains(head, ":")
}

// setPackage records a package the report names. The same package with
// another version is another install (a second environment in the report):
// it is kept, marked shadowed, and the first one seen stays the one judged.
func (pp *pasteParser) setPackage(name, version, line, note string) *Package {
	name = NormalizeName(name)
	for i := range pp.env.Packages {
		pk := &pp.env.Packages[i]
		if pk.Name != name {
			continue
		}
		same := version == "" || pk.Version == "" || pk.Version == version ||
			strings.SplitN(pk.Version, "+", 2)[0] == strings.SplitN(version, "+", 2)[0]
		if !same {
			if pk.Shadowed {
				continue
			}
			for k := range pp.env.Packages {
				if o := &pp.env.Packages[k]; o.Name == name && o.Shadowed && o.Version == version {
					return o
				}
			}
			pp.env.Packages = append(pp.env.Packages, Package{Name: name, Version: version, Location: "the report (another install)", Shadowed: true})
			return &pp.env.Packages[len(pp.env.Packages)-1]
		}
		// A version with a build tag says more than one without.
		if LocalTag(version) != "" || pk.Version == "" {
			pk.Version = version
		}
		return pk
	}
	pp.env.Packages = append(pp.env.Packages, Package{Name: name, Version: version, Location: "the report", BuildNote: note})
	return &pp.env.Packages[len(pp.env.Packages)-1]
}

func (pp *pasteParser) torch(version, line string) {
	pk := pp.setPackage("torch", version, line, "")
	switch tag := LocalTag(pk.Version); {
	case tag == "cpu":
		pk.CPUOnly, pk.CUDA = true, ""
		pk.BuildNote = `report: "` + trimQuote(line) + `"`
	case VariantCUDA(tag) != "":
		pk.CUDA, pk.CPUOnly = VariantCUDA(tag), false
		pk.BuildNote = `report: "` + trimQuote(line) + `"`
	case strings.HasPrefix(tag, "rocm"):
		pk.ROCm = strings.TrimPrefix(tag, "rocm")
	}
	pp.quote("torch", line)
}

func trimQuote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

func (pp *pasteParser) gpu(name, cc, line string) *GPU {
	name = strings.TrimSpace(name)
	for i := range pp.f.NVML.GPUs {
		g := &pp.f.NVML.GPUs[i]
		if g.Name == name || strings.HasSuffix(name, g.Name) || strings.HasSuffix(g.Name, name) ||
			(strings.HasSuffix(g.Name, "...") && strings.HasPrefix(name, strings.TrimSuffix(g.Name, "..."))) {
			if len(name) > len(g.Name) && !strings.HasSuffix(name, "...") {
				g.Name = name
			}
			if g.CC == "" {
				g.CC = cc
			}
			pp.quote("gpu", line)
			return g
		}
	}
	pp.f.NVML.GPUs = append(pp.f.NVML.GPUs, GPU{Index: len(pp.f.NVML.GPUs), Name: name, CC: cc})
	pp.quote("gpu", line)
	return &pp.f.NVML.GPUs[len(pp.f.NVML.GPUs)-1]
}

func (pp *pasteParser) line(raw string) {
	if strings.Contains(raw, ":\\") && windowsPathRE.MatchString(raw) {
		pp.f.Host.OS = "windows"
	}
	if len(raw) > maxLine {
		raw = raw[:maxLine] // line recognisers need no more; signatures see the whole text
	}
	s, ok := clean(raw)
	if !ok {
		pp.inGPUs = false
		return
	}
	f, p := pp.f, pp.p
	// A REPL answer: the line after `>>> torch.__version__`.
	if pp.query != "" {
		q := pp.query
		pp.query = ""
		if m := replValueRE.FindStringSubmatch(s); m != nil {
			switch q {
			case "torch.__version__":
				pp.torch(m[1], "torch.__version__ → "+m[1])
			case "torch.version.cuda":
				pk := pp.setPackage("torch", "", s, "")
				if m[1] == "None" {
					pk.CPUOnly = true
				} else {
					pk.CUDA = m[1]
				}
				pk.BuildNote = "report: torch.version.cuda → " + m[1]
				pp.quote("torch", "torch.version.cuda → "+m[1])
			case "torch.cuda.is_available()":
				v := m[1] == "True"
				p.CUDAAvailable = &v
				pp.quote("cuda_available", "torch.cuda.is_available() → "+m[1])
			case "tf.__version__":
				pp.setPackage("tensorflow", m[1], s, "")
				pp.quote("tensorflow", "tf.__version__ → "+m[1])
			}
			return
		}
	}
	if m := replQueryRE.FindStringSubmatch(s); m != nil {
		pp.query = m[1]
		return
	}
	if pp.inGPUs {
		if m := ceGPULineRE.FindStringSubmatch(s); m != nil {
			g := pp.gpu(m[2], "", s)
			g.UUID = m[3]
			return
		}
		pp.inGPUs = false
	}
	if strings.Contains(s, "Microsoft Windows") {
		f.Host.OS = "windows"
	}
	if strings.Contains(s, "microsoft-standard-WSL2") || strings.Contains(s, "/usr/lib/wsl/") {
		f.Host.OS, f.Host.WSL = "linux", 2
		pp.quote("os", s)
	}
	has := func(sub string) bool { return strings.Contains(s, sub) }
	ce := strings.Contains(s, ": ") || strings.HasSuffix(s, ":")
	pipe := strings.HasPrefix(s, "|")
	var m []string
	match := func(re *regexp.Regexp) bool { m = re.FindStringSubmatch(s); return m != nil }
	switch {
	case !ce && !pipe && !has("NVIDIA-SMI") && !has("release") && !has("NVRM") && !strings.HasPrefix(s, "nvidia/"):
		// none of the line formats below
	case match(ceTorchRE):
		pp.formats["collect_env"] = true
		pp.torch(m[1], s)
	case match(ceBuiltRE):
		v := strings.TrimSpace(m[1])
		pk := pp.setPackage("torch", "", s, "")
		if _, ok := ParseVersion(v); ok {
			pk.CUDA, pk.CPUOnly = MajorMinor(v), false
		} else if v == "None" || v == "Could not collect" {
			pk.CPUOnly = pk.ROCm == ""
		}
		pk.BuildNote = `report: "` + s + `"`
		pp.quote("torch", s)
	case match(ceROCmRE):
		v := strings.TrimSpace(m[1])
		if _, ok := ParseVersion(v); ok {
			pk := pp.setPackage("torch", "", s, "")
			pk.ROCm, pk.CPUOnly = v, false
		}
	case match(ceOSRE):
		os := m[1]
		f.Host.DistroName = os
		switch low := strings.ToLower(os); {
		case strings.Contains(low, "windows"):
			f.Host.OS = "windows"
		case strings.Contains(low, "macos") || strings.Contains(low, "mac os"):
			f.Host.OS = "darwin"
		default:
			if f.Host.OS == "" {
				f.Host.OS = "linux"
			}
			for _, d := range []string{"ubuntu", "debian", "fedora", "arch", "centos", "rocky"} {
				if strings.Contains(low, d) {
					f.Host.Distro = d
				}
			}
		}
		pp.quote("os", s)
	case match(cePythonRE):
		pp.env.Version = m[1]
	case match(cePlatformRE):
		pp.quote("os", s)
	case match(ceAvailRE):
		v := m[1]
		b := v == "True" || v == "Yes"
		p.CUDAAvailable = &b
		pp.quote("cuda_available", s)
	case match(ceRuntimeRE):
		f.CUDA.Toolkits = append(f.CUDA.Toolkits, Toolkit{Path: "nvcc (report)", Version: m[1]})
		pp.quote("toolkit", s)
	case match(ceGPUsRE):
		rest := strings.TrimSpace(m[1])
		if g := ceGPULineRE.FindStringSubmatch(rest); g != nil {
			pp.gpu(g[2], "", s)
		} else if rest == "" {
			pp.inGPUs = true
		}
	case match(ceDriverRE):
		f.NVML.DriverVersion = m[1]
		pp.quote("driver", s)
	case match(smiHeaderRE):
		pp.formats["nvidia-smi"] = true
		f.NVML.Status, f.NVML.DriverVersion = NVMLOK, m[2]
		if _, ok := ParseVersion(m[3]); ok {
			f.NVML.CUDADriverVersion = m[3]
		}
		pp.quote("driver", s)
	case match(smiGPURE):
		g := pp.gpu(m[2], "", s)
		g.PCIBusID = m[4]
		pp.lastGPU = g.Index
	case match(smiMemRE) && strings.HasPrefix(s, "|") && pp.lastGPU >= 0:
		g := &f.NVML.GPUs[pp.lastGPU]
		used, _ := strconv.ParseUint(m[1], 10, 64)
		total, _ := strconv.ParseUint(m[2], 10, 64)
		util, _ := strconv.Atoi(m[3])
		if total >= used {
			g.MemoryUsedMiB, g.MemoryTotalMiB, g.MemoryFreeMiB = used, total, total-used
		}
		g.UtilizationPct = &util
		pp.quote("gpu_memory", s)
		pp.lastGPU = -1
	case match(smiProcRE):
		idx, _ := strconv.Atoi(m[1])
		pid, _ := strconv.ParseUint(m[2], 10, 32)
		mib, _ := strconv.ParseUint(m[5], 10, 64)
		for i := range f.NVML.GPUs {
			if f.NVML.GPUs[i].Index == idx && m[3] != "G" {
				f.NVML.GPUs[i].Processes = append(f.NVML.GPUs[i].Processes, Process{PID: uint32(pid), Name: m[4], UsedMiB: mib})
				pp.quote("gpu_memory", s)
			}
		}
	case match(smiListRE):
		g := pp.gpu(m[2], "", s)
		g.UUID = m[3]
	case match(nvccRE):
		v := m[1]
		if m[2] != "" {
			v = m[2]
		}
		f.CUDA.Toolkits = append(f.CUDA.Toolkits, Toolkit{Path: "nvcc (report)", Version: v})
		pp.formats["nvcc"] = true
		pp.quote("toolkit", s)
	case match(nvrmRE):
		f.Driver.ModuleVersion = m[1]
		f.Driver.ProcVersion = s
		pp.quote("driver", s)
	case match(dkmsRE):
		pp.quote("driver", s)
	}
	// Recognisers that may share a line with the ones above.
	if !has("torch") && !has("==") && !has("tensorflow") && !has("CUDA") && !has("-packages") &&
		!has("name:") && !has("MiB") && !has("GiB") && !has("nouveau") && !has("dso_loader") &&
		!has("too old") && !condaStart(s) && len(strings.Fields(s)) != 2 {
		return
	}
	if has("Python-") && match(bannerRE) {
		pp.formats["ultralytics"] = true
		pp.env.Version = MajorMinor(m[1])
		pp.torch(m[2], s)
		switch {
		case m[4] != "":
			mib, _ := strconv.ParseUint(m[6], 10, 64)
			g := pp.gpu(m[5], "", s)
			if g.MemoryTotalMiB == 0 {
				g.MemoryTotalMiB = mib
			}
			p.DeviceUsed = "cuda:" + m[4]
		case m[3] != "":
			p.DeviceUsed = strings.ToLower(m[3])
		}
		pp.quote("device", s)
	} else if match(torchVerRE) && !strings.Contains(s, "torchvision") && !ceTorchRE.MatchString(s) {
		pp.torch(m[1], s)
	}
	if m := pipFreezeRE.FindStringSubmatch(s); m != nil {
		pp.pipLine(m[1], m[2], s)
	} else if m := pipListRE.FindStringSubmatch(s); m != nil {
		pp.pipLine(m[1], m[2], s)
	}
	if m := condaListRE.FindStringSubmatch(s); m != nil {
		pp.condaLine(m[1], m[2], m[3], s)
	}
	if m := tfVerRE.FindStringSubmatch(s); m != nil {
		pp.setPackage("tensorflow", m[1], s, "")
		pp.quote("tensorflow", s)
	}
	if m := yoloAvailRE.FindStringSubmatch(s); m != nil {
		b := m[1] == "True"
		p.CUDAAvailable = &b
		pp.quote("cuda_available", s)
	}
	if yoloCountRE.MatchString(s) {
		pp.quote("cuda_available", s)
	}
	if m := yoloCVDRE.FindStringSubmatch(s); m != nil {
		v := strings.TrimSpace(m[1])
		if v != "None" {
			f.Env = append(f.Env, EnvVar{Name: "CUDA_VISIBLE_DEVICES", Value: v, Set: true})
		}
		pp.quote("env", s)
	}
	if m := foundVerRE.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		if c := CUDAFromInt(n); c != "" && f.NVML.CUDADriverVersion == "" {
			f.NVML.CUDADriverVersion = c
		}
		pp.quote("driver", s)
	}
	if m := archWarnRE.FindStringSubmatch(s); m != nil {
		name := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(m[1], "UserWarning:"), "Warning:"))
		if i := strings.LastIndex(name, ": "); i >= 0 {
			name = name[i+2:]
		}
		pp.gpu(name, ArchFromSM("sm_"+m[2]), s)
	}
	if m := archListRE.FindStringSubmatch(s); m != nil {
		p.ArchList = strings.Fields(m[1])
		pp.quote("torch", s)
	}
	if m := tfDeviceRE.FindStringSubmatch(s); m != nil {
		g := pp.gpu(m[1], m[3], s)
		g.PCIBusID = m[2]
	} else if m := tfFoundRE.FindStringSubmatch(s); m != nil {
		pp.gpu(m[1], m[2], s)
	}
	if m := sitePkgRE.FindStringSubmatch(s); m != nil {
		if pp.env.Interpreter == PasteInterpreter {
			pp.env.Prefix = m[1]
		}
		if mm := pyInPathRE.FindStringSubmatch(m[1]); mm != nil && pp.env.Version == "" {
			pp.env.Version = mm[1] + "." + mm[2]
		}
		pp.formats["traceback"] = true
		pp.quote("python", s)
	}
	if m := oomRE.FindStringSubmatch(s); m != nil {
		pp.oom(m[1], m[2], m[3], s)
	} else if m := oomNewRE.FindStringSubmatch(s); m != nil {
		pp.oom(m[1], m[2], m[3], s)
	}
	if strings.Contains(s, "nouveau") && !strings.Contains(strings.ToLower(s), "blacklist") {
		f.Driver.Modules = appendUnique(f.Driver.Modules, "nouveau")
		pp.quote("driver", s)
	}
	if strings.Contains(s, "tensorflow/") || strings.Contains(s, "dso_loader.cc") {
		pp.formats["tensorflow"] = true
	}
}

func appendUnique(list []string, s string) []string {
	if contains(list, s) {
		return list
	}
	return append(list, s)
}

func (pp *pasteParser) oom(gpu, total, unit, line string) {
	idx, _ := strconv.Atoi(gpu)
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

func (pp *pasteParser) pipLine(name, version, line string) {
	n := NormalizeName(name)
	if !interesting(n) {
		return
	}
	pp.formats["pip"] = true
	if n == "torch" {
		pp.torch(version, line)
		return
	}
	pk := pp.setPackage(n, version, line, "")
	if n == "torchvision" {
		switch tag := LocalTag(version); {
		case tag == "cpu":
			pk.CPUOnly = true
		case VariantCUDA(tag) != "":
			pk.CUDA = VariantCUDA(tag)
		}
	}
	if n == "tensorflow-cpu" {
		pk.CPUOnly = true
	}
	pp.quote(strings.SplitN(n, "-", 2)[0], line)
}

var condaCUDARE = regexp.MustCompile(`cuda(\d+)\.?(\d)`)

func (pp *pasteParser) condaLine(name, version, build, line string) {
	pp.formats["conda"] = true
	switch name {
	case "pytorch":
		pk := pp.setPackage("torch", version, line, "")
		switch {
		case strings.Contains(build, "cpu"):
			pk.CPUOnly, pk.CUDA = true, ""
		case condaCUDARE.MatchString(build):
			m := condaCUDARE.FindStringSubmatch(build)
			pk.CUDA, pk.CPUOnly = m[1]+"."+m[2], false
		}
		pk.BuildNote = `report (conda): "` + trimQuote(line) + `"`
		pp.quote("torch", line)
	case "pytorch-mutex":
		if build == "cpu" || strings.Contains(line, " cpu ") {
			pk := pp.setPackage("torch", "", line, "")
			pk.CPUOnly, pk.BuildNote = true, `report (conda): "`+trimQuote(line)+`"`
			pp.quote("torch", line)
		}
	}
}

// finish turns what the lines said into facts the rules read.
func (pp *pasteParser) finish() {
	f, p := pp.f, pp.p
	for i := range pp.env.Packages {
		pk := &pp.env.Packages[i]
		switch {
		case pk.Name != "torch":
		case pk.Version == "":
			// A torch seen only as "CUDA used to build PyTorch" has no version.
			pk.Version = "(version not shown)"
		case f.Host.OS == "windows" && pk.CUDA == "" && !pk.CPUOnly && pk.ROCm == "" && LocalTag(pk.Version) == "":
			// On Windows, a torch from PyPI (no +cuXXX tag) is CPU-only.
			pk.CPUOnly = true
			pk.BuildNote = "report: torch " + pk.Version + " with no +cuXXX tag on Windows: PyPI's Windows wheels are CPU-only"
		}
	}
	if len(pp.env.Packages) > 0 || pp.env.Version != "" {
		f.Pythons = append(f.Pythons, *pp.env)
	}
	if f.NVML.Status == "" && (f.NVML.DriverVersion != "" || f.NVML.CUDADriverVersion != "") && len(f.NVML.GPUs) > 0 {
		f.NVML.Status = NVMLOK
	}
	if f.NVML.GPUs == nil {
		f.NVML.GPUs = []GPU{}
	}
	if f.Host.OS == "" && (f.Host.Distro != "" || strings.Contains(strings.Join(p.Quotes["python"], " "), "/")) {
		f.Host.OS = "linux"
	}
	for k := range pp.formats {
		p.Formats = append(p.Formats, k)
	}
	sort.Strings(p.Formats)
	f.Paste = p
}
