package detect

import "math"

// Thresholds of decoding: validation keeps nearly every box (mAP needs
// the whole precision-recall curve, as Ultralytics' val does), prediction
// the confident ones.
const (
	ValConf     = 0.001
	ValIoU      = 0.6
	PredictConf = 0.25
	PredictIoU  = 0.45
	MaxPerImage = 300
)

// Decode turns one image's head values ((5+classes)×H×W, channels
// planar as the network writes them) into detections on the canvas (a
// square of size pixels): each cell's best class, scored σ(objectness)·
// σ(class logit), those scoring at least conf; boxes clipped to the
// canvas. NMS is the caller's (Detections does both).
func Decode(head []float32, classes int, g Grid, size int, conf float32) []Detection {
	hw := g.H * g.W
	if len(head) < (5+classes)*hw {
		return nil
	}
	s, lim := float32(g.Stride), float32(size)
	var out []Detection
	for q := 0; q < hw; q++ {
		obj := sig(head[4*hw+q])
		if obj < conf {
			continue
		}
		best, bl := 0, head[5*hw+q]
		for c := 1; c < classes; c++ {
			if v := head[(5+c)*hw+q]; v > bl {
				best, bl = c, v
			}
		}
		score := obj * sig(bl)
		if score < conf {
			continue
		}
		cx := (float32(q%g.W) + 0.5 + head[q]) * s
		cy := (float32(q/g.W) + 0.5 + head[hw+q]) * s
		w := float32(math.Exp(float64(clampLog(head[2*hw+q])))) * s
		h := float32(math.Exp(float64(clampLog(head[3*hw+q])))) * s
		b := Box{X1: clip(cx-w/2, lim), Y1: clip(cy-h/2, lim), X2: clip(cx+w/2, lim), Y2: clip(cy+h/2, lim)}
		if b.X2 > b.X1 && b.Y2 > b.Y1 {
			out = append(out, Detection{Class: best, Score: score, Box: b})
		}
	}
	return out
}

// Detections decodes one image's head and keeps, per class, the boxes
// NMS leaves (at most maxPerImage, best first), on the canvas.
func Detections(head []float32, classes int, g Grid, size int, conf, iou float32, maxPerImage int) []Detection {
	return NMS(Decode(head, classes, g, size, conf), iou, maxPerImage)
}

func sig(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }

func clampLog(v float32) float32 { return min(max(v, -LogClamp), LogClamp) }

func clip(v, hi float32) float32 { return min(max(v, 0), hi) }
