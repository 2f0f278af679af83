package cli

import "errors"

// ErrNoDisplay is returned by FindDisplay (display_unix.go,
// display_other.go) when no graphical display can be reached.
var ErrNoDisplay = errors.New("no graphical display")
