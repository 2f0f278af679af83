package printable

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"cat", "cat"},
		{`C:\data\images\a.png`, `C:\data\images\a.png`},
		{"Ärger 猫", "Ärger 猫"},
		{"two\nlines", `two\nlines`},
		{"red\x1b[31m", `red\x1b[31m`},
		{"tab\there\r", `tab\there\r`},
		{"evil\u202etxt.exe", `evil\u202etxt.exe`},
		{"bad\xffbyte", `bad\xffbyte`},
		{"del\x7f", `del\x7f`},
		{"c1\u0085", `c1\u0085`},
		{"sep\u2028", `sep\u2028`},
		{"", ""},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestText(t *testing.T) {
	got := Text("line one\x1b[2J\n\tline two\u202e")
	if want := "line one\\x1b[2J\n\tline two\\u202e"; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"cat", "a\nb", "\x1b[0m", "\xff\xfe", "\u202e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if !utf8.ValidString(out) {
			t.Fatalf("String(%q) = %q: invalid UTF-8", s, out)
		}
		for _, r := range out {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
				t.Fatalf("String(%q) = %q keeps %U", s, out, r)
			}
		}
		if clean(s) && out != s {
			t.Fatalf("a clean string changed: %q -> %q", s, out)
		}
		if strings.Count(Text(s), "\n") != strings.Count(s, "\n") {
			t.Fatalf("Text changed the number of lines of %q", s)
		}
	})
}
