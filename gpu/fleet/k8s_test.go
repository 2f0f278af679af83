package fleet

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// decodeJobs decodes every document of a manifest strictly into
// k8s.io/api's batch/v1 Job: an unknown or misspelt field, a duplicate
// field, a value of the wrong type, an unknown apiVersion or kind, or a
// quantity that does not parse fails. Then it checks what the API server
// would refuse beyond the schema: names, label keys and values.
func decodeJobs(t *testing.T, manifest []byte) []*batchv1.Job {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := batchv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	dec := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifest)))
	var jobs []*batchv1.Job
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		obj, gvk, err := dec.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("document %d does not decode strictly as a Kubernetes object: %v\n%s", len(jobs), err, doc)
		}
		job, ok := obj.(*batchv1.Job)
		if !ok {
			t.Fatalf("document %d is a %v, not a batch/v1 Job", len(jobs), gvk)
		}
		checkJob(t, job)
		jobs = append(jobs, job)
	}
	return jobs
}

// checkJob applies the API server's rules on names and labels, and the
// Job rules the fleet relies on.
func checkJob(t *testing.T, j *batchv1.Job) {
	t.Helper()
	errs := validation.IsDNS1123Subdomain(j.Name)
	if len(j.Name) > validation.DNS1123LabelMaxLength { // the job-name label of its pods
		errs = append(errs, "longer than 63 characters")
	}
	for k, v := range j.Spec.Template.Labels {
		errs = append(errs, validation.IsQualifiedName(k)...)
		errs = append(errs, validation.IsValidLabelValue(v)...)
	}
	for _, c := range j.Spec.Template.Spec.Containers {
		errs = append(errs, validation.IsDNS1123Label(c.Name)...)
		if c.Image == "" || len(c.Command) == 0 {
			errs = append(errs, "container "+c.Name+" without image or command")
		}
	}
	if p := j.Spec.Template.Spec.RestartPolicy; p != corev1.RestartPolicyNever {
		errs = append(errs, "a Job's pod must not restart: restartPolicy "+string(p))
	}
	if len(errs) > 0 {
		t.Fatalf("Job %s: %s", j.Name, strings.Join(errs, "; "))
	}
}

func TestManifestsValidateAgainstKubernetesTypes(t *testing.T) {
	nodes := []KubeNode{{Name: "gpu-node-1.example.com", GPUs: 8}, {Name: "gpu2", GPUs: 1}}
	tests := []struct {
		name  string
		o     KubeOptions
		check func(t *testing.T, jobs []*batchv1.Job)
	}{
		{"image", KubeOptions{Image: "registry.example.com/gpuwizard:1.0", GPUsPerNode: -1, RunID: "abc123", Namespace: "ops"},
			func(t *testing.T, jobs []*batchv1.Job) {
				c := jobs[0].Spec.Template.Spec.Containers[0]
				if strings.Join(c.Command, " ") != "gpuwizard doctor --json" || c.Image != "registry.example.com/gpuwizard:1.0" {
					t.Errorf("command %q image %q", c.Command, c.Image)
				}
				if q := c.Resources.Limits[GPUResource]; q.String() != "8" {
					t.Errorf("limit %s, want every GPU of the node (8)", q.String())
				}
				if q := jobs[1].Spec.Template.Spec.Containers[0].Resources.Limits[GPUResource]; q.String() != "1" {
					t.Errorf("second node's limit %s", q.String())
				}
				if jobs[0].Namespace != "ops" || jobs[0].Labels[LabelRun] != "abc123" || *jobs[0].Spec.BackoffLimit != 0 {
					t.Errorf("meta %+v backoff %d", jobs[0].ObjectMeta, *jobs[0].Spec.BackoffLimit)
				}
			}},
		{"binary copied in", KubeOptions{GPUsPerNode: 2, Deep: true, RunID: "r1"},
			func(t *testing.T, jobs []*batchv1.Job) {
				spec := jobs[0].Spec.Template.Spec
				c := spec.Containers[0]
				if c.Image != "debian:12-slim" || !strings.Contains(c.Command[2], BinaryDir+"/gpuwizard doctor --json --deep") {
					t.Errorf("image %q command %q", c.Image, c.Command)
				}
				if len(spec.Volumes) != 1 || spec.Volumes[0].EmptyDir == nil || c.VolumeMounts[0].MountPath != BinaryDir {
					t.Errorf("volumes %+v mounts %+v: want an emptyDir at %s", spec.Volumes, c.VolumeMounts, BinaryDir)
				}
				if *jobs[0].Spec.ActiveDeadlineSeconds != 300 {
					t.Errorf("deadline %d, want 5 minutes with --deep", *jobs[0].Spec.ActiveDeadlineSeconds)
				}
			}},
		{"every GPU through the runtime", KubeOptions{Image: "gw", RunID: "r2", Timeout: time.Minute},
			func(t *testing.T, jobs []*batchv1.Job) {
				spec := jobs[0].Spec.Template.Spec
				if len(spec.Containers[0].Resources.Limits) != 0 || spec.RuntimeClassName == nil || *spec.RuntimeClassName != "nvidia" ||
					spec.Containers[0].Env[0].Value != "all" {
					t.Errorf("limits %v runtime %v env %v", spec.Containers[0].Resources.Limits, spec.RuntimeClassName, spec.Containers[0].Env)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Manifests(nodes, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			jobs := decodeJobs(t, m)
			if len(jobs) != len(nodes) {
				t.Fatalf("%d Jobs for %d nodes", len(jobs), len(nodes))
			}
			for i, j := range jobs {
				terms := j.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
				if len(terms) != 1 || terms[0].MatchFields[0].Key != "metadata.name" || terms[0].MatchFields[0].Values[0] != nodes[i].Name {
					t.Errorf("Job %d is not pinned to %s: %+v", i, nodes[i].Name, terms)
				}
				if j.Annotations[AnnotNode] != nodes[i].Name || j.Spec.Template.Spec.Tolerations[0].Effect != corev1.TaintEffectNoSchedule {
					t.Errorf("Job %d: annotations %v tolerations %v", i, j.Annotations, j.Spec.Template.Spec.Tolerations)
				}
			}
			tt.check(t, jobs)
		})
	}
}

// TestStrictDecodingCatchesMistakes proves the check can fail: a misspelt
// field, a bad quantity and a wrong type are refused.
func TestStrictDecodingCatchesMistakes(t *testing.T) {
	m, err := Manifests([]KubeNode{{Name: "n1", GPUs: 1}}, KubeOptions{Image: "gw", RunID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := batchv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	dec := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	for _, bad := range [][2]string{{"restartPolicy:", "restartPolicyy:"}, {"backoffLimit: 0", "backoffLimit: none"},
		{"app.kubernetes.io/name: gpuwizard-fleet", "app.kubernetes.io/name: [1]"}} {
		if _, _, err := dec.Decode(bytes.Replace(m, []byte(bad[0]), []byte(bad[1]), 1), nil, nil); err == nil {
			t.Errorf("%q accepted", bad[1])
		}
	}
}
