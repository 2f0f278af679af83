// Package printable shows names that come from users' files (class names,
// file names, command lines) safely on a terminal, in a log line or in a
// one-name-a-line file: control characters, invisible format characters
// (bidirectional overrides among them) and invalid UTF-8 become visible
// escapes, so a name can neither move the cursor, recolour the terminal,
// reorder the text around it nor break a line in two. Everything else,
// backslashes (Windows paths) and non-ASCII letters included, is kept.
package printable

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String returns s with every control character, format character (such
// as U+202E RIGHT-TO-LEFT OVERRIDE) and invalid byte escaped: "\n", "\t",
// "\r", "\x1b", "\u202e". A string that needs no escape is returned as it is.
func String(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !needsEscape(r):
			b.WriteString(s[i : i+size])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += size
	}
	return b.String()
}

// Strings applies String to each element, in a new slice.
func Strings(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = String(n)
	}
	return out
}

// Text escapes like String but keeps newlines and tabs: for a message of
// several lines whose parts may hold names.
func Text(s string) string {
	if clean(s) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		parts := strings.Split(l, "\t")
		for j, p := range parts {
			parts[j] = String(p)
		}
		lines[i] = strings.Join(parts, "\t")
	}
	return strings.Join(lines, "\n")
}

func clean(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || needsEscape(r) {
			return false
		}
	}
	return true
}

func needsEscape(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}
