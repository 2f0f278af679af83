package paste

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gpuwizard/gpu/internal/corpus"
)

// containerOld is the one pattern namesContainer replaced (with the verbs
// before a container added to its first alternative since, and an issue
// form's answer of Docker alone).
var containerOld = regexp.MustCompile(`\b(?:inside|in|within|from|start(?:ed|ing)?|ran|run(?:ning)?|launch(?:ed|ing)?|creat(?:ed|ing)) (?:a |the |my |our )?(?:[\w-]+ )?(?:docker|podman|container|pod)\b|\bdocker[- ](?:image|container)s?\b|\bim (?:docker|container)\b|docker[- ]compose|\bdockerfile\b|\bkubernetes\b|\bk8s\b|\bsingularity\b|\bapptainer\b|\bnvidia-docker\b|\bpodman\b|\benroot\b|\bpyxis\b|\bdev ?containers?\b|\bdocker desktop\b|容器|コンテナ|컨테이너|docker\s*(?:里|中|内|内部|镜像|環境|環境内|部署|运行|启动)|\(docker\)|^[-*•:. \t\r\n]*(?:docker|docker compose|docker-compose|docker desktop|docker engine|via docker|using docker|with docker|docker image|docker container)[-*•:. \t\r\n]*$`)

// TestNamesContainerAsThePattern: the literal search says what the one
// pattern said, on every line of every corpus report (both parts) and on
// lines made to sit on its edges (words inside longer words, at the ends
// of the line, hyphens and underscores around them).
func TestNamesContainerAsThePattern(t *testing.T) {
	lines := append(corpusLines(t), "dockerfile", "my_dockerfile", "dockerfiles", "x-kubernetes-y", "k8s", "ak8s", "k8s_",
		"in docker", "indocker", "within our custom-build container", "from the nvidia/cuda container", "inside a pod.",
		"docker images", "docker-imagesx", "docker imagery", "im docker", "swim docker", "devcontainers", "dev container",
		"devcontainer_", "docker-compose.yml", "docker compose up", "docker里跑", "docker 部署", "在容器中", "コンテナで", "컨테이너",
		"docker desktop", "docker desktops", "i started the container without --gpus", "ran my container", "restarted the container", "podman", "podmans", "nvidia-docker2", "pyxis/enroot", "singularity.", "apptainer exec",
		"Docker", " - Docker Compose", "Unraid 6.12 (docker)", "docker run", "dockerhub")
	checked, yes := 0, 0
	for _, l := range lines {
		low := asciiLower(l)
		want := containerOld.MatchString(low)
		if got := namesContainer(low); got != want {
			t.Errorf("%q: namesContainer %v, the pattern %v", l, got, want)
		}
		checked++
		if want {
			yes++
		}
	}
	if yes < 50 {
		t.Fatalf("only %d of %d lines name a container: the check checks little", yes, checked)
	}
	t.Logf("%d lines, %d name a container", checked, yes)
}

// cudaTagOld is the pattern cudaImageTag replaced.
var cudaTagOld = regexp.MustCompile(`(?i)nvidia/cuda:|\w:[\w.-]*cuda\d`)

// TestCUDAImageTagAsThePattern: as TestNamesContainerAsThePattern, for
// the CUDA image tags.
func TestCUDAImageTagAsThePattern(t *testing.T) {
	lines := append(corpusLines(t), "FROM nvidia/cuda:12.1.0-base", "pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime", "image: x:cuda11", ":cuda12",
		" :cuda12", "a: cuda12", "tag:latest-CUDA12.4", "a:b:c.cuda1", "x:y cuda12", "cuda12", "x:cudax1", "x_:cuda9", "é:cuda1")
	yes := 0
	for _, l := range lines {
		low := asciiLower(l)
		want := cudaTagOld.MatchString(low)
		if got := cudaImageTag(low); got != want {
			t.Errorf("%q: cudaImageTag %v, the pattern %v", l, got, want)
		}
		if want {
			yes++
		}
	}
	if yes < 8 {
		t.Fatalf("only %d lines with a CUDA image tag: the check checks little", yes)
	}
}

// corpusLines is every line of every corpus report, both parts.
func corpusLines(t *testing.T) []string {
	t.Helper()
	var lines []string
	for _, part := range []string{"tuning", "heldout"} {
		rs, err := corpus.Load(filepath.Join("..", "testdata", "corpus"), part)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			lines = append(lines, strings.Split(r.Text, "\n")...)
		}
	}
	return lines
}

// TestComposeLines: Docker Compose's log and progress lines name a
// container; a Markdown table, nvidia-smi's rows and a shell pipe do not.
func TestComposeLines(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{
		{"whisper-1  | Using device: cpu", true},
		{"app_1  | GPU available: False, used: False", true},
		{"my.service-12 | started", true},
		{"| package | version |", false},
		{"|   0  NVIDIA GeForce RTX 3060        Off |   00000000:01:00.0  On |", false},
		{"cat log.txt | grep cuda", false},
		{"step-1 |", false},
		{"a b-1 | x", false},
	} {
		if got := composeLogLine(c.line); got != c.want {
			t.Errorf("composeLogLine(%q) = %v, want %v", c.line, got, c.want)
		}
	}
	for _, c := range []struct {
		line string
		want bool
	}{
		{" ✔ container ollama  started", true},
		{"container whisper  created", true},
		{" ⠿ container app-1  running", true},
		{"the container ollama started but sees no gpu", false},
		{"container image", false},
	} {
		if got := composeProgress(c.line); got != c.want {
			t.Errorf("composeProgress(%q) = %v, want %v", c.line, got, c.want)
		}
	}
}
