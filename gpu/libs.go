package gpu

import (
	"regexp"
	"strings"
)

var nvccReleaseRE = regexp.MustCompile(`release ([0-9]+\.[0-9]+)(?:, V([0-9][0-9.]*))?`)

// ParseNvccVersion reads the version from `nvcc --version` output
// ("Cuda compilation tools, release 12.4, V12.4.131" → "12.4.131").
func ParseNvccVersion(out string) string {
	m := nvccReleaseRE.FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	if m[2] != "" {
		return strings.TrimRight(m[2], ".")
	}
	return m[1]
}

// CUDALibNames are the libraries the doctor tracks, by file-name prefix.
var CUDALibNames = []string{"libcuda", "libcudart", "libcublas", "libcudnn", "libnvidia-ml", "libnvrtc"}

// LibName returns the tracked library a file name belongs to ("libcudnn.so.9"
// → "libcudnn"; "libcudnn_ops.so.9" → "" as only the main one is tracked).
func LibName(file string) string {
	base, _, ok := strings.Cut(file, ".so")
	if !ok {
		return ""
	}
	for _, n := range CUDALibNames {
		if base == n {
			return n
		}
	}
	return ""
}

// SoVersion reads the version after ".so." in a file name.
func SoVersion(file string) string {
	_, after, ok := strings.Cut(file, ".so.")
	if !ok {
		return ""
	}
	if _, ok := ParseVersion(after); !ok {
		return ""
	}
	return after
}

var ldconfigLineRE = regexp.MustCompile(`^\s*(\S+) \(([^)]*)\) => (\S+)`)

// ParseLdconfig reads `ldconfig -p` output into the tracked libraries.
func ParseLdconfig(out string) []Library {
	var libs []Library
	for _, line := range strings.Split(out, "\n") {
		m := ldconfigLineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := LibName(m[1])
		if name == "" || (m[2] != "" && !strings.Contains(m[2], "64")) {
			continue // not tracked, or a 32-bit library
		}
		libs = append(libs, Library{Name: name, Soname: m[1], Path: m[3], Version: SoVersion(m[1]), Origin: "ldconfig"})
	}
	return libs
}

var cudnnDefineRE = regexp.MustCompile(`(?m)^\s*#\s*define\s+CUDNN_(MAJOR|MINOR|PATCHLEVEL)\s+([0-9]+)`)

// ParseCudnnHeader reads CUDNN_MAJOR/MINOR/PATCHLEVEL from cudnn_version.h.
func ParseCudnnHeader(src string) string {
	parts := map[string]string{}
	for _, m := range cudnnDefineRE.FindAllStringSubmatch(src, -1) {
		if _, dup := parts[m[1]]; !dup {
			parts[m[1]] = m[2]
		}
	}
	if parts["MAJOR"] == "" {
		return ""
	}
	v := parts["MAJOR"] + "." + orZero(parts["MINOR"]) + "." + orZero(parts["PATCHLEVEL"])
	return v
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}
