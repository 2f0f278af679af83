package main

import (
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"

	"gpuwizard/internal/synth"
)

// roundTwo writes the inputs of issue 19's cases: images whose decoders
// allocate far more than their pixels, an IDX header at the dataset cap,
// a COCO file of empty objects, a folder just under the dataset cap, and
// 20,000 dangling links without a digit in their names.
func roundTwo(out string) error {
	steps := []func(string) error{writeDecoderBombs, writeIDXAtCap, writeCOCOEmpty, writeFolderAtCap, writeDangling}
	for _, step := range steps {
		if err := step(out); err != nil {
			return err
		}
	}
	return nil
}

func create(path string, write func(*os.File) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeDecoderBombs: a 7000×7000 progressive JPEG (~290 KB) and a
// 7000×7000 16-bit Deflate TIFF (~290 KB), both within the 50 Mpx limit.
func writeDecoderBombs(out string) error {
	if err := create(filepath.Join(out, "progressive.jpg"), func(f *os.File) error { return synth.ProgressiveJPEG(f, 7000, 7000) }); err != nil {
		return err
	}
	return create(filepath.Join(out, "deflate.tiff"), func(f *os.File) error { return synth.DeflateTIFF(f, 7000, 7000) })
}

// writeIDXAtCap: 8192 images of 512×512 (exactly 2 GiB of pixels, the
// dataset cap) in 2 MB of gzip, with valid labels.
func writeIDXAtCap(out string) error {
	dir := filepath.Join(out, "idx-cap")
	if err := idxGz(filepath.Join(dir, "train-images-idx3-ubyte.gz"), []uint32{8192, 512, 512}, 16+8192*512*512); err != nil {
		return err
	}
	labels := make([]byte, 8192)
	for i := range labels {
		labels[i] = byte(i % 10)
	}
	return idxGzData(filepath.Join(dir, "train-labels-idx1-ubyte.gz"), []uint32{8192}, labels)
}

// writeCOCOEmpty: 64 MiB of empty image objects and one category.
func writeCOCOEmpty(out string) error {
	return create(filepath.Join(out, "coco-empty", "instances.json"), func(f *os.File) error {
		f.WriteString(`{"categories":[{"id":1,"name":"a"}],"images":[`)
		chunk := strings.Repeat("{},", 1<<16)
		for n := 0; n < (64<<20)/len(chunk); n++ {
			if _, err := f.WriteString(chunk); err != nil {
				return err
			}
		}
		_, err := f.WriteString(`{}],"annotations":[]}`)
		return err
	})
}

// writeFolderAtCap: 10,922 tiny PNGs in two classes; at --image-size 256
// they take 10922×3×256×256 bytes, just under the 2 GiB dataset cap.
func writeFolderAtCap(out string) error {
	for i := 0; i < 10922; i++ {
		img := image.NewGray(image.Rect(0, 0, 2, 2))
		img.Pix[i%4] = uint8(i)
		class := []string{"a", "b"}[i%2]
		if err := synth.WritePNG(filepath.Join(out, "folder-cap", class, fmt.Sprintf("%05d.png", i)), img); err != nil {
			return err
		}
	}
	return nil
}

// writeDangling: a two-class folder whose first class also holds 20,000
// links to files that do not exist, named with letters only.
func writeDangling(out string) error {
	root := filepath.Join(out, "dangling")
	if err := synth.LeftRight(root, 10); err != nil {
		return err
	}
	for i := 0; i < 20000; i++ {
		name := letters(i) + ".png"
		if err := os.Symlink(filepath.Join(out, "nowhere", name), filepath.Join(root, "left", name)); err != nil {
			return err
		}
	}
	return nil
}

// letters names i with lowercase letters only ("aaaa", "aaab", ...).
func letters(i int) string {
	b := []byte("aaaa")
	for k := 3; k >= 0; k-- {
		b[k] = byte('a' + i%26)
		i /= 26
	}
	return string(b)
}
