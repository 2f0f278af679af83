package gpu

import "time"

// PasteInterpreter names the Python of a pasted report, whose path is
// rarely known.
const PasteInterpreter = "the report's Python"

// FactsSchema is the version of the Facts JSON layout.
const FactsSchema = 1

// Facts is everything the doctor knows about one machine. It is filled by
// Probe on the live machine (or, partially, from a pasted report) and is
// JSON-serialisable so a saved report can be diagnosed again. An empty field
// means "unknown", never "absent": absence is stated explicitly (a status, an
// empty list with its source marked ok).
type Facts struct {
	Schema      int            `json:"schema"`
	CollectedAt time.Time      `json:"collected_at"`
	Origin      string         `json:"origin"` // "live", "saved", "paste"
	Host        HostFacts      `json:"host"`
	PCI         []PCIDevice    `json:"pci"`
	Driver      DriverFacts    `json:"driver"`
	NVML        NVMLFacts      `json:"nvml"`
	CUDA        CUDAFacts      `json:"cuda"`
	Env         []EnvVar       `json:"env"`
	Pythons     []PythonEnv    `json:"pythons"`
	Deep        []DeepResult   `json:"deep,omitempty"`
	Sources     []SourceStatus `json:"sources"`
	Paste       *PasteFacts    `json:"paste,omitempty"`   // what a pasted report said, when Origin is "paste"
	Windows     *WindowsFacts  `json:"windows,omitempty"` // what only a Windows machine has (winfacts.go)

	// Skipped are the files the probe would have read but refused: not a
	// regular file (a link to /dev/zero, a named pipe) or bigger than its
	// cap. What they would have said is unknown.
	Skipped []SkippedFile `json:"skipped,omitempty"`
}

// PasteFacts is what a pasted report adds to the facts: the error
// signatures it holds, the lines that prove each fact, and the runtime
// answers it quotes. Unknown stays unknown: nothing here is guessed.
type PasteFacts struct {
	Formats       []string            `json:"formats"`                  // recognised parts: "collect_env", "nvidia-smi", ...
	Signatures    []SignatureHit      `json:"signatures"`               // known error texts, in the table's order
	Quotes        map[string][]string `json:"quotes"`                   // fact kind ("torch", "driver", "gpu", ...) → report lines
	CUDAAvailable *bool               `json:"cuda_available,omitempty"` // torch.cuda.is_available() as the report shows it
	DeviceUsed    string              `json:"device_used,omitempty"`    // "cpu", "cuda:0": what Ultralytics said it used
	ArchList      []string            `json:"arch_list,omitempty"`      // "The current PyTorch install supports ..."
	Lines         int                 `json:"lines"`
	// DockerRun is a `docker run` line of the report; DockerGPUs says
	// whether it gives the container GPUs (--gpus, --runtime=nvidia,
	// nvidia-docker, --device nvidia.com/gpu).
	DockerRun  string `json:"docker_run,omitempty"`
	DockerGPUs *bool  `json:"docker_gpus,omitempty"`
	// Devices are what a framework listed as its devices, as the report
	// shows them: "cpu" (jax.devices() → CpuDevice, tf: only CPU), "gpu".
	Devices []string `json:"devices,omitempty"`
	// Prose holds versions the text states in words ("CUDA 11.2",
	// "cuDNN 8.5", "driver 470"): weaker than a tool's output.
	Prose map[string]string `json:"prose,omitempty"`
	// Interpreters are the Pythons the report names as running
	// (sys.executable): two of them are two environments.
	Interpreters []string `json:"interpreters,omitempty"`
	// PipTorchNoIndex: the report installs torch with pip from PyPI (no
	// PyTorch --index-url): on Windows that is the CPU-only wheel.
	PipTorchNoIndex bool `json:"pip_torch_no_index,omitempty"`
	// GPUPackages are the GPU variants of frameworks the report names
	// (tensorflow-gpu, paddlepaddle-gpu, onnxruntime-gpu).
	GPUPackages []string `json:"gpu_packages,omitempty"`
	// Scheduler is the job scheduler the report runs under ("slurm").
	Scheduler string `json:"scheduler,omitempty"`
	// Text is the report as read (sanitised, LF line ends), for what reads
	// its words; it is not saved.
	Text string `json:"-"`
}

// SkippedFile is a file the probe refused to read, and why in words.
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// SourceStatus says whether one probe source answered, how long it took,
// and why it could not answer.
type SourceStatus struct {
	Name     string  `json:"name"`
	OK       bool    `json:"ok"`
	Error    string  `json:"error,omitempty"`
	Millis   float64 `json:"ms"`
	TimedOut bool    `json:"timed_out,omitempty"`
}

// HostFacts describe the operating system around the GPU.
type HostFacts struct {
	OS         string `json:"os"`                    // GOOS: "linux", "windows", ...
	Hostname   string `json:"hostname,omitempty"`    // the node's name, for a fleet of reports
	Distro     string `json:"distro,omitempty"`      // os-release ID, "debian", "ubuntu"
	DistroName string `json:"distro_name,omitempty"` // PRETTY_NAME
	Kernel     string `json:"kernel,omitempty"`      // /proc/sys/kernel/osrelease
	Arch       string `json:"arch"`                  // GOARCH
	WSL        int    `json:"wsl,omitempty"`         // 0 none, 1 WSL1, 2 WSL2
	WSLLibDir  bool   `json:"wsl_lib_dir,omitempty"` // /usr/lib/wsl/lib exists
	WSLLibCUDA bool   `json:"wsl_libcuda,omitempty"` // /usr/lib/wsl/lib/libcuda.so.1 exists
	Container  string `json:"container,omitempty"`   // "docker", "podman", "kubernetes", "lxc", "container"
	SecureBoot string `json:"secure_boot,omitempty"` // "enabled", "disabled", "" unknown
}

// PCIDevice is one NVIDIA PCI function seen in sysfs, whatever its driver.
type PCIDevice struct {
	Address string `json:"address"` // "0000:01:00.0"
	Vendor  string `json:"vendor"`  // "0x10de"
	Device  string `json:"device"`  // "0x2684"
	Class   string `json:"class"`   // "0x030000"
	Driver  string `json:"driver"`  // bound kernel driver: "nvidia", "nouveau", "vfio-pci", "" none
}

// IsGPU reports whether the PCI class is a display or 3D controller.
func (p PCIDevice) IsGPU() bool {
	return len(p.Class) >= 6 && (p.Class[:6] == "0x0300" || p.Class[:6] == "0x0302")
}

// DriverFacts describe the kernel side of the NVIDIA driver.
type DriverFacts struct {
	ProcVersion   string       `json:"proc_version,omitempty"`   // first line of /proc/driver/nvidia/version
	ModuleVersion string       `json:"module_version,omitempty"` // version in that line
	Modules       []string     `json:"modules"`                  // nvidia, nvidia_uvm, nvidia_drm, nouveau ... from /proc/modules
	DeviceNodes   []DeviceNode `json:"device_nodes"`
	DXG           bool         `json:"dxg,omitempty"` // /dev/dxg (WSL2 GPU paravirtualisation)
}

// HasModule reports whether the named kernel module is loaded.
func (d DriverFacts) HasModule(name string) bool {
	for _, m := range d.Modules {
		if m == name {
			return true
		}
	}
	return false
}

// DeviceNode is one /dev/nvidia* node and what this user may do with it.
type DeviceNode struct {
	Path     string `json:"path"`
	Mode     string `json:"mode"`
	Readable bool   `json:"readable"`
	Writable bool   `json:"writable"`
}

// NVML status values: NVML's failure codes are answers, not errors.
const (
	NVMLOK              = "ok"
	NVMLLibraryNotFound = "library_not_found"
	NVMLDriverNotLoaded = "driver_not_loaded"
	NVMLNoPermission    = "no_permission"
	NVMLRMMismatch      = "rm_version_mismatch"
	NVMLGPULost         = "gpu_lost"
	NVMLError           = "error"
)

// NVMLFacts is what the NVIDIA Management Library reported.
type NVMLFacts struct {
	Status            string `json:"status"` // one of the NVML* constants, "" unknown
	Error             string `json:"error,omitempty"`
	DriverVersion     string `json:"driver_version,omitempty"`      // "550.54.15"
	CUDADriverVersion string `json:"cuda_driver_version,omitempty"` // "12.4": the newest CUDA this driver runs
	NVMLVersion       string `json:"nvml_version,omitempty"`
	GPUs              []GPU  `json:"gpus"`
}

// GPU is one device as NVML sees it. Pointers are nil when the GPU does not
// report the value.
type GPU struct {
	Index           int       `json:"index"`
	Name            string    `json:"name"`
	UUID            string    `json:"uuid,omitempty"`
	PCIBusID        string    `json:"pci_bus_id,omitempty"`
	CC              string    `json:"compute_capability,omitempty"` // "8.6"
	MemoryTotalMiB  uint64    `json:"memory_total_mib,omitempty"`
	MemoryUsedMiB   uint64    `json:"memory_used_mib,omitempty"`
	MemoryFreeMiB   uint64    `json:"memory_free_mib,omitempty"`
	UtilizationPct  *int      `json:"utilization_pct,omitempty"`
	TemperatureC    *int      `json:"temperature_c,omitempty"`
	PowerW          *float64  `json:"power_w,omitempty"`
	ThrottleReasons []string  `json:"throttle_reasons,omitempty"`
	MIGEnabled      *bool     `json:"mig_enabled,omitempty"`
	Processes       []Process `json:"processes,omitempty"`
	Errors          []string  `json:"errors,omitempty"` // values the GPU would not give, and why
	// DriverModel and DriverModelPending are Windows' driver model of
	// the GPU ("WDDM", "TCC", "MCDM"), now and after a restart, as
	// nvidia-smi reports them; "" elsewhere or unknown.
	DriverModel        string `json:"driver_model,omitempty"`
	DriverModelPending string `json:"driver_model_pending,omitempty"`
}

// Process is a compute process holding GPU memory.
type Process struct {
	PID     uint32 `json:"pid"`
	Name    string `json:"name,omitempty"` // from /proc/PID/comm when visible
	UsedMiB uint64 `json:"used_mib"`
}

// CUDAFacts describe CUDA toolkits and the CUDA/cuDNN libraries the loader sees.
type CUDAFacts struct {
	Toolkits  []Toolkit `json:"toolkits"`
	Libraries []Library `json:"libraries"`
}

// Toolkit is one installed CUDA toolkit.
type Toolkit struct {
	Path    string `json:"path"`              // folder or nvcc path
	Version string `json:"version,omitempty"` // "12.4.131"
	OnPath  bool   `json:"on_path,omitempty"` // its nvcc is the first nvcc on PATH
	Error   string `json:"error,omitempty"`
}

// Library is one CUDA-family shared library visible to the dynamic loader or
// shipped in a Python wheel.
type Library struct {
	Name    string `json:"name"`   // "libcudnn", "libcudart", "libcublas", "libcuda", "libnvidia-ml"
	Soname  string `json:"soname"` // "libcudnn.so.9"
	Path    string `json:"path"`
	Version string `json:"version,omitempty"` // from the file name or header, when known
	Origin  string `json:"origin"`            // "ldconfig", "LD_LIBRARY_PATH", "toolkit", "wheel"
}

// EnvVar is one environment variable that matters to CUDA.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Set   bool   `json:"set"`
}

// PythonEnv is one Python installation or environment a user may be running.
type PythonEnv struct {
	Interpreter  string    `json:"interpreter"`        // the path found
	Prefix       string    `json:"prefix"`             // sys.prefix equivalent
	Version      string    `json:"version,omitempty"`  // "3.11"
	Kind         string    `json:"kind"`               // "system", "venv", "conda", "pyenv", "other"
	FoundVia     []string  `json:"found_via"`          // how it was found
	Commands     []string  `json:"commands,omitempty"` // commands that run it: "python3", "python", "yolo"
	SitePackages []string  `json:"site_packages"`      // in import order
	Packages     []Package `json:"packages"`           // frameworks and nvidia-* wheels, first-found first
	Error        string    `json:"error,omitempty"`
}

// Package is one installed distribution of interest.
type Package struct {
	Name     string `json:"name"`    // normalised: "torch", "tensorflow", "nvidia-cudnn-cu12"
	Version  string `json:"version"` // "2.1.0+cu121"
	Location string `json:"location"`
	Shadowed bool   `json:"shadowed,omitempty"` // another copy earlier on sys.path wins
	// Framework build details, read statically from the package's files.
	CUDA      string `json:"cuda,omitempty"`       // "12.1"; "" unknown
	CPUOnly   bool   `json:"cpu_only,omitempty"`   // built without CUDA
	ROCm      string `json:"rocm,omitempty"`       // HIP version of a ROCm build
	CuDNN     string `json:"cudnn,omitempty"`      // cuDNN the build expects ("8", "9.3")
	BuildNote string `json:"build_note,omitempty"` // where the build facts came from
}

// DeepResult is what the embedded Python script found when it really used
// the GPU through one interpreter.
type DeepResult struct {
	Interpreter   string       `json:"interpreter"`
	Ran           bool         `json:"ran"`
	TimedOut      bool         `json:"timed_out,omitempty"`
	Error         string       `json:"error,omitempty"` // why the script could not run, or the exception text
	Torch         string       `json:"torch,omitempty"`
	TorchCUDA     string       `json:"torch_cuda,omitempty"`
	CUDAAvailable *bool        `json:"cuda_available,omitempty"`
	DeviceCount   int          `json:"device_count"`
	ArchList      []string     `json:"arch_list,omitempty"`
	CuDNN         string       `json:"cudnn,omitempty"`
	Devices       []DeepDevice `json:"devices,omitempty"`
	Warnings      []string     `json:"warnings,omitempty"` // warnings torch printed (e.g. "sm_120 is not compatible")
}

// DeepDevice is one GPU exercised by the deep check.
type DeepDevice struct {
	Index    int    `json:"index"`
	Name     string `json:"name"`
	CC       string `json:"compute_capability"`
	MatmulOK bool   `json:"matmul_ok"`
	ConvOK   bool   `json:"conv_ok"`
	Error    string `json:"error,omitempty"`
}

// Env returns the named environment variable as probed.
func (f *Facts) EnvVar(name string) (EnvVar, bool) {
	for _, e := range f.Env {
		if e.Name == name {
			return e, e.Set
		}
	}
	return EnvVar{Name: name}, false
}

// Source returns the status of the named probe source.
func (f *Facts) Source(name string) (SourceStatus, bool) {
	for _, s := range f.Sources {
		if s.Name == name {
			return s, true
		}
	}
	return SourceStatus{}, false
}

// Package returns the first (winning) copy of a package in the environment.
func (p *PythonEnv) Package(name string) (Package, bool) {
	for _, pk := range p.Packages {
		if pk.Name == name && !pk.Shadowed {
			return pk, true
		}
	}
	return Package{}, false
}

// SignatureHit is a signature found in a text, with the line that matched.
type SignatureHit struct {
	ID       string            `json:"id"`
	Cause    Cause             `json:"cause"`
	Title    string            `json:"title"`
	Line     string            `json:"line"`
	Strength int               `json:"strength,omitempty"` // 1 weak (a symptom), 2 medium, 3 strong (proves the cause)
	Values   map[string]string `json:"values,omitempty"`   // what the text says: driver_version, sm, library, ...
}
