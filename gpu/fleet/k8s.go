package fleet

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// Kubernetes names and labels of what the fleet creates.
const (
	LabelApp      = "app.kubernetes.io/name" // = AppName on every Job and Pod
	AppName       = "gpuwizard-fleet"
	LabelRun      = "app.kubernetes.io/instance" // = the run's ID: what --run deletes
	AnnotNode     = "gpuwizard.io/node"          // the node a Job checks
	ContainerName = "doctor"
	GPUResource   = "nvidia.com/gpu"
	// BinaryDir is where, without an image holding gpuwizard, the binary
	// is copied into each pod (an emptyDir: no ConfigMap, whose 1 MiB
	// limit a static binary passes).
	BinaryDir = "/opt/gpuwizard"
)

// KubeNode is a GPU node of the cluster.
type KubeNode struct {
	Name string
	GPUs int // allocatable nvidia.com/gpu
}

// KubeOptions say what the manifests run. The zero value of a field is
// its default.
type KubeOptions struct {
	Namespace string // "": default
	// Image holds gpuwizard (run as Command). Without it, BaseImage runs
	// and waits for the binary to be copied in (kubectl cp), which needs
	// sh and tar in BaseImage.
	Image     string
	Command   string // gpuwizard's path in Image; "": gpuwizard
	BaseImage string // "": debian:12-slim
	// GPUsPerNode is the nvidia.com/gpu each pod asks for. Negative:
	// every allocatable GPU of its node; 0: none (the nvidia runtime
	// class then shows every GPU, NVIDIA_VISIBLE_DEVICES=all).
	GPUsPerNode  int
	RuntimeClass string // runtimeClassName; "": none (with GPUsPerNode 0: nvidia)
	Deep         bool
	Timeout      time.Duration // each Job's activeDeadlineSeconds; zero: 2 minutes (5 with Deep)
	RunID        string        // names and labels the Jobs of one run (lowercase letters and digits)
}

func (o *KubeOptions) fill() {
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.Command == "" {
		o.Command = "gpuwizard"
	}
	if o.BaseImage == "" {
		o.BaseImage = "debian:12-slim"
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
		if o.Deep {
			o.Timeout = 5 * time.Minute
		}
	}
	if o.RunID == "" {
		o.RunID = strconv.FormatInt(time.Now().Unix()%1e8, 36)
	}
	if o.GPUsPerNode == 0 && o.RuntimeClass == "" {
		o.RuntimeClass = "nvidia"
	}
}

// JobName is the name of the Job of the i-th node of a run.
func JobName(runID string, i int) string {
	return fmt.Sprintf("gpuwizard-%s-%d", runID, i)
}

// The manifest's types: the fields of Kubernetes' batch/v1 Job and core/v1
// Pod that the fleet uses, named as the API names them (the tests decode
// the manifests strictly into k8s.io/api's types).
type (
	kubeMeta struct {
		Name        string            `yaml:"name,omitempty"`
		Namespace   string            `yaml:"namespace,omitempty"`
		Labels      map[string]string `yaml:"labels,omitempty"`
		Annotations map[string]string `yaml:"annotations,omitempty"`
	}
	kubeJob struct {
		APIVersion string   `yaml:"apiVersion"`
		Kind       string   `yaml:"kind"`
		Metadata   kubeMeta `yaml:"metadata"`
		Spec       jobSpec  `yaml:"spec"`
	}
	jobSpec struct {
		BackoffLimit            int         `yaml:"backoffLimit"`
		ActiveDeadlineSeconds   int64       `yaml:"activeDeadlineSeconds"`
		TTLSecondsAfterFinished int         `yaml:"ttlSecondsAfterFinished"`
		Template                podTemplate `yaml:"template"`
	}
	podTemplate struct {
		Metadata kubeMeta `yaml:"metadata"`
		Spec     podSpec  `yaml:"spec"`
	}
	podSpec struct {
		RestartPolicy    string       `yaml:"restartPolicy"`
		RuntimeClassName string       `yaml:"runtimeClassName,omitempty"`
		Affinity         affinity     `yaml:"affinity"`
		Tolerations      []toleration `yaml:"tolerations"`
		Containers       []container  `yaml:"containers"`
		Volumes          []volume     `yaml:"volumes,omitempty"`
	}
	affinity struct {
		NodeAffinity struct {
			Required struct {
				Terms []nodeSelectorTerm `yaml:"nodeSelectorTerms"`
			} `yaml:"requiredDuringSchedulingIgnoredDuringExecution"`
		} `yaml:"nodeAffinity"`
	}
	nodeSelectorTerm struct {
		MatchFields []selectorRequirement `yaml:"matchFields"`
	}
	selectorRequirement struct {
		Key      string   `yaml:"key"`
		Operator string   `yaml:"operator"`
		Values   []string `yaml:"values"`
	}
	toleration struct {
		Operator string `yaml:"operator"`
		Effect   string `yaml:"effect,omitempty"`
		Key      string `yaml:"key,omitempty"`
	}
	container struct {
		Name         string        `yaml:"name"`
		Image        string        `yaml:"image"`
		Command      []string      `yaml:"command"`
		Env          []envVar      `yaml:"env,omitempty"`
		Resources    resources     `yaml:"resources,omitempty"`
		VolumeMounts []volumeMount `yaml:"volumeMounts,omitempty"`
	}
	envVar struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	}
	resources struct {
		Limits map[string]string `yaml:"limits,omitempty"`
	}
	volumeMount struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	}
	volume struct {
		Name     string   `yaml:"name"`
		EmptyDir struct{} `yaml:"emptyDir"`
	}
)

// Manifests writes a Job for each node (YAML documents separated by
// "---"): one pod pinned to the node by node affinity, asking for its
// GPUs, tolerating NoSchedule taints (GPU nodes often carry
// nvidia.com/gpu:NoSchedule), never restarted, and deleted by Kubernetes
// 10 minutes after it ends if --run did not delete it first.
func Manifests(nodes []KubeNode, o KubeOptions) ([]byte, error) {
	o.fill()
	var b bytes.Buffer
	for i, n := range nodes {
		if i > 0 {
			b.WriteString("---\n")
		}
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(job(n, i, o)); err != nil {
			return nil, fmt.Errorf("writing the Job of node %s: %w", n.Name, err)
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// job is the Job of the i-th node.
func job(n KubeNode, i int, o KubeOptions) kubeJob {
	labels := map[string]string{LabelApp: AppName, LabelRun: o.RunID}
	meta := kubeMeta{Name: JobName(o.RunID, i), Namespace: o.Namespace, Labels: labels,
		Annotations: map[string]string{AnnotNode: n.Name}}
	c := container{Name: ContainerName, Image: o.Image, Command: doctorArgs(o.Command, o.Deep)}
	var vols []volume
	if o.Image == "" {
		c.Image = o.BaseImage
		c.Command = []string{"/bin/sh", "-c", waitScript(o.Deep)}
		c.VolumeMounts = []volumeMount{{Name: "gpuwizard", MountPath: BinaryDir}}
		vols = []volume{{Name: "gpuwizard"}}
	}
	gpus := o.GPUsPerNode
	if gpus < 0 {
		gpus = n.GPUs
	}
	if gpus > 0 {
		c.Resources.Limits = map[string]string{GPUResource: strconv.Itoa(gpus)}
	} else {
		c.Env = []envVar{{Name: "NVIDIA_VISIBLE_DEVICES", Value: "all"}}
	}
	spec := podSpec{RestartPolicy: "Never", RuntimeClassName: o.RuntimeClass, Containers: []container{c}, Volumes: vols,
		Tolerations: []toleration{{Operator: "Exists", Effect: "NoSchedule"}}}
	spec.Affinity.NodeAffinity.Required.Terms = []nodeSelectorTerm{{MatchFields: []selectorRequirement{
		{Key: "metadata.name", Operator: "In", Values: []string{n.Name}}}}}
	return kubeJob{APIVersion: "batch/v1", Kind: "Job", Metadata: meta, Spec: jobSpec{
		ActiveDeadlineSeconds: int64(o.Timeout / time.Second), TTLSecondsAfterFinished: 600,
		Template: podTemplate{Metadata: kubeMeta{Labels: labels, Annotations: meta.Annotations}, Spec: spec}}}
}

func doctorArgs(cmd string, deep bool) []string {
	args := []string{cmd, "doctor", "--json"}
	if deep {
		args = append(args, "--deep")
	}
	return args
}

// waitScript waits in the pod until the binary has been copied in whole
// (copied as .part, then renamed), then runs the doctor.
func waitScript(deep bool) string {
	bin := BinaryDir + "/gpuwizard"
	s := "while [ ! -x " + bin + " ]; do sleep 1; done; exec " + bin + " doctor --json"
	if deep {
		s += " --deep"
	}
	return s
}
