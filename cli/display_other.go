//go:build !unix

package cli

// FindDisplay says which display a window would open on. On Windows a
// program started in the user's session always has the desktop: there is
// no display server to look for.
func FindDisplay(func(string) string) (string, error) { return "the Windows desktop", nil }
