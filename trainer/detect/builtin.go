package detect

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"strconv"
	"sync"

	"gpuwizard/trainer/data"
)

// The built-in detection set: handwritten digits (the embedded MNIST
// subset) placed on cluttered canvases, each with its box, generated from
// a seed when it is loaded. Training canvases take the subset's training
// digits and are drawn from the run's seed; validation canvases take its
// test digits (held out) and are drawn from a fixed seed, so every run is
// judged on the same images.
const (
	Builtin      = "builtin-detect"
	BuiltinSize  = 128
	BuiltinTrain = 3000 // training canvases
	BuiltinVal   = 500  // validation canvases
	// builtinValSeed draws the validation canvases, whatever the run's seed.
	builtinValSeed = 20261127
	// mnistSide is an MNIST digit's side in pixels.
	mnistSide = 28
)

// GenerateBuiltin makes the built-in set on size×size grey canvases
// (MinSize to MaxSize; BuiltinSize is the one it is tuned for): train and
// val canvases of one to four digits each, on a dark textured background
// with strokes and dim fragments of other digits as clutter. Digits keep
// their shape: the set's images are marked NoFlip.
func GenerateBuiltin(ctx context.Context, size, train, val int, seed int64) (*Dataset, error) {
	if err := CheckSize(size); err != nil {
		return nil, fmt.Errorf("%w: %w", data.ErrData, err)
	}
	if train < 1 || val < 1 {
		return nil, fmt.Errorf("%w: the built-in set needs at least one training and one validation canvas (asked %d and %d)", data.ErrData, train, val)
	}
	if err := checkMemory(Builtin, labelCount{train + val, 4 * (train + val)}, 1, size); err != nil {
		return nil, err
	}
	mnist, err := data.Load(data.Builtin, data.Options{Seed: 1})
	if err != nil {
		return nil, fmt.Errorf("detect: the built-in set's digits: %w", err)
	}
	classes := make([]string, 10)
	for i := range classes {
		classes[i] = strconv.Itoa(i)
	}
	d := &Dataset{Name: Builtin, Root: Builtin, Format: Builtin, Classes: classes, Size: size, Channels: 1, Lint: data.NewLint(Builtin)}
	trainDigits := digitPool{mnist.Train, mnist.Val}
	if d.Train, err = drawCanvases(ctx, size, train, seed, trainDigits); err != nil {
		return nil, err
	}
	if d.Val, err = drawCanvases(ctx, size, val, builtinValSeed, digitPool{mnist.Test}); err != nil {
		return nil, err
	}
	d.Lint.Classes = classes
	for name, s := range map[string]*Split{"train": d.Train, "val": d.Val} {
		d.Lint.Images[name] = s.Len()
		counts := map[string]int{}
		for _, im := range s.Images {
			for _, o := range im.Objects {
				counts[classes[o.Class]]++
			}
		}
		d.Lint.Counts[name] = counts
	}
	d.Lint.MinW, d.Lint.MinH, d.Lint.MaxW, d.Lint.MaxH = size, size, size, size
	return d, nil
}

// digitPool is where a split's digits come from: MNIST splits of 28×28
// grey digits (light on black).
type digitPool []*data.Split

func (p digitPool) len() int {
	n := 0
	for _, s := range p {
		n += s.Len()
	}
	return n
}

// digit is digit i of the pool (modulo its length): its pixels and
// class.
func (p digitPool) digit(i int) ([]uint8, int) {
	i %= max(p.len(), 1)
	for _, s := range p {
		if i < s.Len() {
			return s.Pixels[i*mnistSide*mnistSide : (i+1)*mnistSide*mnistSide], int(s.Labels[i])
		}
		i -= s.Len()
	}
	return make([]uint8, mnistSide*mnistSide), 0 // an empty pool: a blank digit
}

// drawCanvases draws n canvases from seed, in parallel: canvas i from
// its own generator, seeded from seed and i, so the set is the same
// whatever the number of threads.
func drawCanvases(ctx context.Context, size, n int, seed int64, pool digitPool) (*Split, error) {
	per := size * size
	s := &Split{Pixels: make([]uint8, n*per), Images: make([]Image, n)}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &canvas{size: size, f: make([]float32, per), pool: pool}
			for i := range next {
				c.rng = rand.New(rand.NewSource(seed*1_000_003 + int64(i)))
				objs := c.draw()
				for k, v := range c.f {
					s.Pixels[i*per+k] = uint8(min(max(v, 0), 255) + 0.5)
				}
				s.Images[i] = Image{Path: fmt.Sprintf("%s/%d", Builtin, i), Index: i, Objects: objs, NoFlip: true,
					Letterbox: Letterbox{Scale: 1, OrigW: size, OrigH: size}}
			}
		}()
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// canvas draws one cluttered canvas at a time, in float32 (0..255).
type canvas struct {
	size int
	f    []float32
	rng  *rand.Rand
	pool digitPool
}

// draw paints a new canvas into c.f and returns its digits' boxes.
func (c *canvas) draw() []Object {
	c.background()
	for n := 2 + c.rng.Intn(4); n > 0; n-- {
		c.stroke()
	}
	for n := 1 + c.rng.Intn(3); n > 0; n-- {
		c.fragment()
	}
	var objs []Object
	var taken []Box
	for n := 1 + c.rng.Intn(4); n > 0; n-- {
		if o, ok := c.digit(taken); ok {
			objs = append(objs, o)
			taken = append(taken, o.Box)
		}
	}
	return objs
}

// background is a dark grey gradient with noise (triangular, ±10).
func (c *canvas) background() {
	base := float32(c.rng.Intn(40))
	gx, gy := (c.rng.Float32()-0.5)*30, (c.rng.Float32()-0.5)*30
	inv := 1 / float32(c.size)
	var bits uint64
	for y := 0; y < c.size; y++ {
		for x := 0; x < c.size; x++ {
			if (y*c.size+x)%3 == 0 {
				bits = uint64(c.rng.Int63())
			}
			noise := float32(int(bits&0xff)+int(bits>>8&0xff)-255) * (10.0 / 255)
			bits >>= 16
			c.f[y*c.size+x] = base + gx*float32(x)*inv + gy*float32(y)*inv + noise
		}
	}
}

// stroke is a straight line of clutter, dimmer than the digits.
func (c *canvas) stroke() {
	s := float64(c.size)
	x0, y0 := c.rng.Float64()*s, c.rng.Float64()*s
	length := s * (0.1 + 0.3*c.rng.Float64())
	angle := c.rng.Float64() * 2 * math.Pi
	x1, y1 := x0+length*math.Cos(angle), y0+length*math.Sin(angle)
	v := float32(50 + c.rng.Intn(90))
	w := max(1, c.size/96)
	steps := int(length*2) + 1
	for i := 0; i <= steps; i++ {
		t := float64(i) / float64(steps)
		px, py := int(x0+(x1-x0)*t), int(y0+(y1-y0)*t)
		for dy := 0; dy < w; dy++ {
			for dx := 0; dx < w; dx++ {
				c.light(px+dx, py+dy, v)
			}
		}
	}
}

// light brightens one pixel to at least v (out of the canvas: nothing).
func (c *canvas) light(x, y int, v float32) {
	if x >= 0 && y >= 0 && x < c.size && y < c.size {
		c.f[y*c.size+x] = max(c.f[y*c.size+x], v)
	}
}

// digitSide is the side a digit is drawn at: 22% to 50% of the canvas.
func (c *canvas) digitSide() int {
	return max(8, int(float64(c.size)*(0.22+0.28*c.rng.Float64())))
}

// fragment pastes a dim piece of a random digit: clutter that looks like
// ink but is no digit.
func (c *canvas) fragment() {
	px, _ := c.pool.digit(c.rng.Intn(c.pool.len()))
	side := c.digitSide()
	crop := 7 + c.rng.Intn(5)
	cx, cy := 4+c.rng.Intn(mnistSide-crop-8+1), 4+c.rng.Intn(mnistSide-crop-8+1)
	out := max(3, side*crop/mnistSide)
	x0, y0 := c.rng.Intn(c.size-out+1), c.rng.Intn(c.size-out+1)
	gain := 0.3 + 0.2*c.rng.Float32()
	for y := 0; y < out; y++ {
		for x := 0; x < out; x++ {
			v := sample(px, float64(cx)+(float64(x)+0.5)*float64(crop)/float64(out)-0.5, float64(cy)+(float64(y)+0.5)*float64(crop)/float64(out)-0.5)
			c.light(x0+x, y0+y, v*gain)
		}
	}
}

// inkLevel is the brightness (0..255) from which a scaled digit's pixel
// counts as ink for its box.
const inkLevel = 64

// digit draws a random digit whose square overlaps none of the boxes
// taken (a few tries), so digits never share ink; its box is the one
// around its ink.
func (c *canvas) digit(taken []Box) (Object, bool) {
	side := c.digitSide()
	for try := 0; try < 20; try++ {
		x0, y0 := c.rng.Intn(c.size-side+1), c.rng.Intn(c.size-side+1)
		cell := Box{X1: float32(x0), Y1: float32(y0), X2: float32(x0 + side), Y2: float32(y0 + side)}
		free := true
		for _, b := range taken {
			free = free && IoU(cell, b) == 0
		}
		if !free {
			continue
		}
		px, class := c.pool.digit(c.rng.Intn(c.pool.len()))
		gain := 0.8 + 0.2*c.rng.Float32()
		ink := Box{X1: float32(c.size), Y1: float32(c.size)}
		for y := 0; y < side; y++ {
			for x := 0; x < side; x++ {
				v := sample(px, (float64(x)+0.5)*mnistSide/float64(side)-0.5, (float64(y)+0.5)*mnistSide/float64(side)-0.5) * gain
				c.light(x0+x, y0+y, v)
				if v >= inkLevel {
					ink.X1, ink.Y1 = min(ink.X1, float32(x0+x)), min(ink.Y1, float32(y0+y))
					ink.X2, ink.Y2 = max(ink.X2, float32(x0+x+1)), max(ink.Y2, float32(y0+y+1))
				}
			}
		}
		if ink.X2 <= ink.X1 || ink.Y2 <= ink.Y1 {
			return Object{}, false // a digit too faint to see
		}
		return Object{Class: class, Box: ink}, true
	}
	return Object{}, false
}

// sample reads a 28×28 digit at (x, y) with bilinear interpolation (0
// outside).
func sample(px []uint8, x, y float64) float32 {
	at := func(i, j int) float64 {
		if i < 0 || j < 0 || i >= mnistSide || j >= mnistSide {
			return 0
		}
		return float64(px[j*mnistSide+i])
	}
	x0, y0 := math.Floor(x), math.Floor(y)
	fx, fy := x-x0, y-y0
	i, j := int(x0), int(y0)
	v := at(i, j)*(1-fx)*(1-fy) + at(i+1, j)*fx*(1-fy) + at(i, j+1)*(1-fx)*fy + at(i+1, j+1)*fx*fy
	return float32(v)
}
