package app

import (
	"flag"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2/test"
)

// update rewrites the golden images: go test -tags migrated_fynedo
// ./app/ -run Golden -update (then look at every PNG it wrote).
var update = flag.Bool("update", false, "rewrite the golden images under testdata with what the tests draw")

// assertImage compares img with the golden image testdata/name (Fyne
// writes a mismatch to testdata/failed/name), or rewrites it with -update.
func assertImage(t *testing.T, name string, img image.Image) {
	t.Helper()
	if !*update {
		test.AssertImageMatches(t, name, img)
		return
	}
	p := filepath.Join("testdata", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatalf("writing %s: %v", p, err)
	}
	t.Logf("rewrote %s", p)
}
