package data

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCOCOListsAreCountedAsTheyAreRead(t *testing.T) {
	// Millions of {} are refused at the cap, while they are read; below
	// it, each missing field is a problem of its kind, counted past 20.
	many := `{"categories": [{"id": 1, "name": "a"}], "images": [` + strings.Repeat("{},", 4999) + "{}]}"
	_, err := lintCOCO("c.json", bytes.NewReader([]byte(many)), false, cocoLimits{images: 1000, annotations: 10, categories: 10})
	if err == nil || !strings.Contains(err.Error(), "c.json:1: more than 1000 images (COCO 2017 train has 118,287 images and 860,001 annotations)") {
		t.Fatalf("over the cap: %v", err)
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "images", "x.png"), "png")
	os.MkdirAll(filepath.Join(dir, "images", "sub"), 0o755)
	js := `{"images": [{"id": 1, "file_name": "x.png"},` + strings.Repeat(`{"id": 1, "file_name": "x.png"},`, 5) + `{"id": 2, "file_name": "sub", "width": 10, "height": 10},` +
		strings.Repeat("{},", 29) + "{}]," +
		`"annotations": [{"id": 5, "image_id": 2, "category_id": 3, "bbox": [1, 1, 2, 2]}, {"id": 6, "image_id": 2, "category_id": 1, "bbox": [1, 1, 2, 2]}],` +
		`"categories": [{"id": 1, "name": "a"}]}`
	p := filepath.Join(dir, "ann.json")
	write(t, p, js)
	lint, err := LintDetection(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := lint.Summary()
	// Errors of one kind (one fix, "give every image its own id"): 5 ids
	// used twice, 30 missing: 20 listed. Warnings: a folder is not an
	// image (1); 30 file names missing and 36 images without annotations,
	// 20 of each listed.
	for _, want := range []string{
		"images[1]: id 1 is used twice", "images[5]: id 1 is used twice", "images[7] has no id", "images[21] has no id",
		"images[6]: sub is not next to the JSON", "images[7] has no file_name", "images[25] has no file_name",
		"annotations[0] (id 5): category_id 3 is not in categories", // the categories come last, as in COCO's files
		"all        37 images: a=1",
		"… and 15 more errors of this kind (fix: give every image its own id)",
		"… and 10 more warnings of this kind (fix: write the image's file name in file_name)",
		"… and 16 more warnings of this kind (fix: annotate it, or keep it knowingly as a background image)",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("lint lacks %q:\n%s", want, sum)
		}
	}
	for _, not := range []string{"images[22] has no id", "images[27] has no file_name", "images[27] () has no annotations"} {
		if strings.Contains(sum, not) {
			t.Errorf("lint lists %q past the 20 of its kind:\n%s", not, sum)
		}
	}
	// The annotations before the images: read in a second pass, the same
	// lint.
	swapped := `{"annotations": [{"id": 6, "image_id": 2, "category_id": 1, "bbox": [1, 1, 20, 2]}], "categories": [{"id": 1, "name": "a"}], "images": [{"id": 2, "file_name": "x.png", "width": 10, "height": 10}]}`
	lint, err = LintCOCO(filepath.Join(dir, "s.json"), []byte(swapped), true)
	if err != nil || !strings.Contains(lint.Summary(), "annotations[0] (id 6): box [1 1 20 2] reaches outside its 10x10 image") || strings.Contains(lint.Summary(), "has no annotations") {
		t.Errorf("annotations first: %v\n%s", err, lint.Summary())
	}
	// Images without annotations are listed with their file names, read
	// again for the ones listed.
	bare := `{"images": [{"id": 1, "file_name": "a.png"}, {"id": 2, "file_name": "b.png"}, {"id": 3, "file_name": "c.png"}],
	"annotations": [{"id": 1, "image_id": 2, "category_id": 1, "bbox": [0, 0, 1, 1]}], "categories": [{"id": 1, "name": "a"}]}`
	lint, err = LintCOCO("bare.json", []byte(bare), false)
	if sum := lint.Summary(); err != nil || !strings.Contains(sum, "images[0] (a.png) has no annotations") || !strings.Contains(sum, "images[2] (c.png) has no annotations") ||
		strings.Contains(sum, "b.png") {
		t.Errorf("images without annotations: %v\n%s", err, sum)
	}
	// Syntax and type errors name their line.
	for src, want := range map[string]string{
		"{\"images\": [{\"id\": 1},\n  {\"id\": 2,,}]}":                             "c.json:2: not valid JSON",
		"{\"images\": [{\"id\": 1},\n  {\"file_name\": \"x\",\n \"id\": \"two\"}]}": `c.json:3: images[1]: field "id" must be a number, not a string`,
		"{\"images\": [1]}":            "c.json:1: images[0] must be an object {...}, not a number",
		"{\"images\": {}}":             `c.json:1: "images" must be a list [...]`,
		"[]":                           "c.json:1: a COCO file is a JSON object",
		"{\"images\": [{\"id\": 1},\n": "c.json:2: the JSON ends early",
	} {
		if _, err := LintCOCO("c.json", []byte(src), false); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v (want %q)", src, err, want)
		}
	}
}
