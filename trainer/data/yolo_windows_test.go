package data

import "testing"

// On Windows the volume stays in front: C:\…\images\a.png once became
// \C:…\labels\a.txt.
func TestLabelPathWindows(t *testing.T) {
	for img, want := range map[string]string{
		`C:\data\images\train\a.png`: `C:\data\labels\train\a.txt`,
		`\\nas\share\images\b.jpg`:   `\\nas\share\labels\b.txt`,
		`D:images\c.jpg`:             `D:labels\c.txt`,
	} {
		if got := labelPath(img); got != want {
			t.Errorf("labelPath(%q) = %q, want %q", img, got, want)
		}
	}
}
