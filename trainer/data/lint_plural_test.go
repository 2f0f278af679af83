package data

import (
	"fmt"
	"strings"
	"testing"
)

// The lint summary counts in words and names a kind of problem it stopped
// listing with its severity apart from its text ("warning: image…", not
// "warningimage…").
func TestLintSummaryWords(t *testing.T) {
	l := newLint("folder")
	l.Classes = []string{"cat"}
	l.Images["val"], l.Counts["val"] = 1, map[string]int{"cat": 1}
	for i := 0; i < maxPerKind+3; i++ {
		l.add(Problem{Severity: LintWarning, File: fmt.Sprintf("img%d.png", i), Message: "image cannot be decoded", Fix: "delete it"})
	}
	s := l.Summary()
	for _, want := range []string{"format: folder, 1 class\n", "val         1 image: cat=1", "… and 3 more warnings of this kind (fix: delete it)"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
}
