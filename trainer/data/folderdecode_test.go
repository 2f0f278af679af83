package data

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fitsRe reads the image size and the number of images a refusal says fit.
var fitsRe = regexp.MustCompile(`--image-size: (\d+) or less fits\), or train on at most (\d+) of these images`)

func TestFolderMemoryIsCounted(t *testing.T) {
	// 24 colour images at 128×128 (1.1 MiB of pixels): with a limit just
	// above what decoding needs, the dataset does not fit; the error says
	// how big it would be, and the size and the count it suggests fit.
	root := t.TempDir()
	for i := 0; i < 12; i++ {
		writePNG(t, filepath.Join(root, "a", fmt.Sprintf("%02d.png", i)), 0, i, true)
		writePNG(t, filepath.Join(root, "b", fmt.Sprintf("%02d.png", i)), 1, i, true)
	}
	limit := folderWorking(128*128) + 600<<10
	_, err := Load(root, Options{ImageSize: 128, memLimit: limit})
	if err == nil || !strings.Contains(err.Error(), "24 images at 128x128 would take") || !strings.Contains(err.Error(), "(1.1 MiB of pixels, ") ||
		!strings.Contains(err.Error(), "to decode them), more than the") {
		t.Fatalf("too big: %v", err)
	}
	m := fitsRe.FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("no fix with a size and a count: %v", err)
	}
	size, _ := strconv.Atoi(m[1])
	count, _ := strconv.Atoi(m[2])
	if _, err := Load(root, Options{ImageSize: size, memLimit: limit}); err != nil {
		t.Errorf("the suggested size %d: %v", size, err)
	}
	if _, err := Load(root, Options{ImageSize: size + 1, memLimit: limit}); err == nil {
		t.Errorf("size %d is not the largest that fits", size)
	}
	var files []folderImage
	for i := 0; i < count; i++ {
		files = append(files, folderImage{path: filepath.Join(root, "a", fmt.Sprintf("%02d.png", i%12))})
	}
	if need := folderNeed(files, 3, 128, limit); !need.fits() || count >= 24 {
		t.Errorf("the suggested %d images at 128x128 take %s", count, need)
	}

	// Within the limit: one array for the splits, and a grey folder keeps
	// one plane in an array of its size.
	d, err := Load(root, Options{ImageSize: 32})
	if err != nil {
		t.Fatal(err)
	}
	if d.Channels != 3 || !sameStorage(d.Train.Pixels, d.Val.Pixels) || len(d.Train.Pixels)+len(d.Val.Pixels) != 24*3*32*32 {
		t.Errorf("colour folder: %d channels, %d+%d bytes", d.Channels, len(d.Train.Pixels), len(d.Val.Pixels))
	}
	grey := hostileFolder(t) // grey PNGs
	if d, err = Load(grey, Options{ImageSize: 32}); err != nil {
		t.Fatal(err)
	}
	if d.Channels != 1 || len(d.Train.Pixels)+len(d.Val.Pixels) != 8*32*32 || cap(d.Val.Pixels) != len(d.Val.Pixels) || !sameStorage(d.Train.Pixels, d.Val.Pixels) {
		t.Errorf("grey folder: %d channels, %d+%d bytes", d.Channels, len(d.Train.Pixels), len(d.Val.Pixels))
	}
}
