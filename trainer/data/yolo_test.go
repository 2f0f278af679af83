package data

import (
	"path/filepath"
	"testing"
)

// labelPath keeps relative paths relative (lint . found no label at all)
// and replaces only the last folder named images.
func TestLabelPath(t *testing.T) {
	j := filepath.Join
	sep := string(filepath.Separator)
	for _, tc := range []struct{ img, want string }{
		{j("images", "train", "a.jpg"), j("labels", "train", "a.txt")},
		{j(".", "images", "a.png"), j("labels", "a.txt")},
		{"a.jpg", "a.txt"},
		{j("..", "set", "images", "b.tiff"), j("..", "set", "labels", "b.txt")},
		{sep + j("data", "images", "x", "images", "c.jpg"), sep + j("data", "images", "x", "labels", "c.txt")},
		{sep + j("data", "imgs", "d.jpg"), sep + j("data", "imgs", "d.txt")},
	} {
		if got := labelPath(tc.img); got != tc.want {
			t.Errorf("labelPath(%q) = %q, want %q", tc.img, got, tc.want)
		}
	}
}
