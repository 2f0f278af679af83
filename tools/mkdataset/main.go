// Command mkdataset writes an image-folder dataset (one folder per class,
// PNG files) from Fashion-MNIST's IDX files, for trying the wizard and
// gpuwizard train on a folder dataset as a user would have one:
//
//	go run ./tools/mkdataset -out /tmp/fashion -n 3000 -size 48 -long
//
// -long names the classes with long multi-word names (to look at how the
// window lays them out); -size resizes the 28×28 images (nearest
// neighbour); -rgb writes colour PNGs.
package main

import (
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"

	"gpuwizard/trainer/data"
)

var short = []string{"T-shirt", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}

var long = []string{
	"T-shirt or short-sleeved top", "Trousers and long pants", "Pullover sweater or jumper",
	"Dress of any length", "Coat or outdoor jacket", "Sandal or open summer shoe",
	"Shirt with buttons and collar", "Sneaker or sports shoe", "Bag, handbag or backpack",
	"Ankle boot with a low heel",
}

func main() {
	src := flag.String("src", "/usr/share/datasets/fashion-mnist", "folder with train-images-idx3-ubyte.gz and train-labels-idx1-ubyte.gz")
	out := flag.String("out", "", "folder to create (must not exist)")
	n := flag.Int("n", 3000, "number of images")
	size := flag.Int("size", 28, "image side in pixels")
	longNames := flag.Bool("long", false, "long multi-word class names")
	rgb := flag.Bool("rgb", false, "colour PNGs")
	flag.Parse()
	if err := run(*src, *out, *n, *size, *longNames, *rgb); err != nil {
		fmt.Fprintln(os.Stderr, "mkdataset:", err)
		os.Exit(1)
	}
}

// readIDX reads an IDX file, gzipped or not (data.ReadIDX tells from the
// bytes).
func readIDX(path string) ([]int, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return data.ReadIDX(path, f)
}

func run(src, out string, n, size int, longNames, rgb bool) error {
	if out == "" {
		return fmt.Errorf("-out is required")
	}
	if size < 1 || size > 1024 || n < 1 {
		return fmt.Errorf("-size must be 1 to 1024 and -n at least 1")
	}
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s exists; choose a new folder", out)
	}
	dims, pix, err := readIDX(filepath.Join(src, "train-images-idx3-ubyte.gz"))
	if err != nil {
		return err
	}
	_, labels, err := readIDX(filepath.Join(src, "train-labels-idx1-ubyte.gz"))
	if err != nil {
		return err
	}
	if len(dims) != 3 {
		return fmt.Errorf("images: want 3 dimensions, got %v", dims)
	}
	h, w := dims[1], dims[2]
	names := short
	if longNames {
		names = long
	}
	if n > dims[0] {
		n = dims[0]
	}
	for i := 0; i < n; i++ {
		lab := int(labels[i])
		if lab >= len(names) {
			return fmt.Errorf("label %d out of range", lab)
		}
		dir := filepath.Join(out, names[lab])
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		var img image.Image
		grey := image.NewGray(image.Rect(0, 0, size, size))
		for y := 0; y < size; y++ {
			for x := 0; x < size; x++ {
				grey.Pix[y*grey.Stride+x] = pix[i*h*w+(y*h/size)*w+x*w/size]
			}
		}
		img = grey
		if rgb {
			img = tint(grey)
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%05d.png", i)))
		if err != nil {
			return err
		}
		if err := png.Encode(f, img); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	fmt.Printf("%d images of %d×%d in %d classes under %s\n", n, size, size, len(names), out)
	return nil
}

// tint colours a grey image (v → v, v/2, 255-v), so that the dataset has
// three channels that differ.
func tint(g *image.Gray) *image.NRGBA {
	out := image.NewNRGBA(g.Rect)
	for i, v := range g.Pix {
		out.Pix[4*i], out.Pix[4*i+1], out.Pix[4*i+2], out.Pix[4*i+3] = v, v/2, 255-v, 255
	}
	return out
}
