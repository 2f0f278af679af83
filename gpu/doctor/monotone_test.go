package doctor

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gpuwizard/gpu"
	"gpuwizard/gpu/internal/corpus"
)

// Monotone evidence: a report with one more fact that agrees with it
// (a driver version, nvidia-smi, a pip list, collect_env) must never get
// a vaguer diagnosis, nor one whose cause the new fact contradicts.

// vagueness ranks a report's first finding: 0 a cause proven (an error
// that is not a guess), 1 a warning that names a cause, 2 the
// differential's likely cause, 3 a finding that names no cause, 4 none.
func vagueness(r gpu.Report) int {
	if len(r.Findings) == 0 {
		return 4
	}
	f := r.Findings[0]
	switch {
	case placeholders[f.ID] || f.Severity == gpu.SevInfo || f.Severity == gpu.SevOK:
		return 3
	case strings.HasPrefix(f.ID, "report_likely_"):
		return 2
	case f.Severity == gpu.SevWarning:
		return 1
	}
	return 0
}

// wheelCommand says whether a finding's fix names a concrete wheel (a pip
// command with PyTorch's index).
func wheelCommand(f gpu.Finding) bool {
	for _, s := range f.Fix {
		if strings.Contains(s.Command, "pip install") && strings.Contains(s.Command, "--index-url") {
			return true
		}
	}
	return false
}

// addition is a fact added to a report, and the causes it rules out.
type addition struct {
	name        string
	text        string
	contradicts []gpu.Cause
}

// checkMonotone compares a report's diagnosis with that of the report and
// the addition, and returns what got worse ("" when nothing).
func checkMonotone(t *testing.T, base string, add addition) string {
	before := diagnoseText(t, base)
	after := diagnoseText(t, base+"\n"+add.text+"\n")
	vb, va := vagueness(before), vagueness(after)
	if va > vb {
		return fmt.Sprintf("vaguer: %s → %s", describe(before), describe(after))
	}
	if len(after.Findings) == 0 {
		return ""
	}
	a := after.Findings[0]
	if slices.Contains(add.contradicts, a.Cause) && va < 3 {
		return fmt.Sprintf("names %s, which the added fact rules out: %s", a.Cause, describe(after))
	}
	if len(before.Findings) == 0 || vb >= 2 {
		return ""
	}
	b := before.Findings[0]
	if b.Cause != a.Cause && !slices.Contains(add.contradicts, b.Cause) {
		return fmt.Sprintf("a proven cause changed though the added fact agrees with it: %s → %s", describe(before), describe(after))
	}
	if b.Cause == a.Cause && wheelCommand(b) && !wheelCommand(a) {
		return fmt.Sprintf("the fix lost its concrete wheel: %v → %v", b.Fix, a.Fix)
	}
	return ""
}

func describe(r gpu.Report) string {
	if len(r.Findings) == 0 {
		return "(no finding)"
	}
	f := r.Findings[0]
	return fmt.Sprintf("%s %s (%s)", f.Severity, f.ID, f.Cause)
}

// smiTable is nvidia-smi's table for one GPU and a driver.
func smiTable(gpuName, driver, cuda string) string {
	return fmt.Sprintf(`+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI %-21s Driver Version: %-14s CUDA Version: %-9s|
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
|=========================================+========================+======================|
|   0  %-30s Off |   00000000:01:00.0 Off |                  N/A |
|  0%%   38C    P8             20W /  350W |     512MiB /  24576MiB |      0%%      Default |
+-----------------------------------------+------------------------+----------------------+`, driver, driver, cuda, gpuName)
}

// TestMonotoneEvidence: curated reports, each with facts that agree with
// it.
func TestMonotoneEvidence(t *testing.T) {
	rtx5090 := "UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n" +
		"The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90."
	smiWorks := []gpu.Cause{gpu.CauseDriverMissing}
	cases := []struct {
		base string
		adds []addition
	}{
		{rtx5090, []addition{
			{"nvidia-smi, driver 570", smiTable("NVIDIA GeForce RTX 5090", "570.86.16", "12.8"), smiWorks},
			{"nvidia-smi, driver 580", smiTable("NVIDIA GeForce RTX 5090", "580.95.05", "13.0"), smiWorks},
			{"nvidia-smi from 610", "| NVIDIA-SMI 610.43.02              KMD Version: 610.43.02     CUDA UMD Version: 13.3     |\n|   0  NVIDIA GeForce RTX 5090        Off |   00000000:01:00.0  On |                  N/A |", smiWorks},
			{"query CSV", "name, driver_version, compute_cap\nNVIDIA GeForce RTX 5090, 570.86.16, 12.0", smiWorks},
			{"pip list", "torch==2.5.1+cu124\ntorchvision==0.20.1+cu124", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
			{"bare version", "2.5.1+cu124", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
			{"driver in words", "My driver is 572.16 on Windows 11.", nil},
		}},
		{"I did pip install torch on Windows 11 and torch.cuda.is_available() returns False. My GPU is an RTX 3060.", []addition{
			{"nvidia-smi", smiTable("NVIDIA GeForce RTX 3060", "572.16", "12.8"), smiWorks},
			{"pip list", "torch==2.6.0\ntorchvision==0.21.0", nil},
			{"torch version", ">>> torch.__version__\n'2.6.0+cpu'", nil},
			{"collect_env", "PyTorch version: 2.6.0+cpu\nCUDA used to build PyTorch: None\nOS: Microsoft Windows 11 Pro", nil},
		}},
		{"RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx", []addition{
			{"lspci", "01:00.0 VGA compatible controller: NVIDIA Corporation GA102 [GeForce RTX 3090] (rev a1)", nil},
			{"torch version", "torch 2.5.1+cu124", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
			{"distribution", "OS: Ubuntu 22.04.4 LTS (x86_64)", nil},
		}},
		{"My training runs inside a docker container and torch.cuda.is_available() returns False.", []addition{
			{"host nvidia-smi works", "On the host nvidia-smi shows my RTX 4090 fine.", nil},
			{"torch build", "torch 2.5.1+cu124", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
			{"docker run without GPUs", "docker run -it --rm -v $PWD:/work myimage python train.py", nil},
		}},
		{"tensorflow does not see my GPU on Windows 10, tf.config.list_physical_devices('GPU') returns []", []addition{
			{"TF version", "tensorflow 2.15.0", nil},
			{"nvidia-smi", smiTable("NVIDIA GeForce RTX 3070", "552.22", "12.4"), smiWorks},
			{"CUDA 12", "I installed CUDA 12.4 and cuDNN 8.9.", nil},
		}},
		// Facts read from prose (issue 25, batch S): the driver in words
		// against the build named, a hosted notebook, a container in
		// Chinese, an RTX 50xx in words, no NVIDIA GPU.
		{"My driver is 470 and I installed torch with cu121, cuda is not available", []addition{
			{"nvidia-smi, driver 470", smiTable("NVIDIA GeForce RTX 3080", "470.82.01", "11.4"), smiWorks},
			{"pip list", "torch==2.4.1+cu121", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
		}},
		{"Kaggle: my notebook does not use the GPU, it trains on cpu only", []addition{
			{"torch build", "torch 2.5.1+cu124", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
		}},
		{"在容器里面torch检测不到GPU，宿主机nvidia-smi是正常的", []addition{
			{"torch build", "torch 2.5.1+cu124", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
			{"docker run without GPUs", "docker run -it --rm myimage python train.py", nil},
		}},
		{"I bought an RTX 5060 Ti and stable diffusion stopped working with CUDA errors", []addition{
			{"nvidia-smi", smiTable("NVIDIA GeForce RTX 5060 Ti", "576.02", "12.9"), smiWorks},
			{"pip list", "torch==2.6.0+cu124\ntorchvision==0.21.0+cu124", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
		}},
		{"My laptop only has AMD Radeon graphics, can I still use cuda for training?", []addition{
			{"CPU torch", "torch 2.5.1+cpu", nil},
			{"Windows", "OS: Microsoft Windows 11 Home", nil},
		}},
		// The wrong GPU said in words, then the machine's two GPUs and the
		// CUDA torch: still a selection, never vaguer.
		{"I have two GPUs and want to train only on the 3090, but the script always uses the 1080.", []addition{
			{"nvidia-smi -L", "GPU 0: NVIDIA GeForce GTX 1080 (UUID: GPU-1)\nGPU 1: NVIDIA GeForce RTX 3090 (UUID: GPU-2)", smiWorks},
			{"torch build", "torch 2.5.1+cu124", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
		}},
		// An install that does not take, then the CUDA tag written +cuda126
		// and a pip list: still two installs.
		{"I installed torch 2.4.1 but python still shows 2.0.1 and I can't uninstall the old one, cuda is False.", []addition{
			{"CUDA tag written out", "torch 2.4.1+cuda124", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
			{"pip list", "torch==2.4.1+cu124", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
		}},
		// A Blackwell GPU in words, then a torch release one of whose builds
		// has its kernels (the build not shown).
		{"New RTX 5070 laptop, training fails and the GPU is not used.", []addition{
			{"untagged torch 2.10", "torch 2.10.0", nil},
			{"torch 2.10 built for CUDA 12.8", "torch 2.10.0+cu128", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
			{"pip freeze of the CUDA build", "torch==2.10.0+cu128\ntorchvision==0.25.0+cu128", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
		}},
		// The driver not loaded in words, then the distribution.
		{"After running the install script and rebooting, the nvidia drivers are not loaded.", []addition{
			{"distribution", "OS: Ubuntu 22.04.4 LTS (x86_64)", nil},
			{"torch build", "torch 2.5.1+cu124", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
		}},
		// Batch X's reasoning (issue 25): a Mac by its chip, a cloud machine
		// that shows no NVIDIA device, a serverless platform, a driver
		// installed inside a container, no driver behind "too old"; then
		// the OS, the torch build or the instance type: none gets vaguer or
		// names a cause the new fact rules out.
		{"I tried to deploy it on mac and it says Torch not compiled with CUDA enabled, my M3 pro does not have cuda.", []addition{
			{"CPU torch", "torch 2.5.1", nil},
			{"macOS home in a traceback", `  File "/Users/kim/proj/app.py", line 3, in <module>`, nil},
		}},
		{"I am using an AWS instance.\nmodprobe: ERROR: could not insert 'nvidia': No such device", []addition{
			{"CPU instance type", "The instance type is t3.large.", nil},
			{"torch build", "torch 2.5.1+cu124", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
		}},
		{"I deployed the model on AWS Lambda and .to('cuda') fails with Found no NVIDIA driver on your system", []addition{
			{"torch build", "torch 2.5.1+cu124", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
		}},
		{"Inside my docker container I installed the nvidia driver with apt, now nvidia-smi says Failed to initialize NVML: Driver/library version mismatch", []addition{
			{"docker run without GPUs", "docker run -it --rm myimage bash", nil},
			{"torch build", "torch 2.5.1+cu124", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
		}},
		{"cudaGetDeviceCount returned 35\n-> CUDA driver version is insufficient for CUDA runtime version\n$ nvidia-smi\nnvidia-smi: command not found", []addition{
			{"distribution", "OS: Ubuntu 22.04.4 LTS (x86_64)", nil},
			{"lspci", "01:00.0 VGA compatible controller: NVIDIA Corporation GA102 [GeForce RTX 3090] (rev a1)", nil},
		}},
		// Batch V's reasoning (issue 25): a hosted notebook, a setting that
		// asks for the CPU, two Pythons, WSL where nvidia-smi answers; then
		// the CUDA build, nvidia-smi or the driver: none gets vaguer or names
		// a cause the new fact rules out.
		{"Kaggle notebook: RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver", []addition{
			{"torch build", "torch 2.5.1+cu124", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
		}},
		{"The config file has device: cpu, so training runs on the CPU although my RTX 3090 works", []addition{
			{"nvidia-smi", smiTable("NVIDIA GeForce RTX 3090", "550.54.14", "12.4"), smiWorks},
			{"torch build", "torch==2.5.1+cu124", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
		}},
		{"pip installs torch into Python 3.12 but my script runs with Python 3.11, so it says cuda False", []addition{
			{"nvidia-smi", smiTable("NVIDIA GeForce RTX 4070", "560.35.03", "12.6"), smiWorks},
			{"driver in words", "My driver is 560.35.", nil},
		}},
		{"wsl2 didn't detect my rtx 5080: the tool says no GPU, although /usr/lib/wsl/lib/nvidia-smi lists it", []addition{
			{"nvidia-smi", smiTable("NVIDIA GeForce RTX 5080", "591.86", "13.1"), smiWorks},
		}},
		// The words suspect the driver; nvidia-smi then shows one that runs
		// the CUDA build named: neither a driver too old nor a missing one,
		// and still a likely cause named (what the build and the driver
		// leave: the GPU hidden from the process, another install).
		{"Is my driver too old? I have to update the driver maybe. torch 2.5.1+cu124 and cuda is not available", []addition{
			{"nvidia-smi, driver 560", smiTable("NVIDIA GeForce RTX 3090", "560.35.03", "12.6"), []gpu.Cause{gpu.CauseDriverTooOld, gpu.CauseDriverMissing}},
		}},
		// A GPU in words that the build named has kernels for: not a GPU
		// the build lacks.
		{"My RTX 3060 is not supported by this torch? no kernel image errors and the GPU is not used", []addition{
			{"torch 2.5.1 built for CUDA 12.4", "torch 2.5.1+cu124", []gpu.Cause{gpu.CauseArchUnsupported, gpu.CauseCPUOnlyBuild}},
		}},
		{"torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 7.79 GiB total capacity; 5.12 GiB already allocated)", []addition{
			{"nvidia-smi", smiTable("NVIDIA GeForce RTX 3070", "550.54.14", "12.4"), smiWorks},
			{"torch", "torch==2.3.1+cu121", []gpu.Cause{gpu.CauseCPUOnlyBuild}},
		}},
	}
	for _, c := range cases {
		for _, a := range c.adds {
			if bad := checkMonotone(t, c.base, a); bad != "" {
				t.Errorf("%.50q + %s: %s", c.base, a.name, bad)
			}
		}
	}
}

// neutralGPU is a GPU that the CUDA the report shows (a framework's
// build, a toolkit, in words) has kernels for, so that naming it adds no
// conflict: an Ampere card from CUDA 11.1, an A100 for 11.0, a Pascal one
// before.
func neutralGPU(f *gpu.Facts) string {
	cuda := ""
	for _, e := range f.Pythons {
		for _, pk := range e.Packages {
			if pk.CUDA != "" && (cuda == "" || !gpu.VersionAtLeast(pk.CUDA, cuda)) {
				cuda = pk.CUDA
			}
		}
	}
	for _, t := range f.CUDA.Toolkits {
		if cuda == "" || !gpu.VersionAtLeast(t.Version, cuda) {
			cuda = t.Version
		}
	}
	if f.Paste != nil && cuda == "" {
		cuda = f.Paste.Prose["cuda"]
	}
	switch {
	case cuda == "" || gpu.VersionAtLeast(cuda, "11.1"):
		return "NVIDIA GeForce RTX 3090"
	case gpu.VersionAtLeast(cuda, "11.0"):
		return "NVIDIA A100-SXM4-40GB"
	}
	return "NVIDIA GeForce GTX 1080"
}

// TestMonotoneCorpus: every tuning report the doctor gets right, with a
// working nvidia-smi added where the settled cause allows one (the driver
// answers), and with its own torch version restated as pip lists it.
func TestMonotoneCorpus(t *testing.T) {
	reports, err := corpus.Load(filepath.Join("..", "testdata", "corpus"), "tuning")
	if err != nil {
		t.Fatal(err)
	}
	driverAnswers := []gpu.Cause{gpu.CauseCPUOnlyBuild, gpu.CauseConflictingInstalls, gpu.CauseCudnnProblem, gpu.CauseTFGPULibs,
		gpu.CauseDeviceSelection, gpu.CauseOutOfMemory, gpu.CauseDeviceMismatchInCode}
	checked, bad := 0, 0
	for _, r := range reports {
		rep := diagnoseText(t, r.Text)
		if len(rep.Findings) == 0 || rep.Findings[0].Cause != r.Cause {
			continue
		}
		f := rep.Facts
		var adds []addition
		if slices.Contains(driverAnswers, r.Cause) && f.NVML.Status != gpu.NVMLOK && f.Host.WSL == 0 && f.Host.Container == "" {
			name := neutralGPU(f)
			if len(f.NVML.GPUs) > 0 && f.NVML.GPUs[0].Name != "" {
				name = f.NVML.GPUs[0].Name
			}
			driver, cuda := "580.95.05", "13.0"
			if f.NVML.DriverVersion != "" {
				driver, cuda = f.NVML.DriverVersion, OrUnknownDriver(f.NVML.CUDADriverVersion)
			}
			adds = append(adds, addition{"nvidia-smi", smiTable(name, driver, cuda), []gpu.Cause{gpu.CauseDriverMissing}})
		}
		// The driver the report shows, restated as collect_env and
		// nvidia-smi -q print it.
		if dv := f.NVML.DriverVersion; dv != "" {
			adds = append(adds, addition{"collect_env driver", "Nvidia driver version: " + dv, nil},
				addition{"nvidia-smi -q driver", "Driver Version                            : " + dv, nil})
		}
		// The GPU the report names, listed by nvidia-smi -L (the driver
		// answers).
		if len(f.NVML.GPUs) > 0 && f.NVML.GPUs[0].Name != "" && slices.Contains(driverAnswers, r.Cause) && f.Host.WSL == 0 && f.Host.Container == "" {
			adds = append(adds, addition{"nvidia-smi -L", "GPU 0: " + f.NVML.GPUs[0].Name + " (UUID: GPU-3f2b9c4e-1a2b-4c5d-8e9f-0a1b2c3d4e5f)", []gpu.Cause{gpu.CauseDriverMissing}})
		}
		// Restated with its build tag: pip's list of an untagged torch on
		// Windows says more (a PyPI wheel, CPU-only there).
		if pk, ok := (&judge{f: f}).reportTorch(); ok && gpu.LocalTag(pk.Version) != "" && !strings.Contains(pk.Version, " ") {
			adds = append(adds, addition{"pip freeze", "torch==" + pk.Version, nil})
		}
		for _, a := range adds {
			checked++
			if why := checkMonotone(t, r.Text, a); why != "" {
				bad++
				t.Errorf("%s + %s: %s", r.Name, a.name, why)
			}
		}
	}
	t.Logf("%d additions to reports checked, %d gave a worse diagnosis", checked, bad)
}

// TestRTX5090AdviceUsesTheDriver: the report of issue 25. Alone, the
// RTX 5090's sm_120 warning gets a wheel per driver generation; with
// nvidia-smi's driver 570.86.16 beside it, the one wheel that driver runs
// (cu128; cu130 needs 580), never "pick it at pytorch.org".
func TestRTX5090AdviceUsesTheDriver(t *testing.T) {
	warn := "UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
	for _, c := range []struct{ name, text, want, not string }{
		{"alone", warn, "/whl/cu130", "pytorch.org/get-started"},
		{"with driver 570", warn + smiTable("NVIDIA GeForce RTX 5090", "570.86.16", "12.8"), "/whl/cu128", "/whl/cu130"},
		{"with driver 580", warn + smiTable("NVIDIA GeForce RTX 5090", "580.95.05", "13.0"), "/whl/cu130", "pytorch.org/get-started"},
	} {
		r := diagnoseText(t, c.text)
		f := r.Findings[0]
		var cmds []string
		for _, s := range f.Fix {
			cmds = append(cmds, s.Text+" "+s.Command)
		}
		all := strings.Join(cmds, "\n")
		if f.Cause != gpu.CauseArchUnsupported || !strings.Contains(all, c.want) || strings.Contains(all, c.not) {
			t.Errorf("%s: %s (%s), fix:\n%s\nwant %q and not %q", c.name, f.ID, f.Cause, all, c.want, c.not)
		}
		if strings.Contains(f.Title, "sm_XX") || !strings.Contains(f.Title, "sm_120") {
			t.Errorf("%s: title %q", c.name, f.Title)
		}
	}
}

// TestCUDABuildRulesOutCPUOnly: a fact that contradicts a cause demotes
// it. Thin reports that the GPU is not used lean, by their words, to a
// CPU-only build; torch shown as a CUDA build (a bare version line, pip's
// list, collect_env, torch.__version__) rules that out, and the causes
// the facts leave open (the driver below the build) come first. A CUDA
// tag only asked for (an install command, pip's "no matching
// distribution") or beside a +cpu one says nothing of what runs, and
// keeps the CPU build in view.
func TestCUDABuildRulesOutCPUOnly(t *testing.T) {
	bases := []string{
		"New RTX 5070 laptop, training fails and the GPU is not used.",
		"My RTX 5070 laptop is not using the GPU, training runs on the CPU instead.",
		"Training is very slow, it does not use the GPU (RTX 4060, Ubuntu 24.04).",
	}
	builds := []string{
		"torch 2.10.0+cu128",
		"torch==2.10.0+cu128\ntorchvision==0.25.0+cu128",
		"PyTorch version: 2.10.0+cu128\nIs debug build: False\nCUDA used to build PyTorch: 12.8",
		">>> torch.__version__\n'2.10.0+cu128'",
	}
	for _, base := range bases {
		before := topCauses(diagnoseText(t, base), 3)
		if len(before) == 0 || before[0] != gpu.CauseCPUOnlyBuild {
			t.Logf("%.40q alone: %v (the words do not lean to a CPU build here)", base, before)
		}
		for _, b := range builds {
			rep := diagnoseText(t, base+"\n"+b+"\n")
			top := topCauses(rep, 3)
			if slices.Contains(top, gpu.CauseCPUOnlyBuild) {
				t.Errorf("%.40q + %.30q: %v names a CPU-only build, which the CUDA build rules out", base, b, top)
			}
			if vagueness(rep) > 2 {
				t.Errorf("%.40q + %.30q: no likely cause named: %s", base, b, describe(rep))
			}
		}
	}
	// Asked for, not shown running: the CPU build stays in view.
	for _, text := range []string{
		"On Windows the GPU is not used, it trains on the CPU. I ran `uvx --with torch==2.5.1+cu124 --index-url https://download.pytorch.org/whl/cu124 python train.py`",
		"The GPU is not used and training runs on the CPU.\ntorch 2.5.1+cu124\n>>> torch.__version__\n'2.5.1+cpu'",
	} {
		if top := topCauses(diagnoseText(t, text), 3); !slices.Contains(top, gpu.CauseCPUOnlyBuild) && !slices.Contains(top, gpu.CauseConflictingInstalls) {
			t.Errorf("%.60q: %v, want a CPU build or two installs among them", text, top)
		}
	}
}
