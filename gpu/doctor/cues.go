package doctor

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gpuwizard/gpu"
	"gpuwizard/gpu/catalog"
	"gpuwizard/gpu/compat"
)

// A cue is one thing a report says, as facts or in words, and how much it
// speaks for a cause: log-odds, 1 a hint, 3 close to proof. Where the
// matrix decides (a GPU's architecture against a framework's builds, a
// driver against a CUDA), the cue comes from the matrix, not from words.
type cue struct {
	cause   gpu.Cause
	weight  float64
	because string // what in the report says so, for the finding's evidence
}

// reading is a report's text as the cues read it: lower-cased, its first
// maxCueText bytes (prose comes first; a long log adds nothing here).
type reading struct {
	low    string
	f      *gpu.Facts
	quotes map[*catalog.Pattern]match // each pattern's first match: the differential weighs the cues more than once
}

// match is a pattern's first match in a reading: the report's line around
// it, for evidence, and the values of its groups (nil when none matched).
type match struct {
	line   string
	groups []string
}

const maxCueText = 64 << 10

// reading is the report's text as the cues read it, made once.
func (j *judge) reading() *reading {
	if j.rd == nil {
		j.rd = newReading(j.f)
	}
	return j.rd
}

func newReading(f *gpu.Facts) *reading {
	t := f.Paste.Text
	if len(t) > maxCueText {
		t = t[:maxCueText]
	}
	low := asciiLower(t) // offsets stay those of the text, for quotes
	for _, b := range boilerplate {
		low = strings.ReplaceAll(low, b, strings.Repeat(" ", len(b)))
	}
	return &reading{low: low, f: f}
}

// asciiLower lowers ASCII letters only, so that byte offsets into the
// result are those of s (strings.ToLower may change a rune's length).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// boilerplate is what tools print whatever the cause, and which the cues
// must not read as the report's words (blanked, so offsets stay).
var boilerplate = []string{
	"e.g. changing env variable cuda_visible_devices after program start",
}

// any: the lower-cased report holds one of words.
func (r *reading) any(words ...string) bool { return containsAny(r.low, words...) }

// containsAny: s holds one of words.
func containsAny(s string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// A cue's pattern runs over the lower-cased report around its literals
// (catalog.Pattern): most reports hold none, and the regexp does not run.
// needles are given where they cannot be derived from the pattern
// (TestCueNeedles checks them on the corpus).
func mustCue(pattern string, needles ...string) *catalog.Pattern {
	return catalog.MustPattern(pattern, needles...)
}

// quote is the report's line around the first match of re, for evidence.
func (r *reading) quote(re *catalog.Pattern) string { return r.first(re).line }

// quoteGroups is quote's line and the values of re's groups in that match
// ("" for a group that matched nothing), from the same single run of re.
func (r *reading) quoteGroups(re *catalog.Pattern) (string, []string) {
	m := r.first(re)
	return m.line, m.groups
}

// first is re's first match in the reading, found once.
func (r *reading) first(re *catalog.Pattern) match {
	if m, ok := r.quotes[re]; ok {
		return m
	}
	m := r.find(re)
	if r.quotes == nil {
		r.quotes = map[*catalog.Pattern]match{}
	}
	r.quotes[re] = m
	return m
}

func (r *reading) find(re *catalog.Pattern) match {
	loc := re.FindSubmatchIndex(r.low)
	text := r.f.Paste.Text
	if loc == nil || loc[0] > len(text) {
		return match{}
	}
	m := match{line: lineAround(text, loc[0], loc[1]), groups: make([]string, len(loc)/2-1)}
	for g := range m.groups {
		if lo := loc[2*g+2]; lo >= 0 {
			m.groups[g] = r.low[lo:loc[2*g+3]]
		}
	}
	return m
}

// lineAround is the line of text around text[lo:hi], at most 100 bytes
// either side, for evidence.
func lineAround(text string, lo, hi int) string {
	start, end := lo, hi
	for start > 0 && text[start-1] != '\n' && lo-start < 100 {
		start--
	}
	for end < len(text) && text[end] != '\n' && end-hi < 100 {
		end++
	}
	return strings.ToValidUTF8(strings.TrimSpace(text[start:end]), "")
}

// said is evidence for a cue read from words.
func said(q string) string {
	if q == "" {
		return "the report's words"
	}
	return `the report says: "` + q + `"`
}

// cueRules read the cues of a report; each returns what it found. They
// are tried in this order, every one of them, and never modified.
var cueRules = []func(j *judge, r *reading) []cue{
	cueNoNVIDIAGPU,
	cueHostedRuntime,
	cueContainerOrWSL,
	cueVirtualMachine,
	cueWindowsTensorFlow,
	cueLinuxTensorFlow,
	cueTorchBuild,
	cueCUDARan,
	cueCheckedTrue,
	cueFrameworkListsGPU,
	cueGPUNotCPU,
	cueOtherFrameworks,
	cueONNXRuntimeMatrix,
	cueTwoInstalls,
	cueArchitecture,
	cueDriver,
	cueCodeAndSelection,
	cueLibraries,
}

// situation is what the report says of the machine, as the cues use it.
func (j *judge) cues(r *reading) []cue {
	var out []cue
	for _, rule := range cueRules {
		out = append(out, rule(j, r)...)
	}
	return out
}

// cueNoNVIDIAGPU: the report names only Intel, AMD or Apple graphics, or
// says it has no NVIDIA GPU, or runs on a Mac: CUDA cannot run at all.
func cueNoNVIDIAGPU(j *judge, r *reading) []cue {
	p := j.f.Paste
	if len(j.f.NVML.GPUs) > 0 || j.f.NVML.Status == gpu.NVMLOK || j.hostedElsewhere() {
		return nil
	}
	switch {
	case p.Prose["no_nvidia"] != "":
		return []cue{{gpu.CauseOther, 4, said(p.Prose["no_nvidia"]) + ": without an NVIDIA GPU, CUDA cannot run (train on the CPU, or use a machine or cloud runtime with one)"}}
	case j.f.Host.OS == "darwin":
		return []cue{{gpu.CauseOther, 4, "the report runs on a Mac: macOS has no NVIDIA CUDA (use PyTorch's MPS device)"}}
	case p.Prose["other_gpu"] != "" && (p.Prose["other_gpu_own"] != "" || r.quote(nvidiaOwnRE) == ""):
		return []cue{{gpu.CauseOther, 3, `the only GPU the report names is not an NVIDIA one ("` + p.Prose["other_gpu"] + `"), and CUDA needs NVIDIA`}}
	}
	return nil
}

var (
	hostedRE = mustCue(`(?:^|[^\w-])colab(?:[^\w-]|$)|\bkaggle(?:'s)?\W{1,3}(?:my |the |a )?(?:notebook|kernel|gpu|accelerator|p100|t4|session)|\b(?:on|in|en|no|na|auf|sur) kaggle\b|\bkaggle\b[^\n]{0,40}\b(?:gpu quota|quota)\b|\bsagemaker\b|\bpaperspace\b|\bgradient notebook|\blightning (?:ai|studio)\b|\bhugging ?face spaces?\b|\bhf spaces?\b|\bazure ?ml\b|\bvertex ai\b|\bdatabricks\b|\bcodespaces?\b|\bstudio lab\b|/kaggle/(?:working|input|temp)\b|/home/sagemaker-user\b|/teamspace/studios\b`)
	// jupyterHubRE: a JupyterHub (or BinderHub) server, spawned per user.
	// A home folder of /home/jovyan is the Jupyter Docker Stacks' user,
	// which JupyterHub spawns.
	jupyterHubRE = mustCue(`\bjupyter ?hub\b|\bbinder ?hub\b|\bmybinder\b|/home/jovyan\b`, "jupyterhub", "jupyter hub", "binderhub", "binder hub", "mybinder", "/home/jovyan")
	cloudRE      = mustCue(`\b(?:ec2|aws|gcp|google cloud|compute engine|gce|azure|oracle cloud|\boci\b|lambda ?labs|runpod|vast\.?ai|digitalocean|linode|hetzner|alibaba cloud|aliyun|tencent cloud)\b[^\n]{0,80}\b(?:vm|vms|instance|instances|virtual machine|server|node|pod|pods)\b|\b(?:vm|instance|virtual machine)\b[^\n]{0,60}\b(?:ec2|aws|gcp|azure|google cloud)\b|\b(?:on|to|in|into|onto) (?:an? |my |the |aws )?ec2\b|/home/ec2-user\b`,
		"ec2", "aws", "gcp", "google cloud", "compute engine", "gce", "azure", "oracle cloud", "oci", "lambda", "runpod", "vast", "digitalocean", "linode", "hetzner", "alibaba cloud", "aliyun", "tencent cloud")
	gpuVMRE = mustCue(`\b(?:g4dn|g4ad|g5g?|g6e?|p2|p3|p3dn|p4d|p4de|p5|a2|a3|g2)[.-]|\bn1-[a-z0-9-]+ with (?:a |an )?(?:t4|v100|p100|k80)|\bnc[0-9]+|\bnd[0-9]+|\bnv[0-9]+|\b(?:t4|v100|a100|a10g|l4|h100|k80|p100) (?:gpu|instance)`,
		"g4dn", "g4ad", "g5.", "g5-", "g5g", "g6.", "g6-", "g6e", "p2.", "p2-", "p3.", "p3-", "p3dn", "p4d", "p5.", "p5-", "a2.", "a2-", "a3.", "a3-", "g2.", "g2-", "n1-", "nc0", "nc1", "nc2", "nc3", "nc4", "nc5", "nc6", "nc7", "nc8", "nc9", "nd0", "nd1", "nd2", "nd3", "nd4", "nd5", "nd6", "nd7", "nd8", "nd9", "nv0", "nv1", "nv2", "nv3", "nv4", "nv5", "nv6", "nv7", "nv8", "nv9", "t4 gpu", "t4 instance", "v100 gpu", "v100 instance", "a100 gpu", "a100 instance", "a10g gpu", "a10g instance", "l4 gpu", "l4 instance", "h100 gpu", "h100 instance", "k80 gpu", "k80 instance", "p100 gpu", "p100 instance")
	// cpuTierRE: a hosted or cloud machine said in words to be a CPU one
	// (a CPU pod, instance, tier, the free CPU hardware).
	cpuTierRE = mustCue(`\bcpu[- ](?:only )?(?:pod|pods|instance|instances|vm|node|runtime|tier|plan|basic|hardware|space|worker|workers|machine)\b|\bfree cpu\b`, "cpu")
	// ciRE: a hosted CI runner, which has no GPU unless a GPU runner is
	// chosen.
	ciRE = mustCue(`\bgithub actions?\b|\bgitlab (?:ci|runners?)\b|\bci runners?\b|\bcircleci\b|\btravis(?: ci)?\b|\bazure pipelines\b|\bbuildkite\b`,
		"github action", "gitlab", "ci runner", "circleci", "travis", "azure pipelines", "buildkite")
	// gpuInstanceRE: a cloud GPU instance type by its own name (AWS's
	// g4dn.xlarge, p3.2xlarge; GCP's a2-highgpu).
	gpuInstanceRE = mustCue(`\b(?:g4dn|g4ad|g5g?|g6e?|gr6|p2|p3|p3dn|p4d|p4de|p5e?)\.(?:\d*xlarge|large|metal)\b|\ba[23]-(?:highgpu|megagpu|ultragpu)\b|\bg2-standard\b`,
		"g4dn.", "g4ad.", "g5.", "g5g.", "g6.", "g6e.", "gr6.", "p2.", "p3.", "p3dn.", "p4d.", "p4de.", "p5.", "p5e.", "highgpu", "megagpu", "ultragpu", "g2-standard")
	// serverlessRE: a serverless or app platform, which runs code on
	// CPUs only (AWS Lambda, Cloud Functions, Azure Functions, Heroku,
	// Streamlit Cloud); Lambda Labs, a GPU cloud, is not one.
	serverlessRE = mustCue(`\baws lambda\b|\blambda functions?\b|\bcloud functions?\b|\bazure functions?\b|\bheroku\b|\bstreamlit (?:community )?cloud\b`,
		"lambda", "cloud function", "azure function", "heroku", "streamlit")
	// noDeviceRE: the machine shows no NVIDIA device at all (not a driver
	// that fails): the kernel module finds no device to bind, nvidia-smi
	// finds none, or the person says the machine has no CUDA GPU.
	noDeviceRE = mustCue(`could not insert '?nvidia'?: no such device|\bno devices were found\b|\bno cuda gpus are available\b|\bno cuda-capable device\b|\b(?:don't|do not|doesn't|does not|didn't|did not) have (?:a |any )?(?:cuda |nvidia )?gpus?\b|\bno gpus? (?:is |was )?(?:found|detected|available|attached)\b`,
		"no such device", "no devices were found", "no cuda gpus", "no cuda-capable", "have a", "have any", "have cuda", "have nvidia", "have gpu", "no gpu")
	cpuVMRE = mustCue(`\b(?:t2|t3|t3a|t4g|m4|m5|m5a|m6i|m7i|c4|c5|c5a|c6i|c7i|r5|r6i)\.(?:nano|micro|small|medium|large|xlarge|[0-9]+xlarge)\b|\be2-(?:micro|small|medium|standard|highmem|highcpu)|\bn2-(?:standard|highmem)|\bstandard_[bdef][0-9]+`)
)

// cueHostedRuntime: a notebook service or a cloud machine. Without a
// working nvidia-smi there, it was started without a GPU (a runtime or an
// instance type without one), or, for a GPU instance, without its driver.
func cueHostedRuntime(j *judge, r *reading) []cue {
	if !j.noDriverSeen() || r.smiUtilisation() || j.torchSawGPU() || r.quote(gpuSessionRE) != "" {
		return nil
	}
	if q := r.quote(jupyterHubRE); q != "" {
		// A JupyterHub spawns each server from a profile: on Kubernetes or
		// Docker it gets a GPU only when the profile asks for one; on a
		// GPU server itself, the notebook's kernel may be another Python.
		return []cue{{gpu.CauseWSLOrContainer, 3, said(q) + ": a JupyterHub server gets a GPU only when its profile (spawner) asks for one"},
			{gpu.CauseConflictingInstalls, 1, said(q) + ": or the notebook's kernel is another Python than the one with the CUDA build"}}
	}
	if q := r.quote(hostedRE); q != "" || j.f.Host.Container == "colab" || j.f.Host.Container == "hosted" {
		return []cue{{gpu.CauseWSLOrContainer, 3, said(q) + ": a hosted notebook gets a GPU only when its runtime or session asks for one (Colab: Runtime → Change runtime type → GPU; Kaggle: Settings → Accelerator)"}}
	}
	if q := r.quote(ciRE); q != "" {
		return []cue{{gpu.CauseWSLOrContainer, 3, said(q) + ": a hosted CI runner has no GPU unless a GPU runner (or a self-hosted one with a GPU) is chosen"}}
	}
	if q := r.quote(noGPURuntimeRE); q != "" {
		return []cue{{gpu.CauseWSLOrContainer, 3, said(q) + ": the notebook's session was started without a GPU (a CPU or TPU runtime, no accelerator)"}}
	}
	if q := r.quote(notebookMagicRE); q != "" && r.quote(cloudRE) == "" {
		// A notebook's shell cells, with no machine named: most often a
		// hosted notebook (Colab, Kaggle), whose session may have no GPU;
		// on a local Jupyter, the kernel may be another Python.
		return []cue{{gpu.CauseWSLOrContainer, 2.5, said(q) + ": a notebook's shell cell: most often a hosted notebook (Colab, Kaggle), whose session may have no GPU"},
			{gpu.CauseConflictingInstalls, 0.5, said(q) + ": or a local notebook whose kernel is another Python"}}
	}
	if q := j.serverless(); q != "" {
		return []cue{{gpu.CauseWSLOrContainer, 3, said(q) + ": a serverless or app platform runs code on CPUs only; a GPU needs a GPU instance or a GPU service"}}
	}
	q := r.quote(cloudRE)
	if q == "" {
		if t := r.quote(cpuVMRE); t != "" {
			// A CPU instance type by its name alone (t2.micro, e2-standard-8).
			return []cue{{gpu.CauseWSLOrContainer, 3, said(t) + ": that instance type has no GPU attached"}}
		}
		if t := r.quote(gpuInstanceRE); t != "" {
			// A GPU instance type by its name alone (g4dn.xlarge): the GPU
			// is attached, so its image lacks the driver or has not loaded it.
			return []cue{{gpu.CauseDriverMissing, 2, said(t) + ": a GPU instance whose image may lack the NVIDIA driver (or needs a reboot after installing it)"}}
		}
	}
	if q != "" || r.any("cpu pod", "cpu-only pod", "cpu tier", "cpu basic", "cpu hardware", "cpu runtime", "cpu space", "free cpu", "cpu worker") {
		if t := r.quote(cpuTierRE); t != "" {
			return []cue{{gpu.CauseWSLOrContainer, 3, said(t) + ": a CPU machine, pod or tier of a hosted service has no GPU attached"}}
		}
	}
	if q == "" {
		return nil
	}
	if t := r.quote(cpuVMRE); t != "" {
		return []cue{{gpu.CauseWSLOrContainer, 3, said(t) + ": that instance type has no GPU attached"}}
	}
	if t := r.quote(gpuVMRE); t != "" {
		return []cue{{gpu.CauseDriverMissing, 2, said(t) + ": a GPU instance whose image may lack the NVIDIA driver (or needs a reboot after installing it)"}}
	}
	if t := r.quote(noDeviceRE); t != "" {
		// The machine shows no NVIDIA device at all, and no GPU instance
		// type is named: the instance was created without a GPU.
		return []cue{{gpu.CauseWSLOrContainer, 4, said(q) + `; "` + t + `": a cloud machine that shows no NVIDIA device has no GPU attached (its instance type has none)`},
			{gpu.CauseDriverMissing, 0.5, said(q) + ": or a GPU instance whose driver is not loaded"}}
	}
	return []cue{{gpu.CauseDriverMissing, 1.5, said(q) + ": a cloud machine: its image may lack the driver"},
		{gpu.CauseWSLOrContainer, 1.5, said(q) + ": a cloud machine: its instance type may have no GPU attached"}}
}

var (
	smiWorksRE = mustCue(`(?m)nvidia-smi(?:\.exe)?['"\x60]?[^\n,.;]{0,20},?\s+(?:it )?(?:returns|gives|prints|outputs)(?::|\s*$)|nvidia-smi(?:\.exe)?['"\x60]?\s+(?:works|worked|shows|showed|lists|listed|detects|detected|displays|displayed|recogni[sz]es|sees|reports|reported|finds|found|is working|runs fine|output is (?:fine|ok|normal))|nvidia-smi[^\n]{0,40}(?:正常|可以看到|能看到|显示正常)`)
	cudaNARE   = mustCue(`cuda version\W{0,3}(?:was |is |shows? |showed )?n/?a\b|cuda version: n/a`)
	// boxBlindRE: the box itself is said not to see the GPU ("the
	// container does not detect my RTX 3070", "outside it works").
	boxBlindRE = mustCue(`\b(?:container|docker|pod|image|devcontainer|wsl2?|vm)\b[^\n]{0,20}\b(?:does not|doesn't|do not|don't|cannot|can't|can not|won't|will not|is not able to|isn't able to|fails to)\b (?:see|detect|find|recogni[sz]e|access|use|get)\b|\boutside (?:of )?(?:it|the container|docker|the devcontainer)\b[^\n]{0,20}\b(?:works?|worked|is fine|fine|ok)\b`,
		"not see", "n't see", "not detect", "n't detect", "not find", "n't find", "not recogni", "n't recogni", "not access", "n't access", "not use", "n't use", "not get", "n't get", "able to ", "fails to ", "outside")
	hostOnlyRE = mustCue(`(?:on|in) the host\b|\bhost (?:machine|system)\b|宿主机|主机上`)
)

// cueContainerOrWSL: a container or WSL, in the report's words, where the
// GPU is not used and no nvidia-smi inside it answers: the GPU does not
// reach it.
func cueContainerOrWSL(j *judge, r *reading) []cue {
	f := j.f
	if !j.noDriverSeen() && f.Host.WSL == 0 || j.torchSawGPU() {
		return nil
	}
	var out []cue
	if f.Host.WSL > 0 && j.noDriverSeen() {
		out = append(out, cue{gpu.CauseWSLOrContainer, 2.5, "the report runs in WSL: the GPU comes from the Windows driver, through /usr/lib/wsl/lib"})
		if q := r.quote(linuxDriverRE); q != "" {
			out = append(out, cue{gpu.CauseWSLOrContainer, 1.5, said(q) + ": a Linux NVIDIA driver installed inside WSL takes the place of the Windows driver's library (WSL must use the Windows driver only)"})
		}
	}
	if f.Host.WSL > 0 && !j.noDriverSeen() && hasTrouble(f.Paste.Text) != "" {
		// The Windows driver answers in WSL, yet the program sees no GPU:
		// WSL has no /dev/nvidia*, no NVIDIA device in lspci and its CUDA
		// library only in /usr/lib/wsl/lib, where a program that looks the
		// Linux way does not find it.
		return []cue{{gpu.CauseWSLOrContainer, 2.5, "the report runs in WSL and nvidia-smi answers there, yet the program sees no GPU: in WSL the CUDA library is only in /usr/lib/wsl/lib (no /dev/nvidia*, no NVIDIA device in lspci), where a program that looks the Linux way does not find it"}}
	}
	if q := r.gpuRental(); q != "" && f.Host.WSL == 0 {
		// A GPU rental's pods and instances come with their GPU passed
		// in: what runs on the CPU there is the image's software.
		return append(out, cue{gpu.CauseCPUOnlyBuild, 2, said(q) + ": a GPU cloud gives its containers the GPU; a program on the CPU there is a CPU build (or lacks the GPU package)"},
			cue{gpu.CauseWSLOrContainer, -1, said(q) + ": a GPU cloud passes the GPU to its containers"})
	}
	if q := r.quote(cpuImageRE); q != "" {
		// The image itself is said to be a CPU build: the container may
		// have the GPU, its software cannot use it.
		return append(out, cue{gpu.CauseCPUOnlyBuild, 3, said(q) + ": the image's framework (or runtime) is a CPU-only build; an image variant built for CUDA is needed"},
			cue{gpu.CauseWSLOrContainer, 0.5, said(q) + ": a container"})
	}
	if f.Host.Container != "" && f.Host.Container != "colab" && f.Host.Container != "hosted" && j.noDriverSeen() {
		w := 2.5
		if q := r.quote(cpuAskedRE); q != "" && !strings.Contains(asciiLower(q), "using device") {
			w = 1 // the program is told to use the CPU (a setting, not a log of what it used): that, not the box, first
		}
		// nvidia-smi answers in the container but without a CUDA version:
		// the driver's CUDA library did not reach it.
		if cudaNARE.MatchString(r.low) {
			w += 1
		}
		if f.Paste.DockerGPUs != nil && *f.Paste.DockerGPUs {
			w = 1 // started with GPUs: the toolkit or the image, still the container's side
			if q := r.quote(smiWorksRE); q != "" && r.quote(hostOnlyRE) == "" {
				return gpuInContainer(q)
			}
		}
		ev := "the program runs in a container"
		if qs := f.Paste.Quotes["os"]; len(qs) > 0 {
			ev = `the report runs in a container: "` + qs[0] + `"`
		}
		if r.quote(smiWorksRE) != "" && r.quote(hostOnlyRE) != "" {
			w, ev = w+1, ev+"; nvidia-smi answers on the host, not inside it"
		} else if q := r.quote(boxBlindRE); q != "" {
			w, ev = w+1, ev+`; "`+q+`"`
		}
		out = append(out, cue{gpu.CauseWSLOrContainer, w, ev})
	}
	return out
}

// gpuCloudRE: a GPU rental cloud, whose pods and instances always have
// their GPU (RunPod, Vast.ai, Lambda).
var gpuCloudRE = mustCue(`\brunpod(?:\.io)?\b|\bvast\.ai\b|\blambda ?labs\b`, "runpod", "vast.ai", "lambda")

// cpuMachineRE: a machine rented without a GPU ("a RunPod CPU pod", "a
// serverless CPU worker").
var cpuMachineRE = mustCue(`\bcpu[- ](?:only )?(?:pods?|workers?|instances?|nodes?|machines?|vms?|servers?)\b`, "cpu")

// blackwell: the report names a GPU of compute capability 12 or more,
// which needs CUDA 12.8: a newer CUDA required there is the build's
// matter (its kernels), not the driver's.
func (j *judge) blackwell() bool {
	for _, g := range j.f.NVML.GPUs {
		if v := gpu.MustVersion(g.CC); v != nil && v.Major() >= 12 {
			return true
		}
	}
	return false
}

// cudaBelowRequired is the line where the report says its CUDA is older
// than what the program requires, or "".
func (r *reading) cudaBelowRequired() string {
	q, m := r.quoteGroups(cudaRequiredRE)
	if m == nil || gpu.VersionAtLeast(m[0], m[1]) { // (have, want): not below
		return ""
	}
	return q
}

// gpuRental: the report runs on a GPU rental's machine with its GPU.
func (r *reading) gpuRental() string {
	if q := r.quote(gpuCloudRE); q != "" && r.quote(cpuMachineRE) == "" {
		return q
	}
	return ""
}

// cpuImageRE: a container image said to be a CPU-only build, or its
// CUDA variant named ("the docker image runs in cpu only mode", "use the
// :cuda image").
var cpuImageRE = mustCue(`\b(?:image|container|docker build)s?\b[^\n]{0,30}\b(?:cpu[- ]only|cpu mode|cpu version|cpu build|has no (?:gpu|cuda) support|without (?:gpu|cuda) support)\b|\bcpu[- ]only (?:docker )?(?:images?|containers?)\b|\x60?:(?:cuda|gpu)\x60? (?:image|tag|variant)\b|\b(?:cuda|gpu) (?:tag|variant) of the image\b|\bimage\b[^\n]{0,20}\binstead of (?:the )?cpu[- ]only\b|\b(?:docker|image|container)s? (?:image )?with (?:\w+ ){0,2}support for (?:nvidia|cuda|gpu)|\b(?:docker|image|container)s? (?:image )?with (?:nvidia |cuda |gpu )+support\b`,
	"cpu only", "cpu-only", "cpu mode", "cpu version", "cpu build", "gpu support", "cuda support", "nvidia support", ":cuda", ":gpu", "of the image", "support for")

// linuxDriverRE: a Linux NVIDIA driver package or installer named (which
// inside WSL replaces the Windows driver's library).
var linuxDriverRE = mustCue(`\bnvidia-driver-\d{3}\b|\bnvidia-linux-x86_64-[\d.]+\.run\b|\b(?:installed|install|installing) (?:the |a )?(?:linux |ubuntu )?(?:nvidia )?(?:gpu )?drivers? (?:package )?(?:in|inside|into) (?:the )?(?:wsl2?|ubuntu)\b`,
	"nvidia-driver-", "nvidia-linux-", "driver")

// noGPURuntimeRE: a notebook session said to have no GPU: no hardware
// accelerator, a CPU or TPU runtime.
var noGPURuntimeRE = mustCue(`\b(?:hardware )?accelerator\W{0,3}(?:is |was )?(?:none|tpu)\b|\bruntime type\W{0,4}(?:is |was )?(?:cpu|tpu)\b|\btpu (?:runtime|vm)\b|\bcpu runtime\b`,
	"accelerator", "runtime type", "tpu runtime", "tpu vm", "cpu runtime")

// notebookMagicRE: a notebook cell's shell command or magic at the start
// of a line (!pip install, !git clone, !python, %cd, !nvidia-smi).
var notebookMagicRE = mustCue(`(?m)^[ \t]*(?:!(?:pip3?|git|python3?|nvidia-smi|wget|apt(?:-get)?)\b|%(?:cd|pip|env)\b)`, "!pip", "!git", "!python", "!nvidia-smi", "!wget", "!apt", "%cd", "%pip", "%env")

// driverInBoxRE: an NVIDIA driver installed inside a container, in words
// (English, Chinese).
var driverInBoxRE = mustCue(`\binstall(?:ed|ing)?\b[^\n]{0,40}\bdrivers?\b[^\n]{0,30}\b(?:in|inside|into|within) (?:the |my |a |this )?(?:docker )?container\b|\b(?:in|inside|within) (?:the |my |a |this )?(?:docker )?container\b[^\n]{0,40}\binstall(?:ed|ing)?\b[^\n]{0,30}\bdrivers?\b|容器(?:内|里|中)[^\n]{0,20}(?:安装|装)[^\n]{0,10}驱动`,
	"container", "容器")

// gpuInContainer: a container started with the GPUs (--gpus) where
// nvidia-smi answers inside: the GPU reached it, so what is left is the
// framework in the image (a CPU build, or a CUDA build the host's driver
// cannot run), the container's side only as a remainder.
func gpuInContainer(q string) []cue {
	ev := said(q) + " in a container started with --gpus: the GPU reaches the container"
	return []cue{{gpu.CauseWSLOrContainer, 0.5, ev + "; the image may still lack the driver's CUDA library"},
		{gpu.CauseCPUOnlyBuild, 2, ev + "; the framework installed in the image is the likely CPU build"},
		{gpu.CauseDriverTooOld, 1, ev + "; or its CUDA build is newer than the host's driver"}}
}

// vmRE: a virtual machine or a system container by its hypervisor's
// name, or GPU passthrough.
var vmRE = mustCue(`\b(?:virtualbox|vmware|hyper-v|parallels desktop|qemu|kvm|proxmox|lxc|lxd|esxi|xenserver)\b|\bpassthrough\b|\bpass(?:ed|ing)?[- ]through (?:the |my |an? )?(?:nvidia )?gpu\b`,
	"virtualbox", "vmware", "hyper-v", "parallels desktop", "qemu", "kvm", "proxmox", "lxc", "lxd", "esxi", "xenserver", "passthrough", "through the ", "through my ", "through a", "through gpu", "through nvidia")

// cueVirtualMachine: a virtual machine or system container where no
// driver answers. VirtualBox, Hyper-V (without DDA), Parallels and
// VMware's desktop products (Workstation, Player, Fusion) give a guest no
// CUDA GPU at all; a system container (LXC) gets it only when
// the host's devices are mapped in. On KVM, Proxmox, ESXi, VMware or Xen
// the GPU may be passed through, and then the guest needs its own
// driver: either is as likely (lspci in the guest tells them apart).
func cueVirtualMachine(j *judge, r *reading) []cue {
	if !j.noDriverSeen() {
		return nil
	}
	q := r.quote(vmRE)
	switch {
	case q == "":
		return nil
	case r.any("virtualbox", "hyper-v", "parallels desktop", "vmware workstation", "vmware player", "vmware fusion") && !r.any("passthrough", "pass-through", "passed through", "dda"):
		return []cue{{gpu.CauseWSLOrContainer, 2.5, said(q) + ": that hypervisor gives its guests no CUDA GPU (train on the host, or in WSL 2 on Windows)"}}
	case r.any("lxc", "lxd") && !r.any("passthrough", "pass-through", "passed through"):
		return []cue{{gpu.CauseWSLOrContainer, 2, said(q) + ": a system container sees the GPU only when the host's /dev/nvidia* devices and driver libraries are mapped into it"}}
	case r.any("container", "docker") && !r.any("virtual machine", " vm ", "vfio", "kvm", "qemu", "esxi", "proxmox", "hypervisor"):
		return []cue{{gpu.CauseWSLOrContainer, 2.5, said(q) + ": a GPU passed to a container comes from the host's driver through the NVIDIA Container Toolkit (or the NAS's own setting for it)"}}
	}
	return []cue{{gpu.CauseWSLOrContainer, 1.5, said(q) + ": a virtual machine gets the GPU only by passthrough"},
		{gpu.CauseDriverMissing, 1.5, said(q) + ": a GPU passed through to a virtual machine needs the NVIDIA driver inside it"}}
}

var (
	windowsRE = mustCue(`\bwindows(?: ?1[01]| ?7| ?8| server)?\b|\bwin ?1[01]\b|\bwin64\b|\.exe\b|\bpowershell\b|\bcmd\.exe\b|\bconda prompt\b|\banaconda prompt\b`)
	tfRE      = mustCue(`\btensorflow\b|\btf\.(?:config|test|keras|__version__)|\bkeras\b|\btf ?[12]\.\d{1,2}\b`,
		"tensorflow", "tf.", "keras", "tf1", "tf2", "tf 1", "tf 2")
	tfVersionRE = mustCue(`\b(?:tensorflow|tf)(?:-gpu)?\s*(?:==|version\s*:?|v)?\s*(2\.\d{1,2}|1\.\d{1,2})\b`,
		"tensorflow", "tf")
	// tfPast210RE: the report says its TensorFlow is past the last
	// release with a GPU build for native Windows (2.10).
	tfPast210RE = mustCue(`\b(?:after|above|beyond|newer than|later than|past|over) (?:tf ?|tensorflow )?(?:version |v)?2\.10\b|\b2\.10 (?:was|is) the last\b|\b(?:since|from|starting (?:with|from|at)) (?:tf ?|tensorflow )?(?:version |v)?2\.1[1-9]\b|>=? ?2\.10\b|\bup ?to (?:tf ?|tensorflow )?(?:version |v)?2\.10\b|\b(?:doesn't|does not|no longer|don't|do not) support (?:gpus? on )?(?:the )?native windows\b`,
		"2.10", "2.1", "native windows")
	cuda12RE     = mustCue(`\bcuda\s*(?:toolkit\s*)?(?:version\s*)?:?\s*v?1[23]\.\d`)
	windowsWSLRE = mustCue(`\bwsl\b|\bubuntu\b`)
)

// windowsSaid: the report shows Windows, as a fact or in words, and not
// WSL.
func (j *judge) windowsSaid(r *reading) bool {
	if j.f.Host.WSL > 0 {
		return false
	}
	return j.windows() || r.quote(windowsRE) != "" && r.quote(windowsWSLRE) == ""
}

// tfVersion is the TensorFlow release the report shows, as a package or
// in words ("" unknown).
func (j *judge) tfVersion(r *reading) string {
	if env, ok := j.reportEnv(); ok {
		for _, n := range []string{"tensorflow", "tensorflow-gpu", "tensorflow-intel", "tf-nightly"} {
			if pk, ok := env.Package(n); ok && pk.Version != "" {
				return pk.Version
			}
		}
	}
	for _, loc := range tfVersionRE.FindAllIndex(r.low, 4) {
		// A release named as where to go ("switch to tensorflow 2.10",
		// "downgrade to") is not the one installed.
		if m := tfVersionRE.Regexp().FindStringSubmatch(r.low[loc[0]:loc[1]]); m != nil && !targetRE.MatchString(r.low[max(0, loc[0]-24):loc[0]]) {
			return m[1]
		}
	}
	return ""
}

// targetRE: the words before a version that make it a target, not the
// installed one.
var targetRE = regexp.MustCompile(`(?:switch(?:ing)?(?: back)?|downgrad(?:e|ing)|go(?:ing)? back|revert(?:ing)?|roll(?:ing)? back|pin(?:ning)?|move|moving) to (?:the )?$`)

// cueWindowsTensorFlow: TensorFlow on native Windows. From 2.11 it has no
// GPU build there; up to 2.10 it loads exactly CUDA 11.2 and cuDNN 8.1. So
// with CUDA 12 installed, either the build is CPU-only or its libraries
// are missing.
func cueWindowsTensorFlow(j *judge, r *reading) []cue {
	if !j.windowsSaid(r) || r.quote(tfRE) == "" {
		return nil
	}
	if q := r.quote(tfPast210RE); q != "" {
		return []cue{{gpu.CauseCPUOnlyBuild, 3.5, said(q) + ": TensorFlow after 2.10 on native Windows has no GPU build"}}
	}
	v := j.tfVersion(r)
	switch {
	case v != "" && gpu.VersionAtLeast(v, "2.11"):
		return []cue{{gpu.CauseCPUOnlyBuild, 3.5, fmt.Sprintf("TensorFlow %s on native Windows: GPU builds for Windows ended with 2.10", v)}}
	case v != "" && gpu.VersionAtLeast(v, "1.0"):
		return []cue{{gpu.CauseTFGPULibs, 3, fmt.Sprintf("TensorFlow %s on native Windows loads only the CUDA and cuDNN it was built for (https://www.tensorflow.org/install/source_windows#gpu)", v)}}
	}
	ev := "TensorFlow on native Windows, release not shown: from 2.11 it is CPU-only there, and up to 2.10 it needs exactly CUDA 11.2 and cuDNN 8.1"
	if cuda12RE.MatchString(r.low) {
		return []cue{{gpu.CauseCPUOnlyBuild, 3, ev + "; with CUDA 12 installed, no TensorFlow on native Windows uses the GPU"}, {gpu.CauseTFGPULibs, 1.5, ev}}
	}
	return []cue{{gpu.CauseCPUOnlyBuild, 2.5, ev}, {gpu.CauseTFGPULibs, 1.5, ev}}
}

// cueLinuxTensorFlow: TensorFlow elsewhere that does not see the GPU: since
// 2.14 pip's tensorflow brings no CUDA libraries unless asked
// (tensorflow[and-cuda]); before, they had to be installed to match.
func cueLinuxTensorFlow(j *judge, r *reading) []cue {
	if j.windowsSaid(r) || r.quote(tfRE) == "" || r.any("torch") && !r.any("tensorflow") || r.any("tensorflow version: n/a", "is_tf_available: false") {
		return nil // no TensorFlow, or one an environment report says is not there
	}
	if r.any("create cudnn handle", "cudnn_status_internal_error", "cudnn_status_alloc_failed") {
		// cuDNN was loaded and ran far enough to fail making its handle:
		// TensorFlow found its libraries; it took the GPU's memory first.
		return []cue{{gpu.CauseTFGPULibs, -1, "TensorFlow loaded cuDNN (it failed later, creating its handle): its CUDA libraries were found"}}
	}
	return []cue{{gpu.CauseTFGPULibs, 2, "TensorFlow on Linux or WSL finds the GPU only with the CUDA libraries of its release (pip install tensorflow[and-cuda] from 2.14)"},
		{gpu.CauseCPUOnlyBuild, 0.5, "TensorFlow: a CPU package (tensorflow-cpu, or tensorflow before 2.1) never uses the GPU"}}
}

var (
	torchRE    = mustCue(`\btorch\b|\bpytorch\b`)
	cpuBuildRE = mustCue(`torch\.version\.cuda\)?\W{0,12}(?:is |gives |returns? |prints? |shows? |->|:|=)?\s*none\b|\+cpu\b|\bcpuonly\b|\bcpu[- ]only (?:version|build|wheel|package|torch|pytorch)|\bcpu version of (?:torch|pytorch|tensorflow|paddle)|\b(?:torch|pytorch|paddle|tensorflow)(?:'s)? cpu version\b|\bpytorch-cpu\b|\btensorflow-cpu\b|cpu ?版(?:本)?|\b(?:is|it's|its|got|gave me|installed|installs) (?:the |a )?cpu(?:-only)? (?:build|version|wheel|package)\b|\b(?:to|into|with|gets?|pulls?|pulled|resolves?|resolved) (?:the )?cpu(?:-only)? wheels?\b|\b(?:installed|installs|got|gets|pulled|resolved)\b[^\n]{0,40}\b(?:torch|pytorch)\b[^\n]{0,25}\bcpu(?:-only)? (?:build|wheel)\b|\b(?:torch|pytorch)\b[^\n]{0,40}\b(?:with no cuda|without cuda support|no cuda \(cpu)`,
		"cpu", "torch.version.cuda", "with no cuda", "without cuda support")
	// jetsonRE: an NVIDIA Jetson (JetPack, L4T), whose GPU torch needs
	// its own wheels.
	jetsonRE   = mustCue(`\bjetson\b|\bl4t\b|\bjetpack\b|\borin (?:agx|nano|nx)\b`, "jetson", "l4t", "jetpack", "orin")
	notBuiltRE = mustCue(`is_compiled_with_cuda\(\)\W*(?:is |returns? |->|:|=)?\s*false|is_built_with_cuda\(\)\W*(?:is |returns? |->|:|=)?\s*false|not compiled with cuda`)
)

// cueTorchBuild: torch without a CUDA build in sight. On Windows, pip's
// default torch is CPU-only; a +cpu tag or the words say so outright.
func cueTorchBuild(j *judge, r *reading) []cue {
	var out []cue
	if q := r.quote(cpuBuildRE); q != "" {
		out = append(out, cue{gpu.CauseCPUOnlyBuild, 3, said(q)})
	}
	if q := r.quote(notBuiltRE); q != "" {
		out = append(out, cue{gpu.CauseCPUOnlyBuild, 3, said(q)})
	}
	if q := r.quote(buildNoCUDARE); q != "" && !containsAny(asciiLower(q), "gpu does", "gpu doesn", "card does", "card doesn", "graphics", "amd", "intel", "mac") {
		out = append(out, cue{gpu.CauseCPUOnlyBuild, 3.5, said(q) + ": a build (binary, release, package) without CUDA support runs on the CPU whatever the GPU; its CUDA variant is needed"})
	}
	if q := r.quote(jetsonRE); q != "" && r.quote(torchRE) != "" && !j.torchSawGPU() {
		out = append(out, cue{gpu.CauseCPUOnlyBuild, 2, said(q) + ": a Jetson needs torch built for JetPack (NVIDIA's Jetson wheels, or an L4T image such as dustynv/pytorch); pip's torch for aarch64 from PyPI, or a generic image, runs on the CPU"})
	}
	if q := r.quote(toolkitOnlyRE); q != "" && !j.torchSawGPU() {
		out = append(out, cue{gpu.CauseCPUOnlyBuild, 1.5, said(q) + ": a CUDA toolkit installed does not make the program's framework a CUDA build (a CPU wheel ignores it, and a CUDA wheel brings its own CUDA)"})
	}
	if r.quote(torchRE) == "" || r.quote(tfRE) != "" && !r.any("torch.cuda") {
		return out
	}
	pk, has := j.reportTorch()
	if has && (pk.CUDA != "" || pk.ROCm != "") {
		return append(out, j.cueCUDABuildShown(r, pk, len(out) > 0)...)
	}
	if j.windowsSaid(r) {
		w := 2.0
		if r.quote(basicDisplayRE) != "" || r.quote(smiFailsRE) != "" || r.quote(noDriverRE) != "" {
			w = 1 // the layer below is said to fail: that explains torch's symptom as well
		}
		if r.quote(cudnnWordsRE) != "" || r.quote(cudnnAbsentRE) != "" || r.quote(cudnnLibRE) != "" || r.quote(cudaRuntimeMissingRE) != "" {
			w = 0.5 // something loads cuDNN or CUDA's libraries: a CUDA build is at work, and its library is the trouble
		}
		return append(out, cue{gpu.CauseCPUOnlyBuild, w, "torch on Windows without a CUDA build shown: pip's default torch on Windows is the CPU-only wheel"})
	}
	return out
}

// cueCUDABuildShown: torch shown as a CUDA (or ROCm) build contradicts a
// CPU-only build, unless the report also shows a CPU build somewhere (a
// +cpu tag, the words, "not compiled with CUDA", a CPU package of another
// framework): then the CUDA tag may be what was asked for, not what runs
// (two installs, or the other framework's CPU package), and the cues for
// those decide. The words and the weak "runs on the CPU" text still speak
// for a CPU build; this weighs against them, so that the causes the
// facts leave open come first.
func (j *judge) cueCUDABuildShown(r *reading, pk gpu.Package, cpuSaid bool) []cue {
	if cpuSaid || pk.CPUOnly || r.quote(cpuTagRE) != "" || r.quote(tfRE) != "" || r.quote(paddleRE) != "" ||
		r.quote(jaxRE) != "" || r.quote(ortRE) != "" {
		return nil
	}
	for _, h := range j.f.Paste.Signatures {
		if h.Cause == gpu.CauseCPUOnlyBuild && h.Strength > catalog.Weak {
			return nil
		}
	}
	if !j.torchShownInstalled() {
		return nil
	}
	build := "CUDA " + pk.CUDA
	if pk.CUDA == "" {
		build = "ROCm " + pk.ROCm
	}
	ev := fmt.Sprintf("torch %s is a %s build, not a CPU-only one", pk.Version, build)
	out := []cue{{gpu.CauseCPUOnlyBuild, -3, ev}}
	if pk.CUDA == "" || j.f.Host.WSL > 0 || j.f.Host.Container != "" {
		return out // a box of its own: the cues for it decide
	}
	if !j.noDriverSeen() {
		// The build and the driver both right, and the GPU still unused:
		// the process is kept from it (CUDA_VISIBLE_DEVICES), or another
		// Python's torch is the one that runs.
		return append(out, cue{gpu.CauseDeviceSelection, 1, ev + ", and the driver answers: an empty or wrong CUDA_VISIBLE_DEVICES keeps the process from the GPU"},
			cue{gpu.CauseConflictingInstalls, 1, ev + ", and the driver answers: the Python that runs may have another torch"})
	}
	// A CUDA build that does not reach the GPU, the driver not shown: the
	// layer below it, a driver missing or too old for that CUDA.
	floor := j.m.FamilyFloor(gpu.MustVersion(pk.CUDA).Major(), j.windows())
	old := ev + ": the driver below it decides whether it reaches the GPU"
	if floor != "" {
		old = fmt.Sprintf("%s: CUDA %s builds need driver ≥ %s, and the report does not show the driver", ev, pk.CUDA, floor)
	}
	return append(out, cue{gpu.CauseDriverMissing, 1, ev + ": with the build right, a driver that is missing or not loaded leaves the GPU unused"},
		cue{gpu.CauseDriverTooOld, 1, old})
}

// requestRE: a line that asks for a build (an install command, a
// requirement, pip's answer to one) rather than showing the one that runs.
var requestRE = mustCue(`\b(?:pip3?|uv pip|conda|mamba|poetry|uvx|pipenv) (?:install|add)\b|\buvx\b|--with\b|--(?:extra-)?index-url\b|-f https?://|\brequirements[\w.-]*\.txt\b|no matching distribution|could not find a version|\b(?:tried|try|trying) to install\b|删掉|删除|改成`,
	"install", "add", "uvx", "--with", "index-url", "-f http", "requirements", "no matching distribution", "could not find a version", "删掉", "删除", "改成")

// torchShownInstalled: one of the report's lines that show torch's
// version shows the one installed or running (pip list, collect_env,
// torch.__version__, a bare version line), not only a build asked for.
func (j *judge) torchShownInstalled() bool {
	qs := j.f.Paste.Quotes["torch"]
	if len(qs) == 0 {
		return true // from a conda list or the like: what is installed
	}
	for _, q := range qs {
		if !requestRE.MatchString(asciiLower(q)) {
			return true
		}
	}
	return false
}

// cueCUDARan: the report shows CUDA's own errors (no GPU found, the
// driver, memory, a device index): the framework is a CUDA build that
// loaded its libraries, since a CPU-only build stops before CUDA ("not
// compiled with CUDA") and one without its libraries at loading them.
func cueCUDARan(j *judge, r *reading) []cue {
	for _, h := range j.f.Paste.Signatures {
		switch h.Cause {
		case gpu.CauseDriverMissing, gpu.CauseDriverTooOld, gpu.CauseDeviceSelection, gpu.CauseOutOfMemory,
			gpu.CauseArchUnsupported, gpu.CauseCudnnProblem, gpu.CauseDeviceMismatchInCode, gpu.CauseWSLOrContainer:
			ev := `the report shows CUDA's own error ("` + h.Line + `"), which a CPU-only build, or one without its CUDA libraries, never reaches`
			return []cue{{gpu.CauseCPUOnlyBuild, -2.5, ev}, {gpu.CauseTFGPULibs, -2, ev}}
		}
	}
	return nil
}

// gpuNotCPUWords ask, in languages the word model cannot read, how to get
// the GPU used instead of the CPU ("видеокарту, а не процессор").
var gpuNotCPUWords = []string{"а не процессор", "вместо процессора", "не на процессоре", "而不是cpu", "而不是 cpu", "不是用cpu", "不用cpu",
	"en lugar de la cpu", "en vez de la cpu", "en lugar del cpu", "em vez da cpu", "em vez do cpu", "statt der cpu", "anstatt der cpu",
	"au lieu du cpu", "au lieu du processeur", "cpuではなく", "cpu 대신", "cpu대신"}

// cueGPUNotCPU: the GPU wanted instead of the CPU, in other languages:
// the question most often answered by a CUDA build of the framework.
func cueGPUNotCPU(j *judge, r *reading) []cue {
	for _, w := range gpuNotCPUWords {
		if strings.Contains(r.low, w) {
			return []cue{{gpu.CauseCPUOnlyBuild, 1.5, `the report asks for the GPU instead of the CPU ("` + w + `"): most often the framework installed is its CPU build`}}
		}
	}
	return nil
}

// cueFrameworkListsGPU: a framework other than torch lists the GPU among
// its devices (jax.devices() [CudaDevice(id=0)], TensorFlow's GPU device),
// yet the report tells of trouble: its build, the driver and the GPU work
// there; what stays on the CPU is the program's placing of its arrays.
func cueFrameworkListsGPU(j *judge, r *reading) []cue {
	p := j.f.Paste
	if j.torchSawGPU() || !slices.Contains(p.Devices, "gpu") || slices.Contains(p.Devices, "cpu") {
		return nil
	}
	ev := "the report shows the framework listing the GPU among its devices"
	if qs := p.Quotes["jax"]; len(qs) > 0 {
		ev = `the report shows the framework listing the GPU: "` + qs[0] + `"`
	}
	return append(gpuSeen(ev), cue{gpu.CauseDeviceMismatchInCode, 1.5, ev + "; work that still runs on the CPU is placed there by the code (arrays or tensors made on the host and never moved)"})
}

// gpuSeen: a framework that reached the GPU rules out what would keep it
// from the GPU: a CPU build, the driver, a box without the GPU.
func gpuSeen(ev string) []cue {
	return []cue{{gpu.CauseCPUOnlyBuild, -2.5, ev}, {gpu.CauseDriverMissing, -2.5, ev}, {gpu.CauseDriverTooOld, -2, ev}, {gpu.CauseWSLOrContainer, -1.5, ev}}
}

// cueCheckedTrue: torch.cuda.is_available() answered True in the report:
// in the Python that answered, the build, the driver and the GPU work. A
// program that still finds no GPU runs another Python, or is kept from the
// GPU, or does not move its work there.
func cueCheckedTrue(j *judge, r *reading) []cue {
	if !j.torchSawGPU() {
		return nil
	}
	ev := "the report shows torch.cuda.is_available() answering True: there, the build, the driver and the GPU work"
	return append(gpuSeen(ev), cue{gpu.CauseConflictingInstalls, 1, ev + "; a program that still sees no GPU may run another Python"})
}

var (
	paddleRE  = mustCue(`\bpaddle(?:paddle)?\b|\bpaddleocr\b|\bpaddlex\b|\bpaddlespeech\b`)
	jaxRE     = mustCue(`\bjax\b|\bjaxlib\b`)
	jaxCUDARE = mustCue(`jax\[cuda|jax-cuda|cuda\d*_pjrt|cuda\d*-plugin|jaxlib[^\n]{0,20}\+cuda`)
	ortRE     = mustCue(`\bonnxruntime\b|\bonnx runtime\b|cudaexecutionprovider|\bonnxruntime_(?:gpu|directml)\b`)
	// The llama.cpp family: ollama, llama-cpp-python, and programs built
	// on llama.cpp or whisper.cpp (koboldcpp), CPU builds unless built
	// with CUDA.
	ollamaRE    = mustCue(`\bollama\b`, "ollama")
	llamaPyRE   = mustCue(`\bllama[-_]cpp[-_]python\b|\bllama_cpp\b`, "llama")
	ggmlBuildRE = mustCue(`\bllama\.cpp\b|\bwhisper\.cpp\b|\bkoboldcpp\b|\bllama-(?:cli|server)\b|\bggml\b`, "llama.cpp", "whisper.cpp", "koboldcpp", "llama-", "ggml")
	ortCPURE    = mustCue(`(?m)(?:pip3? install|uv pip install|conda install)[^\n]*\bonnxruntime\b(?:[=<>~ ][^\n-]*)?$|(?m)^[ \t]*(?:\+[ \t]*)?onnxruntime\s*(?:==\s*)?\d+\.\d+`)
)

// cueOtherFrameworks: PaddlePaddle, JAX and ONNX Runtime install CPU
// packages by default (paddlepaddle, jax, onnxruntime); the GPU packages
// have other names, and the CPU one beside the GPU one wins the import.
func cueOtherFrameworks(j *judge, r *reading) []cue {
	var out []cue
	gpuPkgs := j.f.Paste.GPUPackages
	if r.quote(paddleRE) != "" {
		if r.any("compiled with with_gpu", "compiled with gpu", "with_gpu, but", "-gpu-cuda") {
			// Paddle's "Compiled with WITH_GPU, but no GPU found in
			// runtime", or a Paddle GPU image: the build has CUDA; the
			// GPU does not reach it.
			out = append(out, cue{gpu.CauseCPUOnlyBuild, -2.5, "PaddlePaddle here is a GPU build (compiled with WITH_GPU, or a GPU image): not a CPU-only one"})
		} else if slices.Contains(gpuPkgs, "paddlepaddle-gpu") || slices.Contains(gpuPkgs, "paddle-gpu") {
			if r.any("paddlepaddle ", "paddlepaddle==", "paddlepaddle\n", "cpu") {
				out = append(out, cue{gpu.CauseConflictingInstalls, 2, "paddlepaddle-gpu with the CPU package paddlepaddle beside it: the CPU one wins the import"})
			}
		} else {
			out = append(out, cue{gpu.CauseCPUOnlyBuild, 2.5, "PaddlePaddle: the package paddlepaddle is the CPU build; the GPU one is paddlepaddle-gpu"})
		}
	}
	if r.any("open3d", "o3d.core.cuda") {
		w := 2.0
		if j.windowsSaid(r) {
			w = 3
		}
		out = append(out, cue{gpu.CauseCPUOnlyBuild, w, "Open3D: its pip wheels have CUDA on Linux only; on Windows and macOS they are CPU builds (o3d.core.cuda.is_available() is False)"})
	}
	if r.quote(jaxRE) != "" && r.quote(jaxCUDARE) == "" {
		w := 2.0
		if j.windowsSaid(r) {
			w = 3 // JAX has no CUDA build for native Windows
		}
		out = append(out, cue{gpu.CauseCPUOnlyBuild, w, "JAX: pip install jax is the CPU build; the GPU needs jax[cuda12] (Linux or WSL 2)"})
	}
	if r.quote(ortRE) != "" || r.any("rembg") {
		cpuPkg := r.quote(ortCPURE)
		switch {
		case r.any("rembg") && !r.any("onnxruntime-gpu only", "only onnxruntime-gpu"):
			// rembg's gpu extra has put onnxruntime in beside
			// onnxruntime-gpu: the CPU package wins the import.
			out = append(out, cue{gpu.CauseConflictingInstalls, 2.5, "rembg: installing rembg[gpu] (or rembg beside onnxruntime-gpu) leaves the CPU package onnxruntime beside onnxruntime-gpu, and the CPU one wins the import"})
		case slices.Contains(gpuPkgs, "onnxruntime-gpu") && r.any("installs onnxruntime", "installed onnxruntime", "onnxruntime too", "onnxruntime as well",
			"pulls in onnxruntime", "brings onnxruntime", "onnxruntime and onnxruntime-gpu", "onnxruntime-gpu and onnxruntime"):
			out = append(out, cue{gpu.CauseConflictingInstalls, 2.5, "onnxruntime-gpu with the CPU package onnxruntime put in beside it: the CPU one wins the import"})
		case slices.Contains(gpuPkgs, "onnxruntime-gpu") && r.any("cpuexecutionprovider only", "only cpuexecutionprovider", "only the cpuexecutionprovider", "['cpuexecutionprovider']", "only cpu provider", "only the cpu provider"):
			out = append(out, cue{gpu.CauseConflictingInstalls, 2, "onnxruntime-gpu installed, yet only the CPU provider offered: most often the CPU package onnxruntime beside it wins the import"},
				cue{gpu.CauseCudnnProblem, 1, "or the CUDA provider cannot load its CUDA and cuDNN libraries"})
		case r.any("onnxruntime-gpu", "onnxruntime_gpu") && r.any("onnxruntime-directml", "onnxruntime_directml"):
			out = append(out, cue{gpu.CauseConflictingInstalls, 2.5, "onnxruntime-directml beside onnxruntime-gpu: both are the module onnxruntime, and whichever was installed last wins the import"})
		case slices.Contains(gpuPkgs, "onnxruntime-gpu") && cpuPkg != "":
			out = append(out, cue{gpu.CauseConflictingInstalls, 2.5, "onnxruntime-gpu with the CPU package onnxruntime beside it: the CPU one wins the import"})
		case cpuPkg != "":
			out = append(out, cue{gpu.CauseCPUOnlyBuild, 3, said(cpuPkg) + ": the package onnxruntime has no CUDA provider; the GPU one is onnxruntime-gpu"})
		case !slices.Contains(gpuPkgs, "onnxruntime-gpu"):
			out = append(out, cue{gpu.CauseCPUOnlyBuild, 1.5, "ONNX Runtime: the package onnxruntime has no CUDA provider; it is onnxruntime-gpu"})
		}
	}
	return out
}

var (
	bothInstallsRE = mustCue(`\b(?:tensorflow|torch|pytorch|paddle\w*|onnxruntime)\b[^\n]{0,40}\b(?:along ?side|along with|beside|next to|together with|on top of)\b[^\n]{0,30}(?:tensorflow-gpu|onnxruntime-gpu|paddlepaddle-gpu|gpu (?:version|package|build))|\bboth (?:the )?(?:tensorflow|torch|pytorch|onnxruntime|paddlepaddle|paddle|jax|jaxlib|cuda)\S*(?: v?\d+(?:\.\d+)*\S*)? and\b|\btwo (?:versions|copies|installations|installs) of\b|\binstalled twice\b|\bmultiple (?:versions|installations|installs|copies) of (?:torch|pytorch|tensorflow|cuda)\b|\b(?:cpu|gpu) (?:version|package|build) (?:and|alongside|beside|together with) (?:the )?(?:gpu|cpu) (?:version|package|build)|两个版本|多个版本|同时安装`,
		"along", "beside", "next to", "together with", "on top of", "both", "two ", "twice", "multiple", "and the gpu", "and gpu", "and the cpu", "and cpu", "两个版本", "多个版本", "同时安装")
	// bothInstalls2RE: more ways to say two installs, apart so that their
	// needles (rarer than "install" or "tensorflow") keep them off most
	// text: pip and conda installs, two in site-packages, tensorflow beside
	// tensorflow-gpu.
	bothInstalls2RE = mustCue(`\bboth in (?:site-packages|the (?:same )?(?:env|environment|venv))\b|\b(?:are|were) both installed\b|\bboth (?:are |were )?installed\b|\b(?:torch|pytorch|tensorflow)\b[^\n]{0,10}\bin both\b|二重に|もう一度[^\n]{0,12}(?:入れ|インストール)|pipでも(?:入れ|インストール)|(?:condaとpip|pipとconda)の両方|装到了?另一个|装在了?另一个|\binstala[^\n]{0,30}\ben (?:la |el )?otr[oa]\b|\bconda install\b[^\n]{0,80}\bpip install\b|\bpip install\b[^\n]{0,80}\bconda install\b|\btensorflow(?:-cpu|-intel)?\b[^\n]{0,40}\btensorflow-gpu\b|\btensorflow-gpu\b[^\n]{0,40}\btensorflow(?:-cpu|-intel)\b|\binstall(?:ed)? (?:[\w.=-]+ ){0,2}(?:with|via|using|through|by|from) pip\b[^\n]{0,80}\binstall(?:ed)? (?:[\w.=-]+ ){0,2}(?:with|via|using|through|by|from) conda\b|\binstall(?:ed)? (?:[\w.=-]+ ){0,2}(?:with|via|using|through|by|from) conda\b[^\n]{0,80}\binstall(?:ed)? (?:[\w.=-]+ ){0,2}(?:with|via|using|through|by|from) pip\b`,
		"both in", "in both", "both installed", "both are installed", "both were installed", "tensorflow-gpu", "conda", "二重に", "もう一度", "pipでも", "の両方", "另一个", "instala")
	otherEnvRE = mustCue(`\b(?:another|different|wrong|base|other) (?:conda |virtual |python )?(?:environment|env|venv|interpreter|kernel)\b|\btwo pythons\b|\b(?:two|multiple|several) (?:python (?:versions|installs|installations|interpreters)|versions of python|pythons)\b|\bpython ?3\.\d{1,2}\b[^\n]{0,60}\band (?:a |the )?python ?3\.\d{1,2}\b|\b(?:microsoft|windows) store python\b|\bdos versiones de python\b|\bduas versões do python\b|\bzwei python|两个 ?python|~/\.local\b|\bpython (?:from|of) the (?:microsoft|windows) store\b|\bpython\b[^\n]{0,30}\b(?:from|of|in) the (?:microsoft|windows) store\b|\bworks? (?:fine |well )?in (?:the )?(?:terminal|console|command line|cmd)\b[^\n]{0,40}\bnot in\b|\b(?:terminal|console|command line|cmd|shell)\b[^\n]{0,40}\bbut\b[^\n]{0,20}\b(?:vs ?code|pycharm|jupyter|spyder|notebook|the ide)\b|\b(?:vs ?code|pycharm|jupyter|spyder|notebook|the ide)\b[^\n]{0,40}\bbut\b[^\n]{0,20}\b(?:terminal|console|command line|cmd|shell)\b|\bjupyter (?:uses|runs|is using|picks)\b|\b(?:doesn't|does not|don't|do not) match (?:the|my) (?:env|environment|conda env|venv|kernel)\b|\bmismatch(?:es)? the (?:env|environment)\b|\bkernel (?:uses|runs|is using|points to|picks) (?:the )?(?:base|another|other|system|wrong)\b|\bpip and conda\b|\bconda and pip\b|\bjupyter kernel\b|\bsite-packages[^\n]{0,80}site-packages|\.local/lib/python|appdata\\roaming\\python|/usr/lib/python3/dist-packages/(?:torch|tensorflow)|\bpython3-(?:torch|tensorflow)\b|\bsys\.executable\b|\bwhich python\b|另一个环境`,
		"another", "different", "wrong", "base ", "other ", "pip and conda", "conda and pip", "jupyter kernel", "site-packages", ".local/lib/python", "appdata\\roaming\\python", "dist-packages", "python3-", "sys.executable", "which python", "另一个环境", "two", "multiple", "several", "and python", "and a python", "and the python", "store python", "the microsoft store", "the windows store", "match the", "match my", "mismatches the", "mismatch the", "dos versiones", "duas versões", "zwei python", "两个", "~/.local", "terminal", "console", "command line", "cmd", "jupyter", "shell")
)

var (
	nvLibs11RE = mustCue(`\bnvidia-[a-z-]+-cu11\b`, "-cu11")
	nvLibs12RE = mustCue(`\bnvidia-[a-z-]+-cu12\b`, "-cu12")
	cudaTagRE  = mustCue(`\btorch[^\n]{0,40}\+cu(?:da)?1[0-3][0-9]\b|\b[12]\.\d+\.\d+\+cu(?:da)?1[0-3][0-9]\b|\bpytorch[^\n]{0,40}\bcuda (?:build|version)\b|\b(?:the|a) cuda build\b`, "+cu1", "+cuda1", "cuda build", "cuda version")
	cpuTagRE   = mustCue(`\b[0-2]\.\d+\.\d+\+cpu\b|\btorch ?\+ ?cpu\b`, "+cpu", "+ cpu")
)

// twoTagsCues: torch shown as a CUDA build (c) and as +cpu (p). The +cpu
// tag's own cue says CPU build; beside a CUDA build it is the symptom of
// two installs, not the cause.
func twoTagsCues(c, p string) []cue {
	ev := said(c)
	if p != c {
		ev += `; and: "` + p + `"`
	}
	ev += ": a CUDA build installed and a CPU build running are two installs (another environment, interpreter or site-packages)"
	return []cue{{gpu.CauseConflictingInstalls, 3.5, ev}, {gpu.CauseCPUOnlyBuild, -2, ev}}
}

// stuckInstallRE: an install that does not take: a package that cannot
// be uninstalled, one uninstalled that still imports, another version
// still shown after installing one. That is a second copy elsewhere
// (another Python, user site-packages, a portable app's own Python).
var stuckInstallRE = mustCue(`\b(?:can'?t|cannot|can not|unable to|couldn'?t|could not) (?:uninstall|remove|get rid of)\b|\buninstall(?:ed|ing|s)?\b[^\n]{0,80}\b(?:still|not installed|says (?:it's |it is )?not)\b|\bstill (?:shows?|showing|loads?|loading|imports?|importing|uses?|using|sees?|prints?|reports?)\b[^\n]{0,20}\b(?:(?:the |its |an? )?(?:old|older|previous|other|own|another)\b|v?\d+\.\d+|(?:the )?(?:torch|pytorch|tensorflow)\b[^\n]{0,20}\b(?:in|from)\b)|\binstall(?:ed|s)?\b[^\n]{0,60}\bbut\b[^\n]{0,60}\b(?:i see|it shows|shows|it says|it loads|loads|imports|prints|i get)\b[^\n]{0,20}\b\d+\.\d+\.\d+|\b(?:was |were |is |are )?built for (?:torch|pytorch) ?\d|\bconda list\b[^\n]{0,80}\bpip list\b|\bpip list\b[^\n]{0,80}\bconda list\b|\b(?:global|system) python\b|\bvs ?code (?:runs|uses|is using|picks)\b|\bwrong (?:python|interpreter)\b|\bpip (?:show|list|freeze)\b[^\n]{0,60}\b(?:but|while|whereas)\b[^\n]{0,60}(?:__version__|import torch|python -c|in python|prints?|shows?)|\b(?:python|py) ?3\.\d{1,2}\b[^\n]{0,60}\b(?:but|while|whereas)\b[^\n]{0,40}\b(?:python|py) ?3\.\d{1,2}\b|\binstall(?:s|ed)? (?:torch |pytorch |tensorflow |it |them )?(?:in|into|to) (?:another|a different|the wrong|the other)\b|\binstead of (?:my|the) (?:pip|conda|venv|virtualenv)\b|\bimports? (?:picks|loads|finds|uses|gets) (?:up )?(?:the )?(?:other|wrong|old)\b|\bimports? (?:the )?(?:other|wrong|old|older)\b|\b(?:still|keeps?|keeping) (?:finding|finds|picking up|picks up|getting|gets|loading|importing|using)\b[^\n]{0,12}\b(?:the |an? )?(?:wrong|old|older|previous|other) (?:version|torch|pytorch|tensorflow|copy|install)\b`,
	"uninstall", "remove", "get rid of", "still", "keep", "but", "while", "whereas", "another", "a different", "the wrong", "the other", "instead of my", "instead of the", "import", "built for", "conda list", "global python", "system python", "code runs", "code uses", "code is using", "code picks", "wrong python", "wrong interpreter")

// jupyterVsShellRE: False in Jupyter and True in a terminal (or the
// reverse order): two Pythons, the notebook's kernel being the other.
var jupyterVsShellRE = mustCue(`\bjupyter\b[^\n]{0,60}\bfalse\b[^\n]{0,60}(?:terminal|command line|console|\bcmd\b|命令行|终端)[^\n]{0,20}\btrue\b|(?:terminal|command line|console|\bcmd\b|命令行|终端)[^\n]{0,60}\btrue\b[^\n]{0,60}\bjupyter\b[^\n]{0,30}\bfalse\b`, "jupyter")

// triedCUDARE: the report installed (or reinstalled) a CUDA build and
// the GPU is still unused.
var triedCUDARE = mustCue(`\b(?:re-?install(?:ed|ing)?|install(?:ed|ing)?)\b[^\n]{0,60}(?:\bcu1[0-3]\d\b|\bcuda ?1[0-3](?:\.\d)?\b|whl/cu|\bcuda (?:build|version)\b)[^\n]{0,100}\bstill\b`, "still")

// cueTwoInstalls: two installs of a framework or two Pythons: the one
// that runs is not the one that was fixed. A report that shows torch as a
// CUDA build in one place and as +cpu in another has two of them.
func cueTwoInstalls(j *judge, r *reading) []cue {
	if r.any("python_embeded", "python_embedded") && r.any("system's python", "system python", ">python ", "> python ", "global python", "the system's site-packages") {
		// A portable app (ComfyUI's) brings its own Python; what pip or
		// python on the PATH reach is another one.
		return []cue{{gpu.CauseConflictingInstalls, 2.5, "the report names the portable app's own Python (python_embeded) and the system's: packages and scripts run in one, the CUDA torch is in the other"}}
	}
	if r.any("py -3", "py.exe -3") && r.any("(venv)", "(.venv)", "activate", "virtual environment", "venv\\") {
		// The py launcher with a version picks that installed Python, not
		// the active virtual environment's.
		return []cue{{gpu.CauseConflictingInstalls, 2.5, "the report runs the py launcher with a version (py -3.x) beside a virtual environment: py -3.x starts the installed Python, not the venv's, so pip and the program see other packages"}}
	}
	if p := r.quote(cpuTagRE); p != "" {
		if c := r.quote(cudaTagRE); c != "" {
			return twoTagsCues(c, p)
		}
	}
	if q := r.quote(triedCUDARE); q != "" {
		// The CUDA build installed (again), the GPU still unused: the build
		// that runs is another one, or the driver below it cannot run it.
		return []cue{{gpu.CauseConflictingInstalls, 2.5, said(q) + ": a CUDA build installed that changes nothing is most often another install that is the one running"},
			{gpu.CauseDriverTooOld, 1, said(q) + ": or the driver cannot run the CUDA of the build installed"},
			{gpu.CauseCPUOnlyBuild, -1, said(q) + ": the CUDA build was installed"}}
	}
	if q := r.quote(stuckInstallRE); q != "" {
		return []cue{{gpu.CauseConflictingInstalls, 3, said(q) + ": an install that does not take is a second copy elsewhere (another Python, the user's site-packages, an app's own Python)"},
			{gpu.CauseCPUOnlyBuild, -1, said(q) + ": the build installed is not the one that runs"}}
	}
	if a, b := r.quote(nvLibs11RE), r.quote(nvLibs12RE); a != "" && b != "" {
		return []cue{{gpu.CauseConflictingInstalls, 2.5, said(a) + `; and: "` + b + `": pip's NVIDIA libraries of two CUDA majors side by side (builds of two frameworks or two installs that clash)`}}
	}
	q := r.quote(bothInstallsRE)
	if q == "" {
		q = r.quote(bothInstalls2RE)
	}
	if q != "" {
		return []cue{{gpu.CauseConflictingInstalls, 3, said(q) + ": with two builds installed side by side, the CPU one often wins the import"},
			{gpu.CauseCPUOnlyBuild, -1, said(q) + ": a CPU build that runs beside another install is the other install's symptom"}}
	}
	if q := r.quote(jupyterVsShellRE); q != "" {
		return []cue{{gpu.CauseConflictingInstalls, 3, said(q) + ": the notebook's kernel is another Python than the terminal's"}}
	}
	if q := r.quote(otherEnvRE); q != "" {
		return []cue{{gpu.CauseConflictingInstalls, 2, said(q) + ": with two environments, the one that runs is often not the one with the CUDA build"}}
	}
	return nil
}

// cueArchitecture: the GPU's architecture against what the framework's
// builds have kernels for, from the matrix: the installed torch's release,
// the wheel variants the report names (cu129), or, with neither, the
// generation's own limits.
func (j *judge) archCues(r *reading) []cue {
	var out []cue
	pk, hasTorch := j.reportTorch()
	variants := variantRE.FindAllString(r.low, -1)
	// The oldest GPU the framework's current builds support: TensorFlow's
	// from the matrix; torch's CUDA 12 wheels start at 5.0.
	framework, floor := "torch", "5.0"
	if r.quote(tfRE) != "" && r.quote(torchRE) == "" {
		framework, floor = "TensorFlow", j.m.MinCC("tensorflow")
	}
	for _, g := range j.f.NVML.GPUs {
		cc := g.CC
		if cc == "" {
			continue
		}
		if hasTorch && pk.Version != "(version not shown)" {
			c, ok := j.releaseCovers(pk, cc)
			if ok && !c {
				out = append(out, cue{gpu.CauseArchUnsupported, 3, fmt.Sprintf("%s (compute capability %s): no official build of torch %s has kernels for it [compat.yaml]", g.Name, cc, gpu.MajorMinor(pk.Version))})
				continue
			}
			if ok && c && pk.CUDA != "" {
				// The build shown has kernels for this GPU: not the cause.
				out = append(out, cue{gpu.CauseArchUnsupported, -2, fmt.Sprintf("%s (compute capability %s): torch %s has kernels for it [compat.yaml]", g.Name, cc, pk.Version)})
				continue
			}
		}
		if q := r.quote(cuda13RE); q != "" && beforeTuring(cc) {
			out = append(out, cue{gpu.CauseArchUnsupported, 3, fmt.Sprintf("%s (compute capability %s) with %s: CUDA 13 dropped Maxwell, Pascal and Volta (below 7.5), so a build for it has no kernels for this GPU; a build for CUDA 12 has", g.Name, cc, said(q))})
			continue
		}
		if v := j.variantLacks(variants, cc); v != "" {
			out = append(out, cue{gpu.CauseArchUnsupported, 3, fmt.Sprintf("%s (compute capability %s): no official %s build of torch has kernels for it [compat.yaml]", g.Name, cc, v)})
			continue
		}
		switch v := gpu.MustVersion(cc); {
		case v.Major() >= 12 && (!hasTorch || pk.CUDA == "" || !gpu.VersionAtLeast(pk.CUDA, "12.8")):
			w := 2.0
			if !hasTorch && r.quote(torchRE) == "" && !r.any(torchApps...) {
				w = 1 // the report is not about torch: what its program was built for is not known
			}
			if hasTorch && pk.CUDA == "" && pk.Version != "(version not shown)" {
				if c, ok := j.releaseCovers(pk, cc); ok && c {
					w = 1 // a build of that release has its kernels; which one is installed is not shown
				}
			}
			out = append(out, cue{gpu.CauseArchUnsupported, w, fmt.Sprintf("%s is a Blackwell GPU (compute capability %s): only torch 2.7 and later built for CUDA 12.8 or newer (cu128, cu130) has kernels for it", g.Name, cc)})
		case v.Compare(gpu.MustVersion(floor)) < 0:
			w := 2.5
			if j.cudaUnavailableSaid(r) && framework == "torch" {
				// torch.cuda.is_available() is True on a GPU its build has
				// no kernels for (it warns, then fails at the first
				// kernel): False points elsewhere (the build, the driver).
				w = 1
				out = append(out, cue{gpu.CauseCPUOnlyBuild, 1, fmt.Sprintf("torch says CUDA is not available: on %s, a build without its kernels would still show it available, so the build itself (or the driver) comes first", g.Name)})
			}
			out = append(out, cue{gpu.CauseArchUnsupported, w, fmt.Sprintf("%s (compute capability %s) is older than what %s's builds support (%s and up)", g.Name, cc, framework, floor)})
		}
	}
	return out
}

func cueArchitecture(j *judge, r *reading) []cue {
	return append(append(j.archCues(r), j.minCCCues(r)...), j.torchRangeCues(r)...)
}

// torchRangeCues: torch's warning that names a GPU's compute capability
// and the range its build has kernels for. A GPU inside the range, or above
// it within the same major version (12.1 against 12.0: CUDA's binary
// compatibility), runs the build's kernels: not a GPU the build lacks.
func (j *judge) torchRangeCues(r *reading) []cue {
	c := torchCapability(j.f.Paste.Signatures)
	if c == "" {
		return nil
	}
	m := torchRange(r.low)
	if m == nil {
		return nil
	}
	cc, lo, hi := gpu.MustVersion(c), gpu.MustVersion(m[1]), gpu.MustVersion(m[2])
	if cc == nil || lo == nil || hi == nil || cc.Compare(lo) < 0 || cc.Compare(hi) > 0 && cc.Major() != hi.Major() {
		return nil
	}
	return []cue{{gpu.CauseArchUnsupported, -5, fmt.Sprintf("torch's build has kernels for compute capability %s to %s, which run on this GPU's %s: its warning is not the cause", m[1], m[2], c)}}
}

// minCCRE: a minimum compute capability said in words ("requires a
// minimum compute capability of 6.0", "compute capability 7.0 or
// higher").
var minCCRE = mustCue(`\bminimum (?:required )?(?:cuda )?compute capability(?: required)?(?: of| is|:)? ?(\d{1,2}\.\d)\b|\bcompute capability (?:of )?(\d{1,2}\.\d) or (?:higher|above|later|newer)\b|\bcompute capability (?:>=|≥|of at least|at least) ?(\d{1,2}\.\d)\b`,
	"compute capability")

// minCCCues: a GPU of the report below a minimum compute capability the
// report names has no kernels in that build.
func (j *judge) minCCCues(r *reading) []cue {
	q, m := r.quoteGroups(minCCRE)
	floor := gpu.MustVersion(firstGroup(m))
	if q == "" || floor == nil {
		return nil
	}
	for _, g := range j.f.NVML.GPUs {
		if cc := gpu.MustVersion(g.CC); cc != nil && cc.Compare(floor) < 0 {
			return []cue{{gpu.CauseArchUnsupported, 4, fmt.Sprintf("%s: %s (compute capability %s) is below it, so the build has no kernels for it", said(q), g.Name, g.CC)}}
		}
	}
	return nil
}

// driverAbsentRE: the NVIDIA driver (a branch of it) said to be missing
// or not offered ("470 drivers are missing in the listing", "no driver
// for this kernel").
var driverAbsentRE = mustCue(`\b(?:nvidia |\d{3} )?drivers? (?:are|is) missing\b|\bno (?:nvidia |\d{3} )?drivers? (?:for|available for) (?:this |the |my |the new )?(?:kernel|card|gpu)\b|\b(?:nvidia |gpu )?drivers? (?:is |are |was |were )?not (?:getting |being )?installed\b|\bnot having (?:the )?(?:nvidia |gpu )?drivers? installed\b`,
	"missing", "no driver", "no nvidia driver", "drivers for", "driver for", "available for", "not installed", "getting installed", "being installed", "driver installed", "drivers installed")

// openModuleRE: NVIDIA's open kernel module named (the open flavour
// against the closed one, nvidia-open, the GSP it needs).
var openModuleRE = mustCue(openVsClosed+`|\bnvidia-open\b|\bopen gpu kernel modules\b|\bnvidia-driver-\d{3}-open\b|\bgsp\b`, "open driver", "open kernel", "open module", "closed", "proprietary", "nvidia-open", "open gpu", "-open", "gsp")

// openVsClosedRE: the open kernel module said to fail where the closed
// one works: a problem told, in whatever words.
var openVsClosedRE = mustCue(openVsClosed, "open driver", "open kernel", "open module", "closed", "proprietary")

const openVsClosed = `\bopen (?:kernel )?(?:driver|modules?)\b[^\n]{0,60}\b(?:closed|proprietary)\b|\b(?:closed|proprietary) (?:kernel )?(?:driver|modules?)\b[^\n]{0,60}\bopen (?:kernel )?(?:driver|modules?)\b`

// buildNoCUDARE: a program's build said not to support CUDA ("the
// linux release binary not support cuda device", "this version doesn't
// support CUDA").
var buildNoCUDARE = mustCue(`\b(?:binary|build|release|version|exe|package|wheel|gnu|image)\b[^\n]{0,30}\b(?:not|doesn't|does not|don't|do not|no) supports? (?:for )?(?:the )?cuda\b|\bno support for (?:the )?(?:gpus?|cuda)\b[^\n]{0,30}\b(?:version|build|release|image|binary|package)\b|\b(?:not|doesn't|does not|didn't|did not|won't|never) (?:install|get|pull|give)s? (?:the |a )?(?:cuda|gpu) (?:version|build|wheel)s? of (?:torch|pytorch|tensorflow|paddle\w*|jax)\b`,
	"support cuda", "support for cuda", "support the cuda", "supports cuda", "support for gpu", "support for the gpu", "support for the cuda", "cuda version of", "gpu version of", "cuda build of", "gpu build of", "cuda wheel of", "gpu wheel of", "cuda versions of", "gpu versions of", "cuda builds of", "gpu builds of", "cuda wheels of", "gpu wheels of")

// toolkitOnlyRE: the CUDA toolkit said to be installed, and the program
// still not on the GPU ("I have the newest cuda installed 12.2 ... I can't
// run on cuda").
var toolkitOnlyRE = mustCue(`\b(?:installed|have|got) (?:the )?(?:newest |latest |new )?cuda(?: toolkit)?(?: \d+(?:\.\d)?)?(?: installed)?\b[^\n]{0,80}\b(?:can't|cannot|can not|doesn't|does not|won't|not) (?:run|use|work|detect|find|see)`,
	"installed cuda", "have cuda", "got cuda", "the cuda", "newest cuda", "latest cuda", "new cuda")

// beforeTuring: a GPU of compute capability cc predates Turing (7.5), the
// oldest that CUDA 13 and NVIDIA's open kernel module support.
func beforeTuring(cc string) bool { return cc != "" && !gpu.VersionAtLeast(cc, "7.5") }

// cuda13RE: a build for CUDA 13 named (cu130, "built with CUDA 13").
var cuda13RE = mustCue(`\bcu13\d\b|\bcuda[ -]?13(?:\.\d)?\b`, "cu13", "cuda 13", "cuda-13", "cuda13")

// torchApps are programs that run on torch, named without it.
var torchApps = []string{"comfy", "webui", "web ui", "a1111", "automatic1111", "forge", "fooocus", "kohya", "ultralytics", "yolov",
	"diffusers", "transformers", "whisper", "invokeai", "stable diffusion", "stable-diffusion", "sd-scripts", "xtts", "coqui", "rvc", "sovits",
	"llama-factory", "llamafactory", "vllm", "detectron", "mmdet", "lightning", "accelerate", "deepspeed", "timm"}

var variantRE = mustCue(`\bcu1[0-3][0-9]\b`)

// variantLacks is the first wheel variant named (cu129) of which no
// official torch release in the matrix has kernels for cc; "" when each
// named one has a release that does.
func (j *judge) variantLacks(names []string, cc string) string {
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		known, covered := false, false
		for _, rel := range j.m.Torch {
			for _, v := range rel.Variants {
				if v.Name != name {
					continue
				}
				known = true
				covered = covered || compat.Covers(compat.SplitArchs(v.Archs), compat.SplitArchs(v.PTX), cc, "", "").Covered
			}
		}
		if known && !covered {
			return name
		}
	}
	return ""
}

// releaseCovers says whether any official wheel of torch's release has
// kernels for cc (known: the release is in the matrix).
func (j *judge) releaseCovers(pk gpu.Package, cc string) (covered, known bool) {
	rel, ok := j.m.TorchRelease(pk.Version)
	if !ok {
		return false, false
	}
	for _, v := range rel.Variants {
		if pk.CUDA != "" && gpu.MajorMinor(v.CUDA) != gpu.MajorMinor(pk.CUDA) {
			continue
		}
		if compat.Covers(compat.SplitArchs(v.Archs), compat.SplitArchs(v.PTX), cc, "", "").Covered {
			return true, true
		}
	}
	return false, pk.CUDA == "" || len(rel.Variants) > 0
}

var (
	smiFailsRE = mustCue(`nvidia-smi(?:\.exe)?['"\x60]?\s*(?::\s*)?(?:(?:is|was) not found|is not recognized|not recognized|command not found|not found|no such file|doesn't work|does not work|didn't work|did not work|fails|failed|returns? (?:an )?error|gives (?:an )?error|shows? (?:an )?error)|nvidia-smi[^\n]{0,20}(?:nicht gefunden|introuvable|no se encuentra|no funciona|não encontrado|não funciona|не найден|не работает)|nvidia-smi[^\n]{0,30}(?:报错|找不到|无法|用不了|不能用|見つかりません|見つからない|動かない|動かなく|使えない|찾을 수 없|작동하지 않|no puede comunicarse)|couldn't communicate with the nvidia driver|no devices were found`)
	noDriverRE = mustCue(`\bno nvidia driver\b|\bdrivers? (?:is |are |was |were )?(?:not|isn't|aren't|wasn't|weren't) (?:installed|loaded|found|running)\b|\bdriver[^\n]{0,20}\binstall(?:ation|er|ing)?\b[^\n]{0,20}\b(?:fails?|failed|failure|errors?)\b|\bnever\b[^\n]{0,20}\bdriver\b|\b(?:uninstalled|removed|purged|deleted) (?:the |my |all )?(?:nvidia )?(?:gpu |graphics )?drivers?\b|\b(?:kernel )?module (?:is )?not loaded\b|\b(?:kernel )?modules? (?:does not|doesn't|did not|didn't|won't|will not|not|fails? to|failed to) load\b|\blsmod\b[^\n]{0,40}\b(?:nothing|empty|no output)\b|\byellow (?:exclamation|triangle)|\bno tengo (?:el |los |ning[uú]n )?drivers?\b|\bsin (?:el |los )?drivers?\b|\bdrivers?[^\n]{0,20}\bno (?:est[aá]n? )?instalados?\b|\bdrivers?[^\n]{0,20}\bn[aã]o (?:est[aá]o? |foi |foram )?instalad[oa]s?\b|\btreiber\b[^\n]{0,20}\bnicht (?:installiert|geladen)|\bnicht installiert\b[^\n]{0,20}\btreiber|\bpilotes?\b[^\n]{0,20}\bpas (?:install|charg)|没有(?:安装)?(?:显卡|nvidia|英伟达|n卡)?驱动|驱动没(?:有)?装|ドライバ[^\n]{0,10}(?:入っていない|入れていない|インストールされていない|インストールしていない)|(?:忘了装|没装|未安装|没安装)(?:显卡|nvidia|n卡)?驱动|\bnomodeset\b|\bllvmpipe\b|드라이버[^\n]{0,10}(?:설치되지|설치하지|없)|\bno he instalado (?:el |los |ning[uú]n )?(?:drivers?|controlador(?:es)?)\b|驱动(?:掉了|丢了|没了)|\bm[óo]dulo (?:de )?nvidia no (?:se )?carga\b|\bwithout (?:the |a |any )?(?:nvidia )?driver\b|\b(?:haven't|have not|did not|didn't|never|not yet) install(?:ed)? (?:any |the |a |an )?(?:nvidia |gpu |graphics )?drivers?\b|\bno (?:nvidia |gpu |graphics )?drivers? (?:is |are )?installed\b|\bcode 43\b|\berror 43\b|\bsecure boot\b|\bnouveau\b|\bdkms\b|\bmodprobe\b|驱动(?:没有|未)安装|没有(?:安装)?驱动`,
		"driver", "controlador", "dulo nvidia", "dulo de nvidia", "code 43", "error 43", "secure boot", "nouveau", "dkms", "modprobe", "nomodeset", "llvmpipe", "驱动", "没有", "module not loaded", "module is not loaded", "module", "modules", "lsmod", "yellow", "no tengo", "sin ", "treiber", "nicht installiert", "pilote", "ドライバ", "드라이버")
	// freshInstallRE: a Linux just installed (a fresh Windows gets a
	// driver from Windows Update) or a machine just built.
	freshInstallRE = mustCue(`\bfresh(?:ly)? (?:installed )?(?:ubuntu|debian|linux|fedora|mint|arch)\b|\b(?:ubuntu|debian|fedora|mint|pop!?_?os)\b[^\n]{0,20}\bfresh(?:ly)? (?:install|installed|installation)\b|\bfresh (?:install|installation|reinstall) of (?:ubuntu|debian|linux|fedora|mint|arch)\b|\b(?:just|newly) (?:installed|set up|reinstalled) (?:ubuntu|linux|debian|fedora|arch|mint)\b|\b(?:built|building|got|bought) a new (?:pc|computer|machine|rig|workstation|laptop)\b|重装(?:了)?系统|新装的系统|新装系统`,
		"fresh", "just", "newly", "a new", "重装", "新装")
	// gpuOffRE: a graphics mode that switches the NVIDIA GPU off.
	gpuOffRE = mustCue(`\bprime-select (?:intel|on-demand)\b|\b(?:intel|integrated) (?:graphics )?mode\b|\bsystem76-power graphics integrated\b|\b(?:switched|switch|switching|set) (?:it |the laptop |my laptop )?(?:to|into) (?:the )?(?:integrated|intel|igpu|hybrid-off)(?: graphics| gpu| mode)?\b|\bnvidia (?:gpu|card) is (?:off|disabled|switched off|turned off)\b`,
		"prime-select", "intel graphics", "intel mode", "integrated graphics mode", "integrated mode", "system76-power", "is off", "is disabled", "switched off", "turned off", "to integrated", "to intel", "to igpu", "into integrated", "to the integrated")
	basicDisplayRE = mustCue(`basic display adapter|standard vga (?:graphics )?adapter|基本显示适配器|\b(?:not|doesn't|does not|isn't|is not|no longer) (?:show(?:ing|s)?|listed|appear(?:ing|s)?|visible)(?: up)? in (?:the )?device manager\b`,
		"basic display adapter", "standard vga", "基本显示适配器", "device manager")
	afterUpdRE = mustCue(`(?:升级|更新)(?:了)?内核|内核(?:更新|升级)|カーネル(?:を)?(?:更新|アップデート)|커널 업데이트|\bactualizar el kernel\b|\bactualización del kernel\b|\bkernel-?update\b|\bafter (?:a |the |an )?(?:latest |last |recent )?(?:kernel|system|ubuntu|windows|os|driver|apt|dnf|yum|software|nvidia driver|gpu driver)? ?(?:\d+ )?(?:update|upgrade)|\bafter (?:i |we )?(?:updated|upgraded|updating|upgrading) (?:the |my )?(?:nvidia )?(?:gpu |graphics )?drivers?\b|\b(?:a |after a |made a )?(?:system )?reboot(?:ed)?\b[^\n]{0,30}\b(?:everything|it|all) (?:went|works?|worked|was) (?:fine|ok|well|again)\b|\b(?:updated|upgraded) (?:the |my )?(?:kernel|system|ubuntu|os)\b|\bneeds? (?:a )?reboot\b|\bwithout (?:a )?reboot|\b(?:forgot|forget|forgotten) to (?:reboot|restart)\b|\b(?:didn't|did not|haven't|have not|not yet) (?:reboot|restart)(?:ed)?\b`)
	// The framework's "driver too old" told in words ("the msg is that my
	// Nvidia version is too old"): its own error, paraphrased.
	tooOldRE = mustCue(`\b(?:msg|message|error|it|says?|said|told me|tells me)\b[^\n?]{0,30}\b(?:nvidia|driver|gpu driver|nvidia driver)(?: version)? (?:is|was) too old\b[^?\n]{0,40}(?:$|[.!,;:\n])`,
		"too old")
	// torch updated or upgraded between the outputs a report shows: the
	// versions before and after are one install, not two.
	torchUpdateRE = mustCue(`\b(?:updat|upgrad)(?:e|ed|es|ing)\s+(?:my\s+|the\s+)?(?:py)?th?orch\b`, "pdat", "pgrad")
	oldDriverRE   = mustCue(`\b(?:old|older|outdated) (?:nvidia )?driver|\bdriver (?:is )?(?:too )?old\b|\bupdate (?:the |my |your )?(?:nvidia |gpu )?driver|\bupgrad(?:e|ing) (?:the |my |your )?(?:nvidia |gpu )?driver`,
		"driver")
	// offloadRE: a model's layers said to be offloaded to the GPU, so
	// many of so many ("offloading 10/51 layers to GPU", llama.cpp's
	// "offloaded 10/51 layers to GPU").
	offloadRE = mustCue(`\boffload(?:ed|ing|s)? (\d+) ?(?:/|of|out of) ?(\d+) (?:repeating )?layers to (?:the )?gpu\b`, "offload")
	// cudaRuntimeMissingRE: the CUDA runtime libraries a program loads said
	// not to be on the machine ("I didn't have CUDA toolkit installed",
	// "copy the DLLs from the CUDA 13 install folder").
	cudaRuntimeMissingRE = mustCue(`\b(?:didn't|did not|don't|do not|doesn't|does not|haven't|have not|hadn't|had not)\b[^\n]{0,12}\b(?:have|had|install|installed|ship|include|bundle)\b[^\n]{0,10}\bcuda (?:toolkit|runtime|libraries|libs|dlls?)\b|\bcuda (?:toolkit|runtime|libraries|libs|dlls?) (?:is |are |was |were )?(?:not installed|missing|not found)\b|\binstall(?:ed|ing)? (?:the )?cuda (?:toolkit|runtime)\b[^\n]{0,40}\b(?:works?|worked|fixed|solved|back to working)\b|\bcop(?:y|ied|ying)\b[^\n]{0,60}\bfrom (?:the )?cuda\b[^\n]{0,20}\b(?:install|folder|directory|bin)\b`,
		"cuda toolkit", "cuda runtime", "cuda librar", "cuda libs", "cuda dll", "from cuda", "from the cuda")
	// placedRE: tensors said to be made or left on another device than
	// the model's ("some tensors get placed on cuda:0", "attention bias
	// was created on cuda:0", "zero_points.device.type cpu" beside cuda).
	placedRE = mustCue(`\b(?:tensors?|bias|masks?|buffers?|inputs?|outputs?|zero[_ ]points?|members?|parameters|params|weights|embeddings?|labels|targets)\b[^\n]{0,30}\b(?:created|placed|allocated|initiali[sz]ed|put|left|stays?|remains?|kept)\b[^\n]{0,15}\bon (?:cuda:\d|the cpu|cpu|gpu ?0|device 0)\b|\bdevice\.type\W{0,3}cuda\b[^\n]{0,60}\bdevice\.type\W{0,3}cpu\b|\bdevice\.type\W{0,3}cpu\b[^\n]{0,60}\bdevice\.type\W{0,3}cuda\b`,
		"created", "placed", "allocated", "initiali", " put", "left", "stay", "remain", "kept", "device.type")
	// driverReplacedRE: the NVIDIA driver said to have been replaced or
	// removed, or reinstalling it said to have fixed it.
	driverReplacedRE = mustCue(`\b(?:nvidia |gpu |graphics |video )?drivers? (?:were|was|got|had been|have been|has been) (?:replaced|removed|uninstalled|overwritten|deleted|wiped)\b|\breinstall(?:ed|ing)? (?:the |my )?(?:native |official |proper |original )?(?:nvidia |gpu |graphics )?drivers?\b[^\n]{0,40}\b(?:solved|fixed|works?|worked|helped|resolved)\b`,
		"driver")
	// driverRequiredRE: a driver branch or version said to be required
	// ("image 23-12 requires driver version 545 or later", "CUDA 13
	// requires driver >=580.65.06", "needs a 570+ driver").
	driverRequiredRE = mustCue(`\b(?:requires?|required|needs?|needed|wants?|minimum(?: of)?|at least)\b[^\n]{0,20}?\b(?:nvidia )?drivers?(?: version)?\s*(?:>=|≥|of|version|r)?\s*(\d{3})(?:\.\d+){0,2}\b(?:\s*(?:or (?:later|newer|above|higher|greater)|\+|and (?:up|above|newer)))?|\b(?:requires?|needs?|wants?)\b[^\n]{0,12}?\b(?:an? )?(\d{3})(?:\.\d+){0,2}\+? (?:or (?:later|newer) )?(?:nvidia )?driver\b`,
		"driver")
	// cudaRequiredRE: the machine's CUDA and, after it, the CUDA a program
	// requires ("my CUDA is 12.2 but F5-TTS requires at least 12.4").
	cudaRequiredRE = mustCue(`cuda[^\n\d]{0,12}(\d{2}\.\d)[^\n]{0,80}?(?:requires?|needs?|required|最低要求|要求|minimum|at least|最低|>=|≥)[^\n\d]{0,20}(\d{2}\.\d)`,
		"require", "need", "要求", "minimum", "at least", "最低", ">=", "≥")
	// driverIncompatRE: the driver said not to run the CUDA a build needs
	// ("this nvidia drivers are not compatible with cuda 12+").
	driverIncompatRE = mustCue(`\bdrivers? (?:is |are )?(?:not |n't |in)compatible with cuda\b|\bmismatch between (?:the )?(?:old )?(?:nvidia )?drivers? and (?:the )?cuda\b`,
		"compatible with cuda", "mismatch between")
	// upgradeFixedRE: a driver upgrade said to have made it work ("I
	// upgraded the nvidia driver to version 560, and then it works").
	upgradeFixedRE = mustCue(`\b(?:upgrad|updat)(?:ed|ing) (?:the |my )?(?:nvidia |gpu |graphics )?drivers?\b[^\n]{0,50}\b(?:(?:and )?(?:then |now )?it (?:works|worked|runs)|fixed (?:it|the)|solved (?:it|the)|resolved (?:it|the))\b`,
		"upgraded", "updated", "upgrading", "updating")
	oomRE = mustCue(`\bout of memory\b|\boom\b|显存不足|显存溢出|显存不够|メモリ不足|메모리가 부족|메모리 부족|메모리 초과|нехватка (?:видео)?памяти|недостаточно (?:видео)?памяти|memoria insuficiente|sin memoria|占用显存|显存被占用|\b(?:still )?(?:hold|holds|holding|occupy|occupies|occupying)(?: the)? (?:gpu |video )?memory\b|\b(?:does not|doesn't|won't|will not|cannot|can't) fit (?:in|into|on)\b|\b\d{1,3}%/\d{1,3}% cpu/gpu\b|\b(?:vram|gpu memory|video memory) (?:issue|problem|limit|limitation)s?\b|\bnot enough (?:vram|gpu memory|video memory)\b|\bran out of (?:vram|gpu memory|video memory)\b|\b(?:vram|gpu memory) (?:is |was |gets? )?(?:full|exhausted|maxed out)\b`,
		"vram", "gpu memory", "video memory", "out of memory", "oom", "显存不足", "显存溢出", "显存不够", "メモリ不足", "메모리", "памяти", "memoria", " fit ", "cpu/gpu", "占用显存", "显存被占用", "memory")
	selectRE = mustCue(`cuda_visible_devices|distributeddataparallel|\bddp\b|\bmulti[- ]gpus?\b|\bmultiple gpus\b|\bdevice\s*=\s*['"]?(?:cuda:)?[1-9]\b|\bcuda:[1-9]\b|--gpus? [1-9]\b|--gpu_ids?\b|\bgpu_ids?\b|\bdevice_ids?\b|\blocal_rank\b|\bsecond gpu\b|\bgpu ?(?:id|index)\b|\bslurm\b|\bsrun\b|--gres`)
	// neverMovedRE: the model or the data never moved to the GPU, in
	// words ("no code that moves the model and data between CPU and GPU",
	// "self.device is defined but never used").
	neverMovedRE = mustCue(`\b(?:never|not|no code|doesn't|does not|don't|do not|didn't|did not|isn't|is not)\b[^\n]{0,60}\b(?:mov\w*|transfer\w*|switch\w*|send\w*|sent|put\w*|load\w*|add\w*)\b[^\n]{0,40}(?:\b(?:to|onto|into|on) (?:the )?(?:gpu|cuda|device)\b|\bbetween (?:the )?cpu and (?:the )?gpu)|\bdevice\W{0,3} (?:is |was )?defined\b[^\n]{0,30}\b(?:not|never) used\b|\b(?:models?|networks?|weights|pipeline)\b[^\n]{0,30}\b(?:loaded|kept|stays?|remains?|left) (?:in|into|on|onto) (?:the )?cpu\b[^\n]{0,40}\b(?:not|never|instead of)\b|(?:没有|没|未|无法|不能|不会)(?:被)?(?:正确)?(?:随之)?(?:转移|移动|迁移|放|加载)(?:到)? ?(?:gpu|cuda|显卡)|(?:无法|没有|未)(?:正确)?随之转移`,
		"to the gpu", "to gpu", "to cuda", "to the device", "to device", "cpu and gpu", "cpu and the gpu", "defined", "on the gpu", "on gpu", "onto", "into", "on cuda", "on the device", "on device", "cpu", "转移", "移动", "迁移", "放", "加载")
	// memoryHeldRE: GPU memory not given back ("the GPU memory is not
	// released after the process is stopped").
	memoryHeldRE = mustCue(`\bmemory (?:is |was )?(?:not|never) (?:released|freed|cleared)\b|\bmemory (?:is )?still (?:occupied|in use|held|allocated)\b|显存仍在占用|显存没有被清理|显存没有被释放|\b(?:not|never) (?:release|releasing|free|freeing|clear|clearing)s? (?:the )?(?:gpu |video |cuda )?memory\b|显存不释放|显存没有释放|(?:无法|不能|没法)释放显存|显存(?:无法|不能)释放|释放不了显存|强占(?:了)?显存|\b(?:another|other|second|a different) (?:program|process|application|app|job|model|notebook|kernel)s?\b[^\n]{0,40}\b(?:uses?|using|takes?|taking|occup\w*|holds?|holding|eats?|eating)\b[^\n]{0,25}\b(?:gpu memory|video memory|vram|(?:a lot of |most of the |all the )?(?:gpu |video )?memory)\b|다른 (?:사용자|프로그램|프로세스)[^\n]{0,20}(?:사용|점유)`,
		"released", "freed", "cleared", "release", "free", "clear", "显存", "still", "another", "other", "second", "different", "다른")
	// oldGPUDroppedRE: support for older GPUs said to be gone from a build
	// ("pytorch support for older GPUs like mine was removed").
	oldGPUDroppedRE = mustCue(`\bsupport for (?:older|old|my) (?:gpus?|cards?|graphics cards?)\b[^\n]{0,40}\b(?:removed|dropped|gone|ended)\b|\b(?:older|old) (?:gpus?|cards?)\b[^\n]{0,40}\b(?:no longer supported|not supported any ?more|were removed|was removed|were dropped|was dropped)\b|\b(?:did not|didn't|does not|doesn't|no longer) support (?:the )?(?:old|older)\b[^\n]{0,30}\b(?:card|gpu|cuda version|architecture)\b|\b(?:my |the )?gpu is too old\b`,
		"removed", "dropped", "gone", "ended", "no longer", "not supported", "support the old", "support old", "support the older", "support older", "too old")
	// visibleTypoRE: CUDA_VISIBLE_DEVICES as written, misspellings too
	// (CUDA_VISABLE_DEVICES, CUDA_VISIBLE_DEVICE).
	visibleTypoRE = mustCue(`\bcuda_vis[a-z]*_devices?\b|\bcuda_visible_devi[a-z]*\b`, "cuda_vis")
	// settingAskedRE: a setting, flag or option that makes a program use
	// the GPU, asked for or said missing ("is there a config to make it
	// use GPU", "am I missing some flag", "no GPU in the device options").
	settingAskedRE = mustCue(`\b(?:is there|are there|missing|need)(?: a| an| some| the| any)? (?:config|configuration|setting|option|flag|parameter|argument|switch|env(?:ironment)? var\w*)s?\b|\bdevice options?\b|\bload device\W{0,3}cpu\b`,
		"config", "setting", "option", "flag", "parameter", "argument", "switch", "env var", "environment var", "load device")
	// gpuUnsupportedRE: the GPU said not to be supported ("50 series
	// cards are not supported", "CUDA 3.5 is not supported", 不支持50系列的显卡).
	gpuUnsupportedRE = mustCue(`\b(?:no|add|adding|need|needs|request(?:ing)?|want) support for (?:the |my |this |our |new(?:er)? )?(?:blackwell|rtx ?50\w*|50[- ]?series|50xx|sm_?1[02]0|(?:rtx )?50[6-9]0)|\bhave no support for (?:it|them|my (?:gpu|card))|\b(?:gpu|card) (?:is |seems )?(?:quite|very|pretty|too|so|really) old\b|\bunable to support\b|\b(?:gpu|card|graphics card|50[- ]?series|rtx ?50\d0(?: ?ti)?|blackwell|kepler|maxwell|pascal)s? (?:is |are )?(?:not|isn't|aren't|no longer) supported\b|\b(?:does not|doesn't|do not|don't|no longer) support (?:my |this |the |our )?(?:gpu|card|graphics card|50[- ]?series|rtx ?50|blackwell|kepler|maxwell|pascal)|\b(?:cuda|compute) capability [1-5]\.\d (?:is )?not supported|\bcuda [1-5]\.\d is not supported\b|不支持[^\n，。]{0,8}(?:显卡|50系|gpu)|(?:显卡|50系列?)[^\n，。]{0,6}不支持`,
		"supported", "support", "不支持", " old")
	// wrongCardCJKRE: another GPU used than the one chosen, in Chinese
	// ("我选择1060的时候它用750Ti", "GPU编号识别错误").
	wrongCardCJKRE = mustCue(`(?:选择|选了|指定|设置)(?:了)?[^\n，,。]{0,15}(?:的时候|时|后)[，,]?\s*(?:它|却|还是)?(?:会)?(?:用|使用|跑在)(?:了)?[^\n，,。]{0,12}(?:卡|gpu|\d{3,4})|gpu ?编号[^\n]{0,6}(?:错误|不对|错了)|显卡编号[^\n]{0,6}(?:错误|不对|错了)`,
		"选择", "选了", "指定", "设置", "编号")
	// switchIgnoredRE: the device switched to the GPU, to no effect
	// ("trying to change it to gpu doing nothing").
	switchIgnoredRE = mustCue(`\b(?:change|changing|switch|switching|set|setting)\b[^\n]{0,15}\bto (?:the )?(?:gpu|cuda)\b[^\n]{0,20}\b(?:does nothing|doing nothing|did nothing|has no effect|had no effect|no effect|nothing happens|nothing changes)`,
		"nothing", "no effect")
	// chooseGPURE: how to choose the GPU a program uses, asked.
	chooseGPURE = mustCue(`\b(?:choose|select|pick|specify|assign)\b (?:which|the|a specific|a particular|one|a|an?other) (?:gpu|card|device(?: [^=\s]|$))|\badd (?:an? |the )?(?:option |flag |argument |parameter )?(?:--)?(?:device[_-]index|gpu[_-]ids?|device[_-]ids?|gpu[_-]index)\b|(?:指定|选择|手动设置|设置) ?(?:gpu|显卡|device|设备|卡)|(?:gpu|显卡|device|设备)を(?:指定|選択)`,
		"choose", "select", "pick", "specify", "assign", "device_index", "device-index", "gpu_id", "gpu-id", "device_id", "device-id", "gpu_index", "gpu-index", "指定", "选择", "设置", "選択")
	// gpuIDSetRE: a program's GPU index set, or defaulting, to another
	// than 0 ("the default gpu_device is set to 1").
	gpuIDSetRE = mustCue(`\b(?:gpu_device|gpu_id|gpu-id|gpu_ids|gpu-device-id|gpu_device_id|device_id|device-id|gpu id|gpu index|device index)\b[^\n]{0,25}\b(?:set to|defaults? to|default is|is|=)\s*[1-9]\b`,
		"gpu_device", "gpu_id", "gpu-id", "gpu-device", "device_id", "device-id", "gpu id", "gpu index", "device index")
	// otherCardRE: one GPU used instead of another, both named ("uses the
	// GTX 1050 instead of the RTX 3090").
	otherCardRE = mustCue(`\b(?:uses?|using|picks?|selects?|runs? on|chooses)\b[^\n]{0,20}\b(?:gtx|rtx|quadro|tesla|geforce|titan)\b[^\n]{0,20}\binstead of (?:the |my )?(?:nvidia )?(?:gtx|rtx|quadro|tesla|geforce|titan)\b`, "instead of")
	// vramRE and modelSizeRE: the GPU's memory and the model's size, in
	// words ("the GPU has 4GB VRAM and the model is 8GB").
	vramRE      = mustCue(`\b(\d{1,3}(?:\.\d)?) ?gi?b (?:of )?(?:vram|gpu memory|video memory|graphics memory|显存)|(?:vram|gpu memory|显存)(?: is| of|:)? (\d{1,3}(?:\.\d)?) ?gi?b\b`, "vram", "gpu memory", "video memory", "graphics memory", "显存")
	modelSizeRE = mustCue(`\bmodel (?:is|size is|needs|takes|requires|weighs) (?:about |around |~)?(\d{1,3}(?:\.\d)?) ?gi?b\b`, "model")
	mismatchRE  = mustCue(`same device|\bin different devices\b|\.to\(device\)|\bmodel\.cuda\(\)|\.to\(['"]cuda|\bforgot to move\b|\bcpu tensors?\b|\bon different devices\b`)
	gpuIdleRE   = mustCue(`gpu (?:usage|utili[sz]ation|util|load) (?:is |stays |remains |at |of )?(?:0|zero|low|very low)|\b0 ?% (?:gpu )?(?:usage|utili[sz]ation|util)\b|\bnot using (?:the |my )?gpu\b|\b(?:uses?|using|runs on|running on|trains on|training on|always on|stays on|is on) (?:the |my )?cpu\b|\binstead of (?:the |my )?gpu\b`,
		"gpu usage", "gpu util", "gpu load", "not using", "cpu", "instead of")
	cudnnWordsRE = mustCue(`cudnn[^\n]{0,60}(?:not found|missing|mismatch|version|error|failed|cannot|could not|can't)`)
	// cudnnAbsentRE: cuDNN said not found or never installed, with the
	// words before it ("can't find cudnn", "never requests
	// nvidia-cudnn-cu12", "no cuDNN").
	cudnnAbsentRE = mustCue(`(?:can't|cannot|can not|couldn't|could not|unable to|fails? to|failed to) (?:find|load|locate|open) (?:the )?cudnn|(?:\bno|\bwithout|\bnever (?:requests?|installs?|ships?|includes?|bundles?|pulls?))\W{1,3}(?:the )?\W?(?:nvidia-)?cudnn\b`, "cudnn")
	cudnnLibRE    = mustCue(`\bcudnn\w*64_\d+\.dll\b|\blibcudnn\w*\.so\.\d+`, "cudnn")
	tfLibsRE      = mustCue(`(?:cudart|cublas|cufft|curand|cusolver|cusparse)(?:64_\d+\.dll|\.so\.\d+)`)
)

// variantCUDA is the CUDA a wheel variant's name says (cu121: 12.1, cu92:
// 9.2), or "".
func variantCUDA(name string) string {
	d := strings.TrimPrefix(name, "cu")
	switch len(d) {
	case 2:
		return d[:1] + "." + d[1:]
	case 3:
		return d[:2] + "." + d[2:]
	}
	return ""
}

// driverLacksCUDA: the driver, as the report shows it, runs CUDA up to
// dc, and a build of the CUDA want needs more: another major, or before
// CUDA 11 (minor version compatibility) a newer minor.
func driverLacksCUDA(dc, want string) bool {
	w, d := gpu.MustVersion(want), gpu.MustVersion(dc)
	return w != nil && d != nil && w.Compare(d) > 0 && (w.Major() != d.Major() || w.Major() < 11)
}

// cueDriverBelowBuild: the matrix on the driver the report shows and the
// CUDA build it names (torch's +cu121, a cu121 index or wheel): a driver
// that cannot run that CUDA leaves the GPU unused whatever the build.
func (j *judge) cueDriverBelowBuild(r *reading) []cue {
	dc, dv := j.driverCUDA(), j.driverVersion()
	if dc == "" {
		// The driver said in words: a branch alone (470) counts as its
		// newest release, so that no build is called too new for it
		// wrongly.
		if dv = j.f.Paste.Prose["driver_words"]; !strings.Contains(dv, ".") && dv != "" {
			dv += ".999"
		}
		dc = j.cudaOfDriver(dv)
		dv = strings.TrimSuffix(dv, ".999")
	}
	if dc == "" {
		return nil
	}
	var wants []string
	if pk, ok := j.reportTorch(); ok && pk.CUDA != "" {
		wants = append(wants, pk.CUDA)
	}
	for _, v := range variantRE.FindAllString(r.low, 4) {
		if c := variantCUDA(v); c != "" {
			wants = append(wants, c)
		}
	}
	q := compat.WheelQuery{DriverVersion: dv, DriverCUDA: dc, Windows: j.windows()}
	if dv == "" || strings.HasSuffix(q.DriverVersion, ".999") {
		q.DriverVersion = "" // a branch alone: its CUDA, not its exact floor
	}
	for _, want := range wants {
		if ok, why := j.m.DriverRuns(q, want); !ok || q.DriverVersion == "" && driverLacksCUDA(dc, want) {
			if why == "" {
				why = fmt.Sprintf("the driver (%s) runs CUDA up to %s, and the build the report names needs CUDA %s", dv, dc, want)
			}
			return []cue{{gpu.CauseDriverTooOld, 3, why + " [compat.yaml]"}}
		}
	}
	if len(wants) > 0 && j.driverShown() {
		// The driver shown runs every CUDA build named: not too old.
		return []cue{{gpu.CauseDriverTooOld, -2, fmt.Sprintf("the driver shown (%s, CUDA up to %s) runs the CUDA build named (%s) [compat.yaml]", orUnknown(dv), dc, strings.Join(wants, ", "))}}
	}
	return nil
}

// driverShown: the report shows the driver as a tool prints it (an
// nvidia-smi table, collect_env, nvidia-smi -q), not in words.
func (j *judge) driverShown() bool {
	return j.driverCUDA() != "" || j.driverVersion() != ""
}

func orUnknown(s string) string {
	if s == "" {
		return "version not shown"
	}
	return s
}

// driverOldCues: a driver too old for what the program needs, said in
// words or required by the report.
func (j *judge) driverOldCues(r *reading) []cue {
	var out []cue
	if q := r.cudaBelowRequired(); q != "" && !j.blackwell() {
		out = append(out, cue{gpu.CauseDriverTooOld, 2.5, said(q) + ": the machine's CUDA is older than what the program needs; the driver sets the newest CUDA it can run, so a newer driver (not only a toolkit) is needed"})
	}
	if q, req := r.driverRequired(); q != "" && !j.driverAtLeast(req) {
		out = append(out, cue{gpu.CauseDriverTooOld, 2.5, said(q) + ": a driver at least this new is required, and nothing shows one"})
	}
	return append(out, r.firstSaid(gpu.CauseDriverTooOld,
		saying{tooOldRE, 3, ": the framework's own words when the driver is older than the CUDA it was built with"},
		saying{driverIncompatRE, 3, ": the driver cannot run the CUDA the framework was built for; a newer driver (or a build for an older CUDA) is needed"},
		saying{upgradeFixedRE, 3, ": a newer driver made it work, so the old one was too old for the framework's CUDA"},
		saying{oldDriverRE, 1.5, ""})...)
}

// saying is a pattern of the report's words, what its match weighs for a
// cause, and why (after the words quoted).
type saying struct {
	re     *catalog.Pattern
	weight float64
	why    string
}

// firstSaid is the cue, for cause c, of the first of sayings (in order of
// how much they say) that the report holds; none when it holds none.
func (r *reading) firstSaid(c gpu.Cause, sayings ...saying) []cue {
	for _, s := range sayings {
		if q := r.quote(s.re); q != "" {
			return []cue{{c, s.weight, said(q) + s.why}}
		}
	}
	return nil
}

// cueDriver: what the report says of the driver: nvidia-smi failing or
// answering, a driver missing, an update without a reboot, an old driver,
// one the matrix says cannot run the CUDA build named.
func cueDriver(j *judge, r *reading) []cue {
	out := j.cueDriverBelowBuild(r)
	works := j.f.NVML.Status == gpu.NVMLOK || r.quote(smiWorksRE) != ""
	inBox := j.f.Host.WSL > 0 || j.f.Host.Container != ""
	if q := r.quote(smiFailsRE); q != "" && !works {
		w := 3.0
		if inBox {
			w = 1.5 // inside a container or WSL the driver's absence is usually the box's doing
		}
		why := ": the driver does not answer"
		if strings.Contains(asciiLower(q), "no devices were found") {
			// The driver answers and finds no GPU: one absent (a cloud
			// machine without one: the cloud cue speaks for that) or one
			// it cannot take.
			w, why = 1.5, ": the driver answers but finds no GPU it can take"
			if r.quote(cloudRE) != "" {
				w = 0.5
			}
		}
		out = append(out, cue{gpu.CauseDriverMissing, w, said(q) + why})
	}
	if q := r.quote(noDriverRE); q != "" {
		w := 2.5
		if strings.Contains(asciiLower(q), "no such device") {
			w = 1 // the module is there and finds no NVIDIA device to bind: a GPU absent, passed through or taken by another driver
		}
		out = append(out, cue{gpu.CauseDriverMissing, w, said(q)})
	}
	if q := r.quote(driverAbsentRE); q != "" && !works {
		out = append(out, cue{gpu.CauseDriverMissing, 3, said(q) + ": no NVIDIA driver for this GPU (or this kernel) is installed or offered; the GPU needs a driver branch that supports it, built for the running kernel"})
	}
	if q := r.quote(openModuleRE); q != "" {
		w := 2.0
		if r.quote(openVsClosedRE) != "" {
			w = 3 // the open module said to fail where the closed one works
		}
		for _, g := range j.f.NVML.GPUs {
			if beforeTuring(g.CC) {
				w = 3.5 // a GPU before Turing: the open module cannot drive it at all
			}
		}
		out = append(out, cue{gpu.CauseDriverMissing, w, said(q) + ": NVIDIA's open kernel module drives only GPUs with a GSP (Turing, the 16 and 20 series, and later); an older GPU gets no driver from it and needs the proprietary module"})
	}
	if q := r.quote(basicDisplayRE); q != "" && !works {
		out = append(out, cue{gpu.CauseDriverMissing, 3.5, said(q) + ": Windows shows the card with its own fallback driver, or not at all: the NVIDIA driver is not installed (or the card is not seen)"})
	}
	if q := r.quote(freshInstallRE); q != "" && !works && j.noDriverSeen() {
		out = append(out, cue{gpu.CauseDriverMissing, 1.5, said(q) + ": a freshly installed system or new machine has no NVIDIA driver until one is installed"})
	}
	if q := r.quote(gpuOffRE); q != "" && !works {
		out = append(out, cue{gpu.CauseDriverMissing, 2.5, said(q) + ": the graphics mode switches the NVIDIA GPU (and its driver) off"})
	}
	if q := r.quote(driverReplacedRE); q != "" && !works {
		out = append(out, cue{gpu.CauseDriverMissing, 2.5, said(q) + ": the NVIDIA driver was removed or replaced (by Windows Update, another installer or a cleanup tool): the GPU has no working NVIDIA driver until it is reinstalled"})
	}
	if q := r.quote(afterUpdRE); q != "" && !works {
		out = append(out, cue{gpu.CauseDriverMissing, 1.5, said(q) + ": a driver or kernel updated without a reboot (or a module not rebuilt) leaves the old one loaded"})
	}
	out = append(out, j.driverOldCues(r)...)
	if works {
		ev := "nvidia-smi answers: the driver is installed and loaded"
		if q := r.quote(smiWorksRE); q != "" {
			ev = said(q) + ": the driver answers"
		}
		out = append(out, cue{gpu.CauseDriverMissing, -3, ev})
		if !inBox {
			out = append(out, cue{gpu.CauseWSLOrContainer, -1, ev})
		}
	}
	return out
}

var (
	// wrongGPURE: the program runs on another GPU than the one asked for,
	// or its device is fixed in the code (English, Chinese, Spanish,
	// Portuguese).
	wrongGPURE = mustCue(`\b(?:always|still|only) (?:uses?|using|runs? on|running on|trains? on|training on|picks?|goes to|selects?|starts? on|starting on|loads? on|loading on|opens? on)\s+(?:the |my )?(?:first|second|other|wrong|1st|2nd|gpu ?\d|cuda:\d|card ?\d|device ?\d|\d(?:st|nd|rd|th) gpu|(?:rtx |gtx )?\d{4})\b|\b(?:want|wanted|trying|try|need) (?:to )?(?:only )?(?:use|train|run|set|assign|select|pick)(?: only)?(?: on| with)? (?:only )?(?:the |my )?(?:first|second|other|\d(?:st|nd|rd|th)|gpu ?(?:= ?|id ?|index ?)?\d|cuda:\d|(?:rtx |gtx )?\d{4})\b|\bhard-?cod(?:ed|es|ing)?\b[^\n]{0,40}\b(?:cuda:\d|device|gpu)|\b(?:cuda:\d|device|gpu)\b[^\n]{0,30}\bhard-?coded\b|\b(?:which|that) i'?m not (?:trying to |going to )?(?:use|using|train)|\binstead of (?:gpu|cuda:?|card) ?[0-9]\b|\b(?:gpu|cuda:?) ?0\b[^\n]{0,40}\b(?:instead|is being used|being used|is used)\b|指定[^\n]{0,30}(?:卡|gpu|显卡)[^\n]{0,30}(?:无效|不生效|没用|还是|仍然|依然|并没有使用|没有使用|没有用)|(?:还是|仍然|依然|一直)(?:跑在|用|使用|在)[^\n]{0,6}(?:0号|第一张|第0|cuda:?0|gpu ?0)|siempre usa la (?:primera|otra|segunda)|sempre usa a (?:primeira|outra|segunda)|\b(?:only|still) (?:uses?|using|runs? on|running on|trains? on|training on) (?:one|a single|1) gpu\b|\b(?:trains?|runs?|training|running) on a single gpu\b|\bdevice_count\(\)\W{0,12}(?:returns? |is |gives |shows? |=|->|:)?\s*1\b[^\n]{0,60}\b(?:2|two|multiple|several|[3-8]) gpus\b|\b(?:second|other) gpu (?:stays|is|remains) (?:idle|at 0|unused)|\bset_device\(\s*[1-9]\s*\)[^\n]{0,30}\b(?:is ignored|ignored|has no effect|does nothing|does not work|doesn't work)|\b(?:lands?|landing|ends? up|goes|allocates?|allocated|allocating|loads?|loaded) on (?:cuda:0|gpu ?0)\b|\bignor(?:es|ed|ing)\b[^\n]{0,20}(?:--gpus?|--device|--gpu_ids?|gpu_ids?|device=|cuda_visible_devices|(?:gpu|device|card) (?:choice|selection|setting|id|index))|\b(?:gpu|cuda:?|card|device) ?[1-9]\b[^\n]{0,50}\b(?:but|yet|although|still)\b[^\n]{0,30}\b(?:gpu|cuda:?|card|device) ?0\b|別の(?:gpu|グラボ|グラフィックボード)が使われ|\b(?:[2-8]|two|three|four|multiple|several) gpus\b[^\n]{0,60}\bdevice_count\(\)\W{0,12}(?:returns? |is |gives |shows? |=|->|:)?\s*1\b|\bbut (?:it )?(?:still |always )?(?:uses?|using|runs? on|running on|trains? on|training on|goes to|picks)\s+(?:the |my )?(?:gpu ?0|cuda:0|first (?:gpu|card)|1st gpu)\b|\b(?:second|2nd|other|another|first|1st) (?:gpu|card)\b[^\n]{0,20}\binstead of (?:the )?(?:first|second|other|1st|2nd)\b|\b(?:uses?|using|occup(?:y|ies|ying)|takes?|taking|grabs?|runs? on) (?:all|every|both)(?: the| my)? (?:gpus|cards|gpu)\b[^\n]{0,30}\b(?:when|though|despite|even|although|but|with)\b[^\n]{0,30}(?:--device|device|cuda:\d|--gpus?|gpu_ids?|cuda_visible_devices|one gpu|a single gpu|only)|\b(?:always|still) occup(?:y|ies|ying) (?:the )?(?:gpu|cuda):?\s?0\b|\b(?:gpu|device|card) (?:choice|selection|setting|index|id)\b[^\n]{0,20}\b(?:is |was |gets? )?ignored\b|\b(?:uses?|using|runs? on|running on|picks?|picking)\b[^\n]{0,50}\binstead of the (?:selected|chosen|configured|specified)(?: one| gpu| card| device)?\b`,
		"all gpus", "all the gpus", "all my gpus", "every gpu", "both gpus", "all cards", "occup", "always", "still", "only", "want", "trying", "try to", "need to", "hard", "not trying", "not going", "m not us", "m not train", "instead of", "gpu0", "gpu 0", "cuda0", "cuda:0", "cuda 0", "指定", "还是", "仍然", "依然", "一直", "siempre usa", "sempre usa", "single gpu", "device_count", "second gpu", "other gpu", "but", "instead of", "set_device", "land", "end up", "ends up", "goes on", "allocat", "loads on", "loaded on", "ignor", "別の")
	// cpuAskedRE: a setting that asks for the CPU (a config's device: cpu,
	// use_gpu: false, --device cpu, CUDA_VISIBLE_DEVICES empty or -1).
	cpuAskedRE = mustCue(`\b(?:use_cpu|no_cuda|force_cpu|cpu_only)\s*[:=]\s*(?:true|1|yes)\b|\baccelerator\s*[:=]\s*['"]?cpu\b|['"]use cpu['"] (?:checkbox|option|setting|box)|\bdevice\s*[:=]\s*['"]?cpu\b|--device[ =]['"]?cpu\b|\b(?:use_gpu|use_cuda|enable_gpu|with_cuda|use-gpu|use-cuda)\s*[:=]\s*(?:false|0|no)\b|cuda_visible_devices\s*=\s*(?:-1|''|""|\s*$)|cuda_visible_devices\W{0,12}(?:is )?(?:set to |to )?(?:an? )?(?:empty|-1)\b`,
		"cpu", "use_gpu", "use_cuda", "enable_gpu", "with_cuda", "use-gpu", "use-cuda", "cuda_visible_devices", "no_cuda")
	// noGPURequestRE: a Slurm job said not to ask for GPUs ("I didn't
	// request --gres=gpu:1"); docker's --gpus is the container's side.
	noGPURequestRE = mustCue(`\b(?:didn't|did not|don't|do not|forgot|never|without)\b[^\n]{0,25}(?:--gres\b|\bgres=|--gpus-per-\w+)`,
		"gres", "--gpus-per-")
	// twoGPUsRE: the report says the machine has more than one GPU.
	twoGPUsRE = mustCue(`\b(?:two|2|multiple|several|dual) (?:nvidia )?(?:gpus|cards|graphics cards)\b|两张(?:卡|显卡)|双卡|多卡|\bdos gpus\b|\bduas gpus\b`,
		"two", "2 gpus", "2 cards", "2 graphics", "2 nvidia", "multiple", "several", "dual", "两张", "双卡", "多卡", "dos gpus", "duas gpus")
)

// cueCodeAndSelection: memory, device selection and the code's devices,
// in the report's words.
func cueCodeAndSelection(j *judge, r *reading) []cue {
	var out []cue
	if q := r.quote(oomRE); q != "" {
		out = append(out, cue{gpu.CauseOutOfMemory, 3, said(q)})
	} else if q := r.quote(memoryHeldRE); q != "" {
		out = append(out, cue{gpu.CauseOutOfMemory, 2.5, said(q) + ": memory still held by a process that did not end (or by another program) leaves the next run none"})
	} else if q := r.modelOverVRAM(); q != "" {
		out = append(out, cue{gpu.CauseOutOfMemory, 3, q})
	}
	if q := r.quote(visibleTypoRE); q != "" && !strings.Contains(asciiLower(q), "cuda_visible_devices") {
		out = append(out, cue{gpu.CauseDeviceSelection, 5, said(q) + ": a misspelled variable (CUDA reads only CUDA_VISIBLE_DEVICES, spelled so): it is ignored, and every GPU stays visible"})
	} else if q := r.quote(selectRE); q != "" {
		out = append(out, cue{gpu.CauseDeviceSelection, 1.5, said(q) + ": the program picks its GPU (or the scheduler does)"})
	}
	if q := r.partOffload(); q != "" {
		out = append(out, cue{gpu.CauseDeviceSelection, 2.5, said(q) + ": only some of the model's layers go to the GPU; the program's GPU-layers setting (n_gpu_layers, --gpulayers, -ngl) decides how many, and the rest run on the CPU"})
	}
	if q := r.quote(switchIgnoredRE); q != "" {
		out = append(out, cue{gpu.CauseDeviceSelection, 2.5, said(q) + ": the program's device setting is not taken (a setting saved elsewhere, a module's own switch, or a restart needed)"})
	}
	if q := r.quote(settingAskedRE); q != "" {
		out = append(out, cue{gpu.CauseDeviceSelection, 2.5, said(q) + ": the program's own device setting (an option, flag or variable that defaults to the CPU) decides where it runs"})
	}
	if q := r.quote(cpuAskedRE); q != "" {
		out = append(out, cue{gpu.CauseDeviceSelection, 2.5, said(q) + ": the program is told to use the CPU (or to see no GPU)"},
			cue{gpu.CauseCPUOnlyBuild, -1, said(q) + ": the CPU was asked for; the build may be right"})
	}
	if q := r.quote(noGPURequestRE); q != "" {
		out = append(out, cue{gpu.CauseDeviceSelection, 2.5, said(q) + ": a Slurm job gets only the GPUs it asks for"})
	}
	out = append(out, r.firstSaid(gpu.CauseDeviceSelection,
		saying{wrongGPURE, 2.5, ": the program runs on another GPU than the one asked for, or fixes its device in the code"},
		saying{chooseGPURE, 2, ": which GPU a program uses is chosen by CUDA_VISIBLE_DEVICES (or its device option)"},
		saying{gpuIDSetRE, 2.5, ": the program's GPU index points at a GPU other than the one meant (on a machine with one GPU, only 0 exists)"},
		saying{otherCardRE, 2.5, ": with two GPUs, the program picks the other one (CUDA numbers them fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID)"},
		saying{twoGPUsRE, 1, ": with more than one GPU, the program may pick another than the one meant"})...)
	if q := r.quote(gpuUnsupportedRE); q != "" && r.quote(oldGPUDroppedRE) == "" {
		out = append(out, cue{gpu.CauseArchUnsupported, 2.5, said(q) + ": a GPU the program's build does not support is one whose architecture it has no kernels for (the newest need a build for a newer CUDA, the oldest an older one)"})
	}
	if q := r.quote(wrongCardCJKRE); q != "" {
		out = append(out, cue{gpu.CauseDeviceSelection, 2.5, said(q) + ": the program uses another GPU than the one chosen (CUDA numbers GPUs fastest first, nvidia-smi and some selectors by PCI bus, unless CUDA_DEVICE_ORDER=PCI_BUS_ID)"})
	}
	if q := r.quote(oldGPUDroppedRE); q != "" {
		out = append(out, cue{gpu.CauseArchUnsupported, 2.5, said(q) + ": newer builds drop the oldest architectures (torch's CUDA 12.8 wheels: Maxwell and Pascal); a build for an older CUDA still has them"})
	}
	if q := r.quote(mismatchRE); q != "" {
		out = append(out, cue{gpu.CauseDeviceMismatchInCode, 1.5, said(q)})
	}
	if q := r.quote(placedRE); q != "" {
		out = append(out, cue{gpu.CauseDeviceMismatchInCode, 3, said(q) + ": the code makes some tensors on a fixed device (cuda:0, the CPU) instead of the model's device, so they meet tensors on another"})
	}
	if q := r.quote(neverMovedRE); q != "" {
		out = append(out, cue{gpu.CauseDeviceMismatchInCode, 2.5, said(q) + ": code that never moves the model and the data to the GPU trains on the CPU"})
	}
	p := j.f.Paste
	if q := r.quote(gpuIdleRE); q != "" && p.CUDAAvailable != nil && *p.CUDAAvailable {
		out = append(out, cue{gpu.CauseDeviceMismatchInCode, 2, said(q) + ", while torch sees the GPU: the model or the data stay on the CPU"},
			cue{gpu.CauseDeviceSelection, 1, said(q) + ", while torch sees the GPU: the program may be told to use the CPU"})
	}
	return out
}

// cueLibraries: cuDNN and CUDA libraries named in words.
func cueLibraries(j *judge, r *reading) []cue {
	var out []cue
	q := r.quote(cudnnWordsRE)
	if q == "" {
		q = r.quote(cudnnAbsentRE)
	}
	if q != "" && !containsAny(asciiLower(q), "could not collect", "cudnn_status_internal_error", "create cudnn handle", "cudnn_status_alloc_failed") {
		// (collect_env's "cuDNN version: Could not collect" is no
		// problem: it prints so wherever cuDNN is not on the system path)
		out = append(out, cue{gpu.CauseCudnnProblem, 2.5, said(q)})
	}
	if q := r.quote(cudnnLibRE); q != "" && r.quote(tfRE) == "" { // (TensorFlow's own missing libraries are tf_gpu_libs)
		out = append(out, cue{gpu.CauseCudnnProblem, 2.5, said(q) + ": a cuDNN library the program loads by name (its major version in the name) is not found or not the one it needs"})
	}
	if q := r.quote(cudaRuntimeMissingRE); q != "" && r.quote(tfRE) == "" {
		out = append(out, cue{gpu.CauseTFGPULibs, 2.5, said(q) + ": the CUDA runtime libraries the program loads (cudart, cuBLAS; a CUDA toolkit or the program's own copies) are not on the machine"})
	}
	if q := r.quote(tfLibsRE); q != "" && r.quote(tfRE) != "" {
		out = append(out, cue{gpu.CauseTFGPULibs, 2, said(q) + ": TensorFlow loads the CUDA libraries of its release by name"})
	}
	return out
}

// driverRequired is the report's words that require a driver branch, and
// the branch ("" when none).
func (r *reading) driverRequired() (quote, branch string) {
	q, m := r.quoteGroups(driverRequiredRE)
	if n, err := strconv.Atoi(firstGroup(m)); err == nil && n >= 300 && n < 1000 {
		return q, firstGroup(m)
	}
	return "", ""
}

// partOffload is the report's words saying that fewer of a model's
// layers went to the GPU than it has, or "".
func (r *reading) partOffload() string {
	q, m := r.quoteGroups(offloadRE)
	if m == nil {
		return ""
	}
	n, err := strconv.Atoi(m[0])
	of, err2 := strconv.Atoi(m[1])
	if err != nil || err2 != nil || n >= of {
		return ""
	}
	return q
}

// firstGroup is the first group of a match that took a value, or "".
func firstGroup(groups []string) string {
	for _, g := range groups {
		if g != "" {
			return g
		}
	}
	return ""
}

// driverAtLeast: the report shows a driver of branch req or newer.
func (j *judge) driverAtLeast(req string) bool {
	dv := j.driverVersion()
	if dv == "" {
		dv = j.f.Paste.Prose["driver_words"]
		if strings.SplitN(dv, ".", 2)[0] == req {
			return false // the requirement itself, read as the driver
		}
	}
	have, err := strconv.Atoi(strings.SplitN(dv, ".", 2)[0])
	want, err2 := strconv.Atoi(req)
	return err == nil && err2 == nil && have >= want
}

// gpuSessionRE: a hosted notebook or cloud session said to have a GPU
// ("on Colab with T4 runtime", "Google Colab with GPU").
var gpuSessionRE = mustCue(`\b(?:t4|a100|v100|l4|p100|k80|a10g|h100)\b[^\n]{0,10}\b(?:runtime|gpu runtime|instance|session|accelerator)\b|\b(?:colab|kaggle|sagemaker|paperspace)\b[^\n]{0,20}\bwith (?:an? |the )?(?:gpu|t4|a100|v100|l4|p100)\b|\bgpu (?:runtime|session|accelerator) (?:is |was )?(?:on|enabled|selected)\b`,
	"t4", "a100", "v100", "l4", "p100", "k80", "a10g", "h100", "with gpu", "with a gpu", "with an gpu", "with the gpu", "gpu runtime", "gpu session", "gpu accelerator")

// torchSawGPU: the report shows torch.cuda.is_available() answering
// True: the GPU reaches that Python, whatever box it runs in.
func (j *judge) torchSawGPU() bool {
	p := j.f.Paste
	return p.CUDAAvailable != nil && *p.CUDAAvailable
}

// smiUtilisation: the report tells what nvidia-smi shows of the GPU's use
// ("nvidia-smi shows 0% utilization"): the driver answers there, and the
// machine has its GPU.
func (r *reading) smiUtilisation() bool {
	for at := 0; ; {
		i := strings.Index(r.low[at:], "nvidia-smi")
		if i < 0 {
			return false
		}
		i += at
		line := r.low[i:]
		if e := strings.IndexByte(line, '\n'); e >= 0 {
			line = line[:e]
		}
		if strings.Contains(line, "utiliz") || strings.Contains(line, "utilis") {
			return true
		}
		at = i + 1
	}
}

// modelOverVRAM: the report gives the GPU's memory and a model larger
// than it ("4GB VRAM and the model is 8GB"): the model cannot fit, and a
// runtime that offloads (ollama, llama.cpp) keeps it on the CPU.
func (r *reading) modelOverVRAM() string {
	v := vramRE.FindStringSubmatch(r.low)
	m := modelSizeRE.FindStringSubmatch(r.low)
	if v == nil || m == nil {
		return ""
	}
	vram, _ := strconv.ParseFloat(v[1]+v[2], 64)
	size, _ := strconv.ParseFloat(m[1], 64)
	if vram <= 0 || size <= vram {
		return ""
	}
	return fmt.Sprintf("the report gives %g GB of GPU memory and a model of %g GB: it does not fit, so it runs on the CPU or fails to load", vram, size)
}

// cudaUnavailableSaid: torch says it has no CUDA (is_available() False,
// "CUDA not available"), shown or told.
func (j *judge) cudaUnavailableSaid(r *reading) bool {
	p := j.f.Paste
	return p.CUDAAvailable != nil && !*p.CUDAAvailable || r.any("cuda not available", "cuda is not available", "cuda isn't available")
}
