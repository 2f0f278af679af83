package fleet

import (
	"strconv"
	"strings"
)

// Hostlist writes names the way Slurm reads them: runs of numbered names
// with one prefix and one width in brackets ("gpu[01-03,07],login1"),
// the others as they are, in the order given.
func Hostlist(names []string) string {
	var parts []string
	for i := 0; i < len(names); {
		prefix, num, digits, zero, ok := splitNumber(names[i])
		width := 0
		if zero {
			width = digits // padded: every number of the run has this many digits
		}
		if !ok {
			parts = append(parts, names[i])
			i++
			continue
		}
		var ranges []string
		lo, hi := num, num
		j := i + 1
		for ; j < len(names); j++ {
			p, n, d, z, ok := splitNumber(names[j])
			fits := width == 0 && !z || width > 0 && d == width
			if !ok || p != prefix || !fits || n <= hi {
				break
			}
			if n != hi+1 {
				ranges = append(ranges, numRange(lo, hi, width))
				lo = n
			}
			hi = n
		}
		ranges = append(ranges, numRange(lo, hi, width))
		if j == i+1 {
			parts = append(parts, names[i])
		} else {
			parts = append(parts, prefix+"["+strings.Join(ranges, ",")+"]")
		}
		i = j
	}
	return strings.Join(parts, ",")
}

// splitNumber cuts a name into its prefix and the number it ends with:
// its value, its count of digits and whether it has a leading zero. ok is
// false for a name that does not end with a digit, or holds a comma or a
// bracket.
func splitNumber(s string) (prefix string, num, digits int, zero, ok bool) {
	if strings.ContainsAny(s, ",[]") {
		return "", 0, 0, false, false
	}
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) || len(s)-i > 9 {
		return "", 0, 0, false, false
	}
	n, err := strconv.Atoi(s[i:])
	if err != nil {
		return "", 0, 0, false, false
	}
	d := len(s) - i
	return s[:i], n, d, s[i] == '0' && d > 1, true
}

func numRange(lo, hi, width int) string {
	f := func(n int) string {
		s := strconv.Itoa(n)
		for len(s) < width {
			s = "0" + s
		}
		return s
	}
	if lo == hi {
		return f(lo)
	}
	return f(lo) + "-" + f(hi)
}
