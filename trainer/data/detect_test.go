package data

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t testing.TB, path, content string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestYOLOUltralyticsLayout(t *testing.T) {
	root := t.TempDir()
	ds := filepath.Join(root, "datasets", "shapes")
	write(t, filepath.Join(root, "data.yaml"), "path: datasets/shapes\ntrain: images/train\nval: images/val\nnames:\n  0: circle\n  1: square\ncolor: red\n")
	for i, name := range []string{"a", "b", "c"} {
		writePNG(t, filepath.Join(ds, "images", "train", name+".png"), i%2, i, false)
	}
	writePNG(t, filepath.Join(ds, "images", "val", "v.png"), 0, 9, false)
	write(t, filepath.Join(ds, "labels", "train", "a.txt"), "0 0.5 0.5 0.2 0.2\n1 0.3 0.3 0.1 0.1\n")
	write(t, filepath.Join(ds, "labels", "train", "b.txt"), "2 0.5 0.5 0.2 0.2\n0 1.5 0.5 0.2 0.2\n0 0.5 0.5\nx 0.1 0.1 0.1 0.1\n0 0.95 0.5 0.2 0.2\n")
	write(t, filepath.Join(ds, "labels", "train", "orphan.txt"), "0 0.5 0.5 0.1 0.1\n")
	write(t, filepath.Join(ds, "labels", "val", "v.txt"), "1 0.5 0.5 0.4 0.4\n")
	lint, err := LintDetection(filepath.Join(root, "data.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sum := lint.Summary()
	for _, want := range []string{
		"data.yaml:7: unknown key \"color\"",
		"b.txt:1: class id 2 ≥ nc (2)",
		"b.txt:2: coordinates outside 0..1",
		"b.txt:3: 3 numbers",
		"b.txt:4: class \"x\" is not a class index",
		"b.txt:5: the box reaches outside the image",
		"c.png: image without a label file",
		"orphan.txt: label file without an image",
		"train       3 images: circle=3 square=1",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("lint lacks %q:\n%s", want, sum)
		}
	}
	if len(lint.Errors()) != 5 {
		t.Errorf("%d errors, want the 5 label errors", len(lint.Errors()))
	}
}

func TestYOLORoboflowLayout(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "data.yaml"), "train: ../train/images\nval: ../valid/images\ntest: ../test/images\n\nnc: 2\nnames: ['cat', 'dog']\n\nroboflow:\n  workspace: w\n  project: p\n  version: 1\n")
	// Roboflow puts the splits beside data.yaml although the paths say ../
	for _, s := range []string{"train", "valid", "test"} {
		writePNG(t, filepath.Join(root, "..", filepath.Base(root)+"-x", "unused.png"), 0, 0, false)
		writePNG(t, filepath.Join(root, s, "images", "i.png"), 0, 0, false)
		write(t, filepath.Join(root, s, "labels", "i.txt"), "1 0.5 0.5 0.5 0.5\n")
	}
	lint, err := LintDetection(root)
	if err != nil {
		t.Fatal(err)
	}
	if lint.Images["train"] != 1 || lint.Images["val"] != 1 || lint.Images["test"] != 1 || len(lint.Errors()) != 0 {
		t.Fatalf("roboflow: %v\n%s", lint.Images, lint.Summary())
	}
}

func TestDataYAMLErrors(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "img"), 0o755)
	cases := map[string]string{
		"nc: three\nnames: [a]\ntrain: img\nval: img\n": "data.yaml:1: nc must be a whole number",
		"names: {0: a, 2: b}\ntrain: img\nval: img\n":   "(1 is missing)",
		"names: [a, b]\nnc: 3\ntrain: img\nval: img\n":  "nc: 3, but 2 names",
		"names: [a]\nval: img\n":                        "no train: key",
		"names: [a]\ntrain: nowhere\nval: img\n":        "train folder",
		"names: 5\ntrain: img\nval: img\n":              "names must be a list",
		"train: [img\n":                                 "not valid YAML",
		"train: img\nval: img\n":                        "no names",
		"names: [a]\ntrain: {x: 1}\nval: img\n":         "train must be a folder",
	}
	for src, want := range cases {
		_, _, err := ParseDataYAML(filepath.Join(dir, "data.yaml"), []byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v (want %q)", src, err, want)
		}
	}
}

func TestCOCOLint(t *testing.T) {
	dir := t.TempDir()
	writePNG(t, filepath.Join(dir, "images", "a.png"), 0, 0, false)
	js := `{"images": [{"id": 1, "file_name": "a.png", "width": 20, "height": 16},
 {"id": 2, "file_name": "missing.png", "width": 20, "height": 16},
 {"id": 2, "file_name": "b.png", "width": 10, "height": 10}],
 "annotations": [{"id": 10, "image_id": 1, "category_id": 1, "bbox": [2, 2, 5, 5]},
  {"id": 11, "image_id": 1, "category_id": 7, "bbox": [2, 2, 5, 5]},
  {"id": 12, "image_id": 9, "category_id": 1, "bbox": [2, 2, 5, 5]},
  {"id": 13, "image_id": 1, "category_id": 1, "bbox": [15, 2, 10, 5]},
  {"id": 14, "image_id": 1, "category_id": 1, "bbox": [2, 2, 0, 5]}],
 "categories": [{"id": 1, "name": "cat"}]}`
	p := filepath.Join(dir, "ann.json")
	write(t, p, js)
	lint, err := LintDetection(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := lint.Summary()
	for _, want := range []string{"id 2 is used twice", "category_id 7", "image_id 9", "reaches outside its 20x16 image", "zero or negative size", "missing.png is not next to the JSON", "all         3 images: cat=3"} {
		if !strings.Contains(sum, want) {
			t.Errorf("lint lacks %q:\n%s", want, sum)
		}
	}
	_, err = LintCOCO("bad.json", []byte("{\n\"images\": [\n{\"id\": \"one\"}]}"), false)
	if err == nil || !strings.Contains(err.Error(), "bad.json:3") || !strings.Contains(err.Error(), `images[0]: field "id" must be a number, not a string`) {
		t.Errorf("type error: %v", err)
	}
	_, err = LintCOCO("bad.json", []byte("{\n\"images\": [\n"), false)
	if err == nil || !strings.Contains(err.Error(), "bad.json:") {
		t.Errorf("syntax error: %v", err)
	}
}

func budget(t *testing.T, n int, start time.Time) {
	if d := time.Since(start); d > time.Duration(1+n/100_000)*2*time.Second {
		t.Fatalf("took %s on %d bytes", d, n)
	}
}

func FuzzParseIDX(f *testing.F) {
	f.Add(idxBytes([]int{2, 2, 2}, []byte{1, 2, 3, 4, 5, 6, 7, 8}))
	f.Add(gz(idxBytes([]int{1}, []byte{9})))
	f.Add([]byte{0, 0, 8, 4, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, b []byte) {
		start := time.Now()
		dims, px, err := ParseIDX("f", b)
		if err == nil {
			n := 1
			for _, d := range dims {
				n *= d
			}
			if n != len(px) {
				t.Fatalf("dims %v but %d bytes", dims, len(px))
			}
		}
		// Read once from a stream (grown as it comes) or twice from bytes
		// (counted, then read into one buffer): the same answer.
		once, err2 := readIDX("f", struct{ io.Reader }{bytes.NewReader(b)}, &idxBudget{limit: MaxDatasetBytes})
		if (err == nil) != (err2 == nil) || !bytes.Equal(px, once.payload) {
			t.Fatalf("bytes: %v, stream: %v", err, err2)
		}
		LoadIDXPair("i", b, "l", b, 10)
		budget(t, len(b), start)
	})
}

func FuzzParseCIFAR(f *testing.F) {
	f.Add(make([]byte, cifarRecord))
	f.Add([]byte{11})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseCIFAR("b", b, 10)
		if err == nil && (s.Len()*cifarRecord != len(b) || len(s.Pixels) != s.Len()*3072) {
			t.Fatal("inconsistent split")
		}
	})
}

func FuzzYOLOLabels(f *testing.F) {
	f.Add("0 0.5 0.5 0.2 0.2\n1 0.1 0.2 0.3 0.4 0.5 0.6\n")
	f.Add("9 nan inf -1 2")
	f.Fuzz(func(t *testing.T, s string) {
		start := time.Now()
		for _, p := range LintYOLOLabels("l.txt", []byte(s), 3) {
			if p.Line < 1 || p.Fix == "" {
				t.Fatalf("problem without line or fix: %+v", p)
			}
		}
		labelClasses([]byte(s), 3)
		budget(t, len(s), start)
	})
}

func FuzzDataYAML(f *testing.F) {
	f.Add("path: .\ntrain: a\nval: a\nnames: [x, y]\n")
	f.Add("names: {0: a, 1: b}\nnc: 2\n")
	f.Add("&a [*a, *a]")
	f.Fuzz(func(t *testing.T, s string) {
		start := time.Now()
		ParseDataYAML("/nonexistent/data.yaml", []byte(s))
		budget(t, len(s), start)
	})
}

func FuzzCOCO(f *testing.F) {
	f.Add(`{"images":[{"id":1,"file_name":"a","width":5,"height":5}],"annotations":[{"id":1,"image_id":1,"category_id":1,"bbox":[0,0,1,1]}],"categories":[{"id":1,"name":"c"}]}`)
	f.Add(`{"images":[{"id":1e400}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		start := time.Now()
		LintCOCO("c.json", []byte(s), false)
		budget(t, len(s), start)
	})
}
