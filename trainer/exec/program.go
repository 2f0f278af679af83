package exec

import (
	"fmt"
)

// Run uploads the inputs (one slice per Graph.Inputs) and queues every
// step. Results are read with Read; errors surface there or in Err.
func (pr *Program) Run(inputs ...[]float32) error {
	if len(inputs) != len(pr.inputs) {
		return fmt.Errorf("%w: %d inputs, want %d", ErrExec, len(inputs), len(pr.inputs))
	}
	for i, x := range inputs {
		if len(x) != pr.inSize[i] {
			return fmt.Errorf("%w: input %d has %d values, want %d", ErrExec, i, len(x), pr.inSize[i])
		}
		pr.be.Upload(pr.inputs[i], x)
	}
	for _, f := range pr.steps {
		f()
		if pr.err != nil {
			return pr.err
		}
	}
	return pr.be.Err()
}

// Read copies output i (Graph.Outputs order) into dst.
func (pr *Program) Read(i int, dst []float32) error {
	if len(dst) != pr.outSize[i] {
		return fmt.Errorf("%w: output %d has %d values, not %d", ErrExec, i, pr.outSize[i], len(dst))
	}
	if err := pr.be.Download(dst, pr.outputs[i]); err != nil {
		return fmt.Errorf("%w: reading output %d: %w", ErrExec, i, err)
	}
	return nil
}

// OutputSize is the number of values of output i.
func (pr *Program) OutputSize(i int) int { return pr.outSize[i] }

// Steps is the number of planned steps.
func (pr *Program) Steps() int { return len(pr.steps) }

func (pr *Program) setErr(err error) {
	if pr.err == nil {
		pr.err = err
	}
}
