package gpu

import (
	"strings"
	"unicode/utf8"
)

// NormalizeName lowercases a distribution name and folds "_" and "." to "-".
func NormalizeName(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(s))
}

// Interesting reports whether a distribution matters to GPU training:
// the frameworks, their GPU builds and NVIDIA's library wheels.
func Interesting(name string) bool {
	switch name {
	case "torch", "torchvision", "torchaudio", "tensorflow", "tensorflow-cpu", "tensorflow-gpu",
		"tf-nightly", "tensorflow-intel", "tensorflow-base", "ultralytics", "yolov5", "jax", "jaxlib", "triton",
		"onnxruntime", "onnxruntime-gpu", "paddlepaddle", "paddlepaddle-gpu", "mmcv", "mmcv-full", "mmcv-lite",
		"detectron2", "xformers", "keras", "tensorrt", "cupy":
		return true
	}
	return strings.HasPrefix(name, "nvidia-") || strings.HasPrefix(name, "jax-cuda") || strings.HasPrefix(name, "cupy-cuda")
}

func Contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ShellQuote quotes s for a POSIX shell when it needs quoting.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:=@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// OrUnknown is s, or "none" when empty.
func OrUnknown(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Sanitize removes what a terminal would interpret from pasted text: ANSI
// escape sequences (colour, cursor movement, window titles), other C0 and
// C1 control characters but tab, newline and carriage return, and invalid
// UTF-8. A report's lines are printed back to the user, so nothing in
// them may drive the terminal.
func Sanitize(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\n' && c != '\t' && c != '\r' || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			i++
		case r == 0x1b:
			i += escapeLen(s[i:])
		case r == 0x9b: // C1 CSI
			i += size + csiLen(s[i+size:])
		case r == '\n' || r == '\t' || r == '\r':
			b.WriteRune(r)
			i += size
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			i += size
		default:
			b.WriteString(s[i : i+size])
			i += size
		}
	}
	return b.String()
}

// escapeLen is the length of the escape sequence at the start of s (which
// starts with ESC): CSI (ESC [ ... final byte), OSC/DCS/APC/PM/SOS (ended by
// BEL or ESC \), or ESC and one more character.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		return 2 + csiLen(s[2:])
	case ']', 'P', '_', '^', 'X':
		for i := 2; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			if s[i] == '\n' {
				return i // an unterminated string ends at the line
			}
		}
		return len(s)
	}
	return 2
}

// csiLen is the length of a CSI sequence's parameters and final byte.
func csiLen(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x40 && c <= 0x7e {
			return i + 1
		}
		if c := s[i]; c < 0x20 || c > 0x7e {
			return i // not a CSI sequence after all: keep what follows
		}
	}
	return len(s)
}

// AnyAt says whether some occurrence of w in s, at byte i, has ok(i):
// the literal found first, then what is around it judged, without a
// pattern tried at every byte.
func AnyAt(s, w string, ok func(i int) bool) bool {
	for at := 0; ; {
		i := strings.Index(s[at:], w)
		if i < 0 {
			return false
		}
		if ok(at + i) {
			return true
		}
		at += i + 1
	}
}
