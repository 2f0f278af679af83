// Package localefix keeps Fyne quiet on machines whose locale is C.UTF-8
// or POSIX.UTF-8 (servers, containers): Fyne cannot parse "C" as a language
// and logs an error at start-up, before main runs, even for the command-line
// subcommands. Go initialises this package before Fyne's lang package (it
// imports only os and strings, and sorts before text/template, which lang
// needs), so setting LANGUAGE here is seen by Fyne's init. LANGUAGE only
// picks message translations; English is what such a locale shows anyway.
package localefix

import (
	"os"
	"strings"
)

func init() {
	if os.Getenv("LANGUAGE") != "" {
		return
	}
	loc := ""
	for _, n := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if loc = os.Getenv(n); loc != "" {
			break
		}
	}
	if strings.HasPrefix(loc, "C.") || strings.HasPrefix(loc, "POSIX.") {
		os.Setenv("LANGUAGE", "en")
	}
}
