package paste

import (
	"regexp"
	"strings"

	"gpuwizard/gpu"
)

// Containers named in words. The container recogniser matched one regular
// expression of twenty alternatives on every line that holds one of its
// words: 30 µs a line, a tenth of `doctor --from` on 100 KB. Its words
// are looked for as literals now (whole words, as \b…\b matched them),
// and only two short patterns remain: a preposition or a verb before the
// container ("inside a docker", "from my nvidia container", "I started
// the container") and docker before a
// Chinese or Japanese locative or verb (docker里, docker部署).

// containerWords are whole words (or runs of words) that name a container.
var containerWords = []string{
	"dockerfile", "kubernetes", "k8s", "singularity", "apptainer", "nvidia-docker", "podman", "enroot", "pyxis",
	"docker desktop", "docker image", "docker images", "docker-image", "docker-images", "docker container",
	"docker containers", "docker-container", "docker-containers", "im docker", "im container", "devcontainer",
	"devcontainers", "dev container", "dev containers",
}

// containerParts name a container wherever they are: Compose, and the
// word for container in Chinese, Japanese and Korean.
var containerParts = []string{"docker-compose", "docker compose", "容器", "コンテナ", "컨테이너"}

var (
	containerPhraseRE = regexp.MustCompile(`\b(?:inside|in|within|from|start(?:ed|ing)?|ran|run(?:ning)?|launch(?:ed|ing)?|creat(?:ed|ing)) (?:a |the |my |our )?(?:[\w-]+ )?(?:docker|podman|container|pod)\b`)
	dockerLocativeRE  = regexp.MustCompile(`docker\s*(?:里|中|内|内部|镜像|環境|環境内|部署|运行|启动)`)
)

// namesContainer says whether low, a line ASCII-lowered, names a
// container in words.
func namesContainer(low string) bool {
	for _, w := range containerWords {
		if hasWord(low, w) {
			return true
		}
	}
	for _, p := range containerParts {
		if strings.Contains(low, p) {
			return true
		}
	}
	if !isASCII(low) && strings.Contains(low, "docker") && dockerLocativeRE.MatchString(low) {
		return true
	}
	if formAnswer(low) {
		return true
	}
	return containerPhraseRE.MatchString(low)
}

// formAnswer: an issue form's answer or a list item that is Docker alone
// ("Docker", "- Docker Compose", "Unraid 6.12 (docker)"): how the program
// was installed or deployed.
func formAnswer(low string) bool {
	if strings.Contains(low, "(docker)") {
		return true
	}
	t := strings.Trim(low, "-*•:. \t\r\n")
	switch t {
	case "docker", "docker compose", "docker-compose", "docker desktop", "docker engine", "via docker", "using docker", "with docker", "docker image", "docker container":
		return true
	}
	return false
}

// hasWord says whether w occurs in s as a whole word: with no ASCII letter,
// digit or underscore right before or after it (\b at both ends; w starts
// and ends with one).
func hasWord(s, w string) bool {
	return gpu.AnyAt(s, w, func(i int) bool {
		return (i == 0 || !isWordByte(s[i-1])) && (i+len(w) == len(s) || !isWordByte(s[i+len(w)]))
	})
}

// isWordByte is \w of Go's regexp: an ASCII letter, digit or underscore.
func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// cudaImageTag says whether low, a line ASCII-lowered, names a container
// image by a CUDA tag: nvidia/cuda:…, or a name, a colon and a tag with
// cuda and a digit in it (pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime):
// what (?i)nvidia/cuda:|\w:[\w.-]*cuda\d matched, without trying that
// pattern at every byte.
func cudaImageTag(low string) bool {
	if strings.Contains(low, "nvidia/cuda:") {
		return true
	}
	return gpu.AnyAt(low, "cuda", func(i int) bool {
		if i+4 >= len(low) || low[i+4] < '0' || low[i+4] > '9' {
			return false
		}
		j := i // back over the tag's letters, digits, dots and hyphens to its colon
		for j > 0 && (isWordByte(low[j-1]) || low[j-1] == '.' || low[j-1] == '-') {
			j--
		}
		return j >= 2 && low[j-1] == ':' && isWordByte(low[j-2])
	})
}

// composeLogLine says whether s is a line of Docker Compose's logs: a
// service's name, a hyphen or underscore and its replica number, spaces,
// then "| " ("whisper-1  | Using device: cpu").
func composeLogLine(s string) bool {
	bar := strings.IndexByte(s, '|')
	if bar < 3 || bar+1 >= len(s) || s[bar+1] != ' ' || s[bar-1] != ' ' {
		return false
	}
	name := strings.TrimRight(s[:bar], " ")
	if name == "" || strings.ContainsAny(name, " \t") {
		return false
	}
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i == len(name) || i < 2 || name[i-1] != '-' && name[i-1] != '_' {
		return false
	}
	for j := 0; j < i-1; j++ {
		if c := name[j]; !isWordByte(c) && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// composeProgress says whether low, a line ASCII-lowered, is Docker
// Compose's progress for a container ("✔ container ollama  started").
func composeProgress(low string) bool {
	i := strings.Index(low, "container ")
	if i < 0 {
		return false
	}
	rest := strings.Fields(low[i+len("container "):])
	if len(rest) < 2 {
		return false
	}
	switch rest[1] {
	case "started", "starting", "created", "creating", "running", "recreated", "recreate", "healthy", "attaching":
		prefix := strings.TrimSpace(low[:i])
		return prefix == "" || strings.HasPrefix(prefix, "✔") || strings.HasPrefix(prefix, "⠿") || strings.HasPrefix(prefix, "-")
	}
	return false
}
