package gpu

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	tests := map[string]string{
		"plain\ttext\r\n":                             "plain\ttext\r\n",
		"\x1b[1;31mERROR\x1b[0m: CUDA":                "ERROR: CUDA",
		"title\x1b]0;pwned\x07 after":                 "title after",
		"osc\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\": "osclink",
		"bell\x07 nul\x00 del\x7f":                    "bell nul del",
		"c1 \u009b31m red":                            "c1  red",
		"ok 🚀 Ultralytics 中文":                         "ok 🚀 Ultralytics 中文",
		"bad utf8 \xff\xfe end":                       "bad utf8  end",
		"trailing esc \x1b":                           "trailing esc ",
		"cursor \x1b[2J\x1b[H home":                   "cursor  home",
	}
	for in, want := range tests {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzSanitize(f *testing.F) {
	f.Add("\x1b[31mred\x1b[0m")
	f.Add("\x1b]0;title\x07")
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		if !utf8.ValidString(out) || strings.ContainsRune(out, 0x1b) || len(out) > len(s) {
			t.Fatalf("Sanitize(%q) = %q", s, out)
		}
		for _, r := range out {
			if r < 0x20 && r != '\n' && r != '\t' && r != '\r' || r == 0x7f || r >= 0x80 && r < 0xa0 {
				t.Fatalf("control %U left in %q", r, out)
			}
		}
	})
}

// TestAnyAt: every occurrence is offered, overlapping ones too, until one
// is accepted.
func TestAnyAt(t *testing.T) {
	var seen []int
	got := AnyAt("aaa-aa", "aa", func(i int) bool { seen = append(seen, i); return i == 4 })
	if !got || fmt.Sprint(seen) != "[0 1 4]" {
		t.Errorf("AnyAt = %v, offered %v, want true after [0 1 4]", got, seen)
	}
	if AnyAt("abc", "x", func(int) bool { return true }) || AnyAt("", "a", func(int) bool { return true }) {
		t.Error("AnyAt found a word that is not there")
	}
}
