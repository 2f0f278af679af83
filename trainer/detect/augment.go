package detect

import (
	"math"
	"math/rand"
)

// Augmentation strengths, after Ultralytics' defaults (fliplr 0.5, hsv_h
// 0.015, hsv_s 0.7, hsv_v 0.4).
const (
	// FlipProb is the chance of a left-right flip (images not NoFlip).
	FlipProb = 0.5
	// HueJitter is the largest hue turn, as a fraction of a full turn.
	HueJitter = 0.015
	// SatJitter and ValJitter are the largest relative change of the
	// saturation and of the brightness.
	SatJitter = 0.7
	ValJitter = 0.4
)

// Augment writes a randomly changed copy of one training image into dst
// and returns its objects moved accordingly (a new slice: img is not
// changed). src is the image's letterboxed pixels (channels × size × size,
// as in Split.Pixels) and dst the same size. The changes, drawn from rng
// (the caller seeds it, so a run repeats): a left-right flip (FlipProb,
// never for an image marked NoFlip), and colour jitter: brightness and,
// on colour images, saturation and hue (ValJitter, SatJitter, HueJitter).
func Augment(dst []uint8, img *Image, src []uint8, size, channels int, rng *rand.Rand) []Object {
	flip := !img.NoFlip && rng.Float64() < FlipProb
	m := jitterMatrix(channels, rng)
	plane := size * size
	if channels == 3 {
		colourJitter(dst[:3*plane], src[:3*plane], plane, m)
	} else {
		var lut [256]uint8
		for v := range lut {
			lut[v] = clamp8(m[0] * float32(v))
		}
		for c := 0; c < channels; c++ {
			for k := c * plane; k < (c+1)*plane; k++ {
				dst[k] = lut[src[k]]
			}
		}
	}
	objs := make([]Object, len(img.Objects))
	copy(objs, img.Objects)
	if !flip {
		return objs
	}
	for c := 0; c < channels; c++ {
		for y := 0; y < size; y++ {
			row := dst[c*plane+y*size : c*plane+(y+1)*size]
			for i, j := 0, size-1; i < j; i, j = i+1, j-1 {
				row[i], row[j] = row[j], row[i]
			}
		}
	}
	s := float32(size)
	for i := range objs {
		b := objs[i].Box
		objs[i].Box.X1, objs[i].Box.X2 = s-b.X2, s-b.X1
	}
	return objs
}

// jitterMatrix draws the colour change as one linear map of (R, G, B):
// brightness gain × saturation (a blend with the luma) × a hue turn about
// the grey axis (in YIQ). For grey images only m[0], the gain, is used.
// The draws are made in the same order for both, so a seed gives the same
// brightness to a grey and a colour run.
func jitterMatrix(channels int, rng *rand.Rand) [9]float32 {
	v := 1 + ValJitter*(2*rng.Float64()-1)
	sat := 1 + SatJitter*(2*rng.Float64()-1)
	hue := 2 * math.Pi * HueJitter * (2*rng.Float64() - 1)
	if channels != 3 {
		return [9]float32{float32(v)}
	}
	// RGB → YIQ, turn I and Q by hue and scale them by sat, → RGB.
	toYIQ := [3][3]float64{{0.299, 0.587, 0.114}, {0.596, -0.274, -0.322}, {0.211, -0.523, 0.312}}
	fromYIQ := [3][3]float64{{1, 0.9561706854041452, 0.6214325663465855}, {1, -0.2726886023301063, -0.6468132370201739}, {1, -1.1037440821760263, 1.7006230946773062}} // toYIQ's inverse
	cos, sin := math.Cos(hue)*sat, math.Sin(hue)*sat
	mid := [3][3]float64{{1, 0, 0}, {0, cos, -sin}, {0, sin, cos}}
	var out [9]float32
	for r := 0; r < 3; r++ {
		for c := 0; c < 3; c++ {
			var acc float64
			for a := 0; a < 3; a++ {
				for b := 0; b < 3; b++ {
					acc += fromYIQ[r][a] * mid[a][b] * toYIQ[b][c]
				}
			}
			out[r*3+c] = float32(v * acc)
		}
	}
	return out
}

// colourJitter maps every pixel of the three planes of src through m into
// dst.
func colourJitter(dst, src []uint8, plane int, m [9]float32) {
	for k := 0; k < plane; k++ {
		r, g, b := float32(src[k]), float32(src[plane+k]), float32(src[2*plane+k])
		dst[k] = clamp8(m[0]*r + m[1]*g + m[2]*b)
		dst[plane+k] = clamp8(m[3]*r + m[4]*g + m[5]*b)
		dst[2*plane+k] = clamp8(m[6]*r + m[7]*g + m[8]*b)
	}
}

// clamp8 rounds v to the nearest byte, within 0..255.
func clamp8(v float32) uint8 {
	return uint8(min(max(v+0.5, 0), 255))
}
