// Package plural writes counts in English: "1 thread", "2 threads",
// "15 child processes". Output that counts something goes through Count
// (or Noun) rather than a hand-made "s" or "(s)".
package plural

import (
	"strconv"
	"strings"
)

// Count is n followed by noun in the form n needs: "1 GPU", "0 GPUs",
// "3 child processes".
func Count(n int, noun string) string {
	return strconv.Itoa(n) + " " + Noun(n, noun)
}

// Noun is noun as it goes after the count n: singular for 1 (and -1),
// plural otherwise.
func Noun(n int, noun string) string {
	if n == 1 || n == -1 {
		return noun
	}
	return Of(noun)
}

// irregular are the plurals the rules below get wrong (a constant table).
var irregular = map[string]string{"child": "children", "epoch": "epochs", "stomach": "stomachs", "person": "people", "index": "indices", "matrix": "matrices"}

// Of is the plural of noun; of a phrase, its last word's ("child
// process" → "child processes"). Capitals (GPU → GPUs) are kept.
func Of(noun string) string {
	head, last := "", noun
	if i := strings.LastIndexByte(noun, ' '); i >= 0 {
		head, last = noun[:i+1], noun[i+1:]
	}
	if p, ok := irregular[last]; ok {
		return head + p
	}
	low := strings.ToLower(last)
	switch {
	case last == "" || last != low && strings.ToUpper(last) == last: // an acronym: GPU, CPU
		return noun + "s"
	case strings.HasSuffix(low, "s"), strings.HasSuffix(low, "x"), strings.HasSuffix(low, "z"),
		strings.HasSuffix(low, "ch"), strings.HasSuffix(low, "sh"):
		return noun + "es"
	case strings.HasSuffix(low, "y") && len(low) > 1 && !strings.ContainsRune("aeiou", rune(low[len(low)-2])):
		return noun[:len(noun)-1] + "ies"
	}
	return noun + "s"
}
