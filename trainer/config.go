package trainer

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"gpuwizard/assets"
	"gpuwizard/internal/safefile"
	"gpuwizard/trainer/data"
	"gpuwizard/trainer/detect"
	"gpuwizard/trainer/exec"
	"gpuwizard/trainer/model"
)

// ErrConfig is returned (wrapped) for invalid settings; the message names
// the field.
var ErrConfig = errors.New("trainer: config")

// Config is everything a training run needs. Its YAML form is what
// --config files hold and what args.yaml records.
type Config struct {
	Data         string  `yaml:"data"`
	Task         string  `yaml:"task,omitempty"` // classify, detect, or auto ("" too): detect for a YOLO data.yaml or builtin-detect
	Model        string  `yaml:"model"`
	Epochs       int     `yaml:"epochs"`
	Batch        int     `yaml:"batch"`
	LR           float64 `yaml:"lr"`
	Optimizer    string  `yaml:"optimizer"`
	Momentum     float64 `yaml:"momentum"`
	WeightDecay  float64 `yaml:"weight_decay"`
	Schedule     string  `yaml:"schedule"`
	WarmupEpochs float64 `yaml:"warmup_epochs"`
	StepEvery    int     `yaml:"step_every"`
	Gamma        float64 `yaml:"gamma"`
	ImageSize    int     `yaml:"image_size"`
	Grey         bool    `yaml:"grey"`
	ValSplit     float64 `yaml:"val_split"`
	Seed         int64   `yaml:"seed"`
	Patience     int     `yaml:"patience"`
	Device       string  `yaml:"device"`
	Threads      int     `yaml:"threads"`
	Project      string  `yaml:"project"`
	Name         string  `yaml:"name"`
	// ExtendFrom and ExtendLR are set by "train more epochs" (--extend):
	// after ExtendFrom epochs the cosine schedule continues from ExtendLR,
	// the rate the run had reached, and decays from there.
	ExtendFrom int     `yaml:"extend_from,omitempty"`
	ExtendLR   float64 `yaml:"extend_lr,omitempty"`
}

// Options are the parts of a run that are not configuration.
type Options struct {
	// Resume continues the run in this folder from its last checkpoint.
	Resume string
	// Extend adds epochs to a finished (or stopped) run given in Resume.
	Extend int
	// Control pauses and resumes the run.
	Control *Control
	// Probe asks the doctor about the GPU; nil: not asked.
	Probe DeviceProbe
	// FS writes checkpoints; nil: the real file system.
	FS FileSystem
	// OpenCUDA opens a CUDA device; nil: exec.OpenCUDA (the driver loaded
	// at run time).
	OpenCUDA func(ordinal int) (exec.Backend, exec.CUDAInfo, error)
	// Device, when set, replaces the device of a resumed run's checkpoint
	// (a run begun on a GPU can go on on the CPU, and back).
	Device string
	// Sample reads the GPU's utilisation and this process's use of it
	// while training on CUDA (the proof of GPU use); nil: not sampled.
	Sample GPUSampler
	// Dataset, when it was loaded with the run's data path and options
	// (data.Dataset.LoadedWith), is used instead of loading a second copy
	// (the window has it loaded already); otherwise the run loads its own.
	Dataset *data.Dataset
	// DetectDataset, for a detection run, is used instead of loading
	// cfg.Data when its canvas is the run's (Config.DetectSize): the
	// window's loaded copy, or a test's.
	DetectDataset *detect.Dataset
	// Eager queues every kernel of every step on CUDA instead of
	// capturing the step once in a CUDA graph and replaying it (for
	// debugging, or to compare).
	Eager bool
	// RunIndex, when set, is the index file (DefaultRunIndex) the run
	// folder is recorded in once it exists, so that the window lists runs
	// made anywhere; "" records nothing. A failure to record is logged,
	// never a failure of the run.
	RunIndex string
}

// Defaults returns the embedded defaults (assets/defaults.yaml).
func Defaults() Config {
	var c Config
	if err := decodeStrict(assets.DefaultsYAML, &c); err != nil {
		panic("trainer: embedded defaults.yaml is invalid: " + err.Error()) // a build defect, caught by tests
	}
	return c
}

func decodeStrict(b []byte, c *Config) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && err.Error() != "EOF" {
		return err
	}
	return nil
}

// MaxConfigFile caps a --config file (a run's settings take about 1 KiB).
const MaxConfigFile = 1 << 20

// LoadConfigFile reads a YAML run configuration over base: a regular file
// of at most MaxConfigFile bytes. Unknown keys and wrong types are errors
// naming the file and line (a *ConfigError).
func LoadConfigFile(path string, base Config) (Config, error) {
	b, err := safefile.ReadFile(path, MaxConfigFile, "a config file")
	if err != nil {
		return base, &ConfigError{File: path, Err: err}
	}
	return ParseConfig(path, b, base)
}

// ParseConfig reads YAML settings over base; name is used in errors. A
// setting that is unknown or of the wrong kind, or a line that is not YAML,
// is a *ConfigError that says so in plain words with the line and the
// setting: `run.yaml: line 2 (epochs): "ten" is not a whole number`.
func ParseConfig(name string, b []byte, base Config) (Config, error) {
	c := base
	if err := decodeStrict(b, &c); err != nil {
		return base, &ConfigError{File: name, Problems: plainYAML(err, b), Err: err}
	}
	return c, nil
}

// DataOptions are the settings that say how the dataset is loaded.
func (c Config) DataOptions() data.Options {
	return data.Options{ImageSize: c.ImageSize, Grey: c.Grey, ValSplit: c.ValSplit, Seed: c.Seed}
}

// YAML returns the configuration as YAML (args.yaml).
func (c Config) YAML() []byte {
	b, _ := yaml.Marshal(c)
	return b
}

// Validate checks every field and names the first wrong one with its fix.
func (c Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrConfig, field, fmt.Sprintf(format, args...))
	}
	if err := c.validateTask(bad); err != nil {
		return err
	}
	switch {
	case c.Model != "auto" && !contains(model.Kinds, c.Model):
		return bad("model", "%q is not auto, mlp, lenet, cnn, det-n or det-s", c.Model)
	case c.Epochs < 1 || c.Epochs > 10000:
		return bad("epochs", "%d: must be 1 to 10000", c.Epochs)
	case c.Batch < 1 || c.Batch > 4096:
		return bad("batch", "%d: must be 1 to 4096 (64 is a good start)", c.Batch)
	case !(c.LR > 0) || c.LR > 10:
		return bad("lr", "%g: the learning rate must be above 0 and at most 10 (Adam: 0.001, SGD: 0.01-0.1)", c.LR)
	case c.Optimizer != "adam" && c.Optimizer != "sgd":
		return bad("optimizer", "%q is not adam or sgd", c.Optimizer)
	case c.Momentum < 0 || c.Momentum >= 1:
		return bad("momentum", "%g: must be 0 or more and below 1", c.Momentum)
	case c.WeightDecay < 0 || c.WeightDecay > 1:
		return bad("weight_decay", "%g: must be 0 to 1", c.WeightDecay)
	case c.Schedule != "constant" && c.Schedule != "step" && c.Schedule != "cosine":
		return bad("schedule", "%q is not constant, step or cosine", c.Schedule)
	case c.WarmupEpochs < 0 || c.WarmupEpochs > float64(c.Epochs):
		return bad("warmup_epochs", "%g: must be 0 to the number of epochs (%d)", c.WarmupEpochs, c.Epochs)
	case c.Schedule == "step" && (c.StepEvery < 1 || !(c.Gamma > 0) || c.Gamma > 1):
		return bad("step_every/gamma", "the step schedule needs step_every ≥ 1 and 0 < gamma ≤ 1")
	case !c.IsDetect() && c.ImageSize != 0 && (c.ImageSize < 8 || c.ImageSize > 256):
		return bad("image_size", "%d: must be 0 (the dataset's own) or 8 to 256", c.ImageSize)
	case !(c.ValSplit > 0) || c.ValSplit >= 1:
		return bad("val_split", "%g: must be above 0 and below 1 (0.1 keeps 10%% for validation)", c.ValSplit)
	case c.Patience < 0:
		return bad("patience", "%d: must be 0 (off) or more", c.Patience)
	case c.Device != "auto" && c.Device != "cpu" && c.Device != "cuda" && !strings.HasPrefix(c.Device, "cuda:"):
		return bad("device", "%q is not auto, cpu or cuda[:N]", c.Device)
	case c.Threads < 0 || c.Threads > 1024:
		return bad("threads", "%d: must be 0 (all) to 1024", c.Threads)
	case c.ExtendFrom < 0 || (c.ExtendFrom > 0 && (c.ExtendFrom >= c.Epochs || !(c.ExtendLR > 0) || c.ExtendLR > 10)):
		return bad("extend_from/extend_lr", "%d/%g: set by train more epochs; extend_from must be below epochs (%d) and extend_lr above 0: delete both lines to restart the schedule", c.ExtendFrom, c.ExtendLR, c.Epochs)
	case c.Project == "":
		return bad("project", "empty: name the folder for runs (runs)")
	case strings.ContainsAny(c.Name, `/\`) || c.Name == "." || c.Name == "..":
		return bad("name", "%q: a run name cannot contain a path", c.Name)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// AutoModel says which model a run with cfg builds for ds, and why in
// words (what the settings show for "auto").
func AutoModel(cfg Config, ds *data.Dataset) (kind, why string) {
	if cfg.Model != "auto" && cfg.Model != "" {
		return cfg.Model, "chosen in the settings"
	}
	if ds == nil {
		return model.CNN, "the CNN, unless the images are 28×28 grey (then LeNet-5)"
	}
	colour := "colour"
	if ds.Channels == 1 {
		colour = "grey"
	}
	if ds.Channels == 1 && ds.Height == 28 && ds.Width == 28 {
		return model.LeNet, "LeNet-5: the images are 28×28 grey (MNIST-like), where it is as accurate as the CNN and many times faster"
	}
	return model.CNN, fmt.Sprintf("the CNN: the images are %d×%d %s, and LeNet-5 takes only 28×28 grey ones", ds.Width, ds.Height, colour)
}

// modelSpec is the network a run with cfg builds for ds.
func modelSpec(cfg Config, d *data.Dataset) (model.Spec, error) {
	kind, _ := AutoModel(cfg, d)
	if cfg.ImageSize != 0 && (d.Format == "idx" || d.Format == "builtin" || d.Format == "cifar10") && cfg.ImageSize != d.Height {
		return model.Spec{}, fmt.Errorf("%w: image_size: %d, but %s images are %dx%d and are not resized: set image_size 0", ErrConfig, cfg.ImageSize, d.Format, d.Width, d.Height)
	}
	s := model.Spec{Kind: kind, Channels: d.Channels, Height: d.Height, Width: d.Width, Classes: len(d.Classes)}
	if err := s.Validate(); err != nil {
		return s, fmt.Errorf("trainer: model for %s (%dx%d, %d channels): %w", d.Root, d.Width, d.Height, d.Channels, err)
	}
	return s, nil
}
