package gpu

import (
	"strconv"
	"strings"
)

// Version is a dotted numeric version such as "550.54.15" or "12.4".
// Parts that are missing compare as zero, so "12" == "12.0".
type Version []int

// ParseVersion reads the leading dotted numbers of s ("2.1.0+cu121" → 2.1.0,
// "v12.4" → 12.4, "release 11.8, V11.8.89" is not accepted: pass the number).
// It returns false when s does not start with a number (after an optional "v").
func ParseVersion(s string) (Version, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
	var v Version
	for len(s) > 0 {
		i := 0
		for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 {
			break
		}
		n, err := strconv.Atoi(s[:i])
		if err != nil {
			break
		}
		v = append(v, n)
		s = s[i:]
		if len(s) < 2 || s[0] != '.' || s[1] < '0' || s[1] > '9' || len(v) >= 6 {
			break
		}
		s = s[1:]
	}
	return v, len(v) > 0
}

// MustVersion parses s and returns nil when it is not a version.
func MustVersion(s string) Version {
	v, _ := ParseVersion(s)
	return v
}

// Compare returns -1, 0 or +1 as v is older than, equal to, or newer than w.
func (v Version) Compare(w Version) int {
	n := max(len(v), len(w))
	for i := 0; i < n; i++ {
		a, b := 0, 0
		if i < len(v) {
			a = v[i]
		}
		if i < len(w) {
			b = w[i]
		}
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
	}
	return 0
}

// Major returns the first part, or -1 when v is empty.
func (v Version) Major() int {
	if len(v) == 0 {
		return -1
	}
	return v[0]
}

// Minor returns the second part, or 0.
func (v Version) Minor() int {
	if len(v) < 2 {
		return 0
	}
	return v[1]
}

func (v Version) String() string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ".")
}

// VersionAtLeast reports whether a ≥ b; false when either is not a version.
func VersionAtLeast(a, b string) bool {
	va, ok1 := ParseVersion(a)
	vb, ok2 := ParseVersion(b)
	return ok1 && ok2 && va.Compare(vb) >= 0
}

// CUDAFromInt turns the integer form that NVML and cuDriverGetVersion use
// (12040) into "12.4".
func CUDAFromInt(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n/1000) + "." + strconv.Itoa((n%1000)/10)
}

// LocalTag returns the part after "+" in a Python version ("2.1.0+cu121" →
// "cu121"), or "".
func LocalTag(v string) string {
	if i := strings.IndexByte(v, '+'); i >= 0 {
		return v[i+1:]
	}
	return ""
}

// VariantCUDA turns a wheel variant tag into its CUDA version ("cu121" →
// "12.1", "cu118" → "11.8", "cu130" → "13.0"); "" when tag is not a cuXYZ tag.
func VariantCUDA(tag string) string {
	if !strings.HasPrefix(tag, "cu") {
		return ""
	}
	d := tag[2:]
	if len(d) < 3 || len(d) > 4 {
		return ""
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return ""
		}
	}
	return strings.TrimLeft(d[:len(d)-1], "0") + "." + d[len(d)-1:]
}

// CUDAVariant is the inverse of VariantCUDA ("12.1" → "cu121").
func CUDAVariant(cuda string) string {
	v, ok := ParseVersion(cuda)
	if !ok {
		return ""
	}
	return "cu" + strconv.Itoa(v.Major()) + strconv.Itoa(v.Minor())
}

// MajorMinor returns "X.Y" of a version string, or "" when it is not one.
func MajorMinor(s string) string {
	v, ok := ParseVersion(s)
	if !ok {
		return ""
	}
	return strconv.Itoa(v.Major()) + "." + strconv.Itoa(v.Minor())
}

// ArchFromSM turns "sm_86" or "compute_90" into "8.6"/"9.0", "sm_120" into "12.0".
func ArchFromSM(s string) string {
	s = strings.TrimSuffix(s, "a")
	d := ""
	for _, p := range []string{"sm_", "compute_"} {
		if strings.HasPrefix(s, p) {
			d = s[len(p):]
		}
	}
	if len(d) < 2 {
		return ""
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return ""
		}
	}
	return strings.TrimLeft(d[:len(d)-1], "0") + "." + d[len(d)-1:]
}
