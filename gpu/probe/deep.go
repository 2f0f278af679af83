package probe

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"gpuwizard/assets"
	"gpuwizard/gpu"
)

// deepMarker starts the deep-check script's JSON line.
const deepMarker = "GPUWIZARD_DEEP "

// deepCheck runs the embedded script in every interpreter that has torch,
// concurrently, each under DeepTimeout.
func (p *prober) deepCheck(ctx context.Context, f *gpu.Facts) []gpu.DeepResult {
	var targets []string
	for _, env := range f.Pythons {
		if _, ok := env.Package("torch"); ok {
			targets = append(targets, env.Interpreter)
		}
	}
	results := make([]gpu.DeepResult, len(targets))
	var wg sync.WaitGroup
	for i, py := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = p.deepOne(ctx, py)
		}()
	}
	wg.Wait()
	return results
}

func (p *prober) deepOne(ctx context.Context, py string) gpu.DeepResult {
	ctx, cancel := context.WithTimeout(ctx, p.o.DeepTimeout)
	defer cancel()
	res := gpu.DeepResult{Interpreter: py}
	out, err := p.o.Runner.Run(ctx, py, "-c", assets.DeepCheckPy)
	if err != nil && errors.Is(err, ErrTimeout) {
		res.TimedOut = true
		res.Error = "the check did not finish within " + p.o.DeepTimeout.String() + " (a hung driver call or a very slow first CUDA start)"
		return res
	}
	parsed, perr := ParseDeepOutput(string(out))
	if perr != nil {
		res.Error = perr.Error()
		if err != nil {
			res.Error = err.Error()
		}
		return res
	}
	parsed.Interpreter = py
	return parsed
}

// ParseDeepOutput reads the script's JSON line out of its standard output.
func ParseDeepOutput(out string) (gpu.DeepResult, error) {
	i := strings.LastIndex(out, deepMarker)
	if i < 0 {
		return gpu.DeepResult{}, errors.New("gpu: deep check printed no result")
	}
	line, _, _ := strings.Cut(out[i+len(deepMarker):], "\n")
	var raw struct {
		gpu.DeepResult
		TorchCUDA *string `json:"torch_cuda"` // null for CPU builds
	}
	if err := json.Unmarshal([]byte(line), &raw); err != nil {
		return gpu.DeepResult{}, errors.Join(errors.New("gpu: deep check result is not JSON"), err)
	}
	r := raw.DeepResult
	if raw.TorchCUDA != nil {
		r.TorchCUDA = *raw.TorchCUDA
	}
	return r, nil
}
