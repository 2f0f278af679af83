// Command detdump writes a detection dataset as detect.Load loads it (the
// built-in set, or a data.yaml, letterboxed to the canvas), so that
// bench/det_twin.py (the PyTorch twin of gpuwizard's detector) trains and
// validates on the very same pixels and boxes:
//
//	go run -tags migrated_fynedo ./bench/detdump -data builtin-detect -size 128 -out DIR
//
// DIR/meta.json holds the classes, the canvas, the channels and each
// split's objects (canvas pixels, one list per image); DIR/train.u8 and
// DIR/val.u8 the planar 8-bit pixels, image after image.
//
// With -heads FILE it scores the twin instead: FILE holds the twin's raw
// head on each validation image (float32, N×(5+C)×H×W), decoded with
// gpuwizard's decoding and NMS and scored with its mAP (detect.Detections,
// detect.Evaluate), the figures a gpuwizard run reports:
//
//	go run -tags migrated_fynedo ./bench/detdump -data builtin-detect -size 128 -heads DIR/heads.f32
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"gpuwizard/trainer/detect"
)

type split struct {
	Images int            `json:"images"`
	Boxes  [][][5]float32 `json:"boxes"` // per image: class, x1, y1, x2, y2
}

func main() {
	data := flag.String("data", detect.Builtin, "dataset: builtin-detect or a data.yaml")
	size := flag.Int("size", 128, "canvas side in pixels")
	seed := flag.Int64("seed", 1, "seed of the set (gpuwizard train's --seed)")
	out := flag.String("out", "", "output `folder` (created)")
	heads := flag.String("heads", "", "score the twin's validation heads in `file` instead")
	flag.Parse()
	err := error(nil)
	if *heads != "" {
		err = score(*data, *size, *seed, *heads)
	} else {
		err = run(*data, *size, *seed, *out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "detdump:", err)
		os.Exit(1)
	}
}

func run(data string, size int, seed int64, out string) error {
	if out == "" {
		return fmt.Errorf("give -out FOLDER")
	}
	ds, err := detect.Load(data, size, seed)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	meta := map[string]any{"classes": ds.Classes, "size": ds.Size, "channels": ds.Channels}
	for name, sp := range map[string]*detect.Split{"train": ds.Train, "val": ds.Val} {
		s := split{Images: sp.Len()}
		per := ds.Channels * ds.Size * ds.Size
		px := make([]byte, 0, sp.Len()*per)
		for _, im := range sp.Images {
			px = append(px, sp.Pixels[im.Index*per:(im.Index+1)*per]...)
			var bs [][5]float32
			for _, o := range im.Objects {
				bs = append(bs, [5]float32{float32(o.Class), o.Box.X1, o.Box.Y1, o.Box.X2, o.Box.Y2})
			}
			s.Boxes = append(s.Boxes, bs)
		}
		if err := os.WriteFile(filepath.Join(out, name+".u8"), px, 0o644); err != nil {
			return err
		}
		meta[name] = s
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "meta.json"), b, 0o644)
}

// score decodes the twin's validation heads in path and prints their mAP.
func score(data string, size int, seed int64, path string) error {
	ds, err := detect.Load(data, size, seed)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("the twin's heads: %w", err)
	}
	g := detect.Grid{H: size / 8, W: size / 8, Stride: 8}
	per := (5 + len(ds.Classes)) * g.H * g.W
	n := ds.Val.Len()
	if len(raw) != 4*per*n {
		return fmt.Errorf("%s: %d bytes, want %d validation heads of %d floats (%d bytes): was the twin trained on this set and size?", path, len(raw), n, per, 4*per*n)
	}
	head := make([]float32, per)
	preds := make([][]detect.Detection, n)
	truths := make([][]detect.Object, n)
	for i, im := range ds.Val.Images {
		for k := range head {
			head[k] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*(i*per+k):]))
		}
		preds[i] = detect.Detections(head, len(ds.Classes), g, size, detect.ValConf, detect.ValIoU, detect.MaxPerImage)
		truths[i] = im.Objects
	}
	m := detect.Evaluate(preds, truths, ds.Classes)
	fmt.Printf("RESULT twin_val images=%d objects=%d mAP50=%.4f mAP50-95=%.4f precision=%.4f recall=%.4f\n", m.Images, m.Objects, m.MAP50, m.MAP5095, m.Precision, m.Recall)
	return nil
}
