package detect

import (
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gpuwizard/trainer/data"
)

// writePNG writes a w×h image of one colour.
func writePNG(t *testing.T, path string, w, h int, c color.RGBA) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, c)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ultralyticsSet writes a small set in Ultralytics' layout (images/train,
// labels/train, ...) with names as a map, and returns its data.yaml.
func ultralyticsSet(t *testing.T) string {
	dir := t.TempDir()
	red := color.RGBA{200, 0, 0, 255}
	writePNG(t, filepath.Join(dir, "images", "train", "wide.png"), 64, 32, red)
	writeFile(t, filepath.Join(dir, "labels", "train", "wide.txt"), "0 0.5 0.5 0.5 0.5\n1 0.25 0.25 0.1 0.1\n")
	writePNG(t, filepath.Join(dir, "images", "train", "tall.png"), 16, 32, red)
	// A polygon: its box is the one around it.
	writeFile(t, filepath.Join(dir, "labels", "train", "tall.txt"), "1 0.25 0.25 0.75 0.25 0.75 0.75 0.25 0.75\n")
	writePNG(t, filepath.Join(dir, "images", "train", "background.png"), 40, 40, red) // no label file
	writePNG(t, filepath.Join(dir, "images", "val", "v.png"), 128, 128, red)
	writeFile(t, filepath.Join(dir, "labels", "val", "v.txt"), "0 0.5 0.5 1 1\n")
	y := filepath.Join(dir, "data.yaml")
	writeFile(t, y, "path: .\ntrain: images/train\nval: images/val\nnames:\n  0: cat\n  1: dog\n")
	return y
}

func TestLoadUltralytics(t *testing.T) {
	y := ultralyticsSet(t)
	d, err := Load(y, 64, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.Format != "yolo" || d.Size != 64 || d.Channels != 3 || strings.Join(d.Classes, ",") != "cat,dog" || d.Train.Len() != 3 || d.Val.Len() != 1 {
		t.Fatalf("%+v", d)
	}
	if len(d.Train.Pixels) != 3*3*64*64 || len(d.Val.Pixels) != 3*64*64 {
		t.Fatalf("pixels: %d, %d", len(d.Train.Pixels), len(d.Val.Pixels))
	}
	byName := map[string]Image{}
	for i, im := range d.Train.Images {
		if im.Index != i {
			t.Fatalf("image %d has index %d", i, im.Index)
		}
		byName[filepath.Base(im.Path)] = im
	}
	// wide.png, 64×32 on 64×64: scale 1, 16 rows of padding above.
	wide := byName["wide.png"]
	if wide.Letterbox != (Letterbox{Scale: 1, PadY: 16, OrigW: 64, OrigH: 32}) || len(wide.Objects) != 2 {
		t.Fatalf("wide: %+v", wide)
	}
	if wide.Objects[0] != (Object{Class: 0, Box: Box{16, 24, 48, 40}}) {
		t.Fatalf("wide's box on the canvas: %+v", wide.Objects[0])
	}
	// tall.png, 16×32: scale 2, 16 columns of padding on the left; the
	// polygon 0.25..0.75 is the box 4..12 × 8..24, 24..40 × 16..48 on
	// the canvas.
	tall := byName["tall.png"]
	if len(tall.Objects) != 1 || tall.Objects[0] != (Object{Class: 1, Box: Box{24, 16, 40, 48}}) {
		t.Fatalf("tall: %+v", tall)
	}
	if bg := byName["background.png"]; len(bg.Objects) != 0 {
		t.Fatalf("an image without labels has objects: %+v", bg)
	}
	// The canvas: padding grey above wide.png, red inside.
	px := d.Train.Pixels[wide.Index*3*64*64:]
	if px[0] != PadValue || px[32*64+32] != 200 || px[64*64+32*64+32] != 0 {
		t.Fatalf("canvas: pad %d, R %d, G %d", px[0], px[32*64+32], px[64*64+32*64+32])
	}
	if v := d.Val.Images[0]; v.Letterbox.Scale != 0.5 || v.Objects[0].Box != (Box{0, 0, 64, 64}) {
		t.Fatalf("val: %+v", v)
	}
	if d.Lint == nil || d.Lint.Counts["train"]["dog"] != 2 {
		t.Fatalf("lint: %+v", d.Lint)
	}
	// The folder holding data.yaml loads the same.
	if d2, err := Load(filepath.Dir(y), 64, 1); err != nil || d2.Train.Len() != 3 {
		t.Fatalf("by its folder: %v", err)
	}
}

// TestLoadRoboflow: Roboflow's layout (train/images beside data.yaml,
// written ../train/images), names as a list, val from a list file.
func TestLoadRoboflow(t *testing.T) {
	dir := t.TempDir()
	blue := color.RGBA{0, 0, 200, 255}
	for _, n := range []string{"a", "b"} {
		writePNG(t, filepath.Join(dir, "train", "images", n+".png"), 32, 32, blue)
		writeFile(t, filepath.Join(dir, "train", "labels", n+".txt"), "0 0.5 0.5 0.5 0.5\n")
	}
	writePNG(t, filepath.Join(dir, "valid", "images", "c.png"), 32, 32, blue)
	writeFile(t, filepath.Join(dir, "valid", "labels", "c.txt"), "1 0.5 0.5 0.25 0.25\n")
	writeFile(t, filepath.Join(dir, "val.txt"), "valid/images/c.png\n")
	writeFile(t, filepath.Join(dir, "data.yaml"), "train: ../train/images\nval: val.txt\nnc: 2\nnames: ['car', 'bus']\n")
	d, err := Load(filepath.Join(dir, "data.yaml"), 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.Train.Len() != 2 || d.Val.Len() != 1 || d.Val.Images[0].Objects[0] != (Object{Class: 1, Box: Box{12, 12, 20, 20}}) {
		t.Fatalf("%+v / %+v", d.Train, d.Val.Images)
	}
}

// TestLoadStopsOnLintErrors: the lint runs first, and its errors stop
// loading in data.Load's words, with the report.
func TestLoadStopsOnLintErrors(t *testing.T) {
	y := ultralyticsSet(t)
	bad := filepath.Join(filepath.Dir(y), "labels", "train", "wide.txt")
	writeFile(t, bad, "5 0.5 0.5 0.5 0.5\n")
	d, err := Load(y, 64, 1)
	if !errors.Is(err, data.ErrData) || d == nil || d.Lint == nil || d.Train.Len() != 0 {
		t.Fatalf("err %v, dataset %+v", err, d)
	}
	lint, lerr := data.LintDetection(y)
	if lerr != nil || len(lint.Errors()) != 1 {
		t.Fatalf("the lint: %v, %+v", lerr, lint)
	}
	want := "cannot be trained on (1 problem; the first: " + lint.Errors()[0].String() + ")"
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "class id 5 ≥ nc (2)") {
		t.Fatalf("error %q, want it to hold %q", err, want)
	}
	// A data.yaml that does not parse: the parser's error, naming the line.
	writeFile(t, y, "train: images/train\nval: images/val\nnames: 7\n")
	if _, err := Load(y, 64, 1); err == nil || !strings.Contains(err.Error(), "data.yaml:3: names must be") {
		t.Fatalf("bad names: %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml"), 64, 1); !errors.Is(err, data.ErrData) {
		t.Fatalf("missing data.yaml: %v", err)
	}
}

// TestLoadSkipsUndecodable: an image whose header reads but whose body
// does not is skipped with a lint warning; the rest load.
func TestLoadSkipsUndecodable(t *testing.T) {
	y := ultralyticsSet(t)
	p := filepath.Join(filepath.Dir(y), "images", "train", "tall.png")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, raw[:40], 0o644); err != nil { // the IHDR chunk, then nothing
		t.Fatal(err)
	}
	d, err := Load(y, 64, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d.Train.Len() != 2 || len(d.Train.Pixels) != 2*3*64*64 {
		t.Fatalf("%d images, %d pixels", d.Train.Len(), len(d.Train.Pixels))
	}
	found := false
	for _, pr := range d.Lint.Problems {
		found = found || (pr.File == p && pr.Severity == data.LintWarning)
	}
	if !found {
		t.Fatalf("no warning for %s: %s", p, d.Lint.Summary())
	}
	for i, im := range d.Train.Images {
		if im.Index != i || filepath.Base(im.Path) == "tall.png" {
			t.Fatalf("image %d: %+v", i, im)
		}
	}
}

func TestLoadSizes(t *testing.T) {
	y := ultralyticsSet(t)
	for _, size := range []int{16, 100, 672} {
		if _, err := Load(y, size, 1); err == nil || !strings.Contains(err.Error(), "multiple of 32") {
			t.Fatalf("size %d: %v", size, err)
		}
	}
	d, err := Load(y, 0, 1)
	if err != nil || d.Size != DefaultSize {
		t.Fatalf("size 0: %v, %d", err, d.Size)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := LoadContext(ctx, y, 64, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// TestCheckMemory: a set too big for data.MaxDatasetBytes is refused
// before anything is decoded, with a size (or a count) that fits.
func TestCheckMemory(t *testing.T) {
	if err := checkMemory("d.yaml", labelCount{1000, 5000}, 3, 320); err != nil {
		t.Fatal(err)
	}
	err := checkMemory("d.yaml", labelCount{10_000, 0}, 3, 640)
	if !errors.Is(err, data.ErrData) || !strings.Contains(err.Error(), "10000 images at 640×640 take 11.4 GiB") ||
		!strings.Contains(err.Error(), "use a smaller image size (256 fits)") || !strings.Contains(err.Error(), "at most 1747 of these images") {
		t.Fatalf("%v", err)
	}
	if err := checkMemory("d.yaml", labelCount{10_000_000, 0}, 3, 640); err == nil || strings.Contains(err.Error(), "smaller image size") {
		t.Fatalf("no size fits 10 million images: %v", err)
	}
}

func TestParseLabels(t *testing.T) {
	got, more := parseLabels([]byte("0 0.5 0.5 0.2 0.4\n\n1 0.1 0.1 0.3 0.1 0.2 0.5\n2 0.5 0.5 0.1 0.1\nx 1 1 1 1\n0 0.5 0.5 0 0.1\n0 1.5 0.5 0.1 0.1\n"), 2)
	want := []normBox{{0, 0.5, 0.5, 0.2, 0.4}, {1, 0.2, 0.3, 0.2, 0.4}}
	if len(got) != len(want) || more != 0 {
		t.Fatalf("%+v", got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.class != w.class || !near(g.cx, w.cx, 1e-12) || !near(g.cy, w.cy, 1e-12) || !near(g.bw, w.bw, 1e-12) || !near(g.bh, w.bh, 1e-12) {
			t.Fatalf("line %d: %+v, want %+v", i, g, w)
		}
	}
}

// TestLoadCapsBoxes: an image with more than MaxObjectsPerImage boxes
// keeps the first ones, with a warning; boxes count in the memory check.
func TestLoadCapsBoxes(t *testing.T) {
	y := ultralyticsSet(t)
	many := strings.Repeat("1 0.5 0.5 0.1 0.1\n", MaxObjectsPerImage+7)
	writeFile(t, filepath.Join(filepath.Dir(y), "labels", "train", "wide.txt"), many)
	d, err := Load(y, 64, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range d.Train.Images {
		if filepath.Base(im.Path) == "wide.png" && len(im.Objects) != MaxObjectsPerImage {
			t.Fatalf("%d objects kept", len(im.Objects))
		}
	}
	if !strings.Contains(d.Lint.Summary(), "7 boxes beyond the first 1000 are ignored") {
		t.Fatalf("no warning:\n%s", d.Lint.Summary())
	}
	if err := checkMemory("d.yaml", labelCount{1000, 40_000_000}, 3, 128); err == nil || !strings.Contains(err.Error(), "1000 images at 128×128 take 2.4 GiB") {
		t.Fatalf("40 million boxes: %v", err)
	}
}
