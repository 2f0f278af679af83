package doctor

import (
	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
)

// WheelAdvice is the torch wheel the doctor's fixes name for the machine of
// f, for an interpreter of Python version python ("3.11"; "" unknown): the
// newest official wheel that runs on every GPU with this driver. known is
// false when the GPUs or the driver are unknown (the advice is then a
// guess the fixes do not make either). gpu/fix plans with it, so the
// command it runs is the one the doctor printed.
func WheelAdvice(f *gpu.Facts, m *compat.Matrix, python string) (a compat.WheelAdvice, known bool) {
	j := &judge{f: fillFromNames(f, m), m: m}
	q := j.wheelQuery()
	for _, g := range j.f.NVML.GPUs {
		if g.CC != "" {
			q.CCs = append(q.CCs, g.CC)
			q.GPUNames = append(q.GPUNames, g.Name)
		}
	}
	q.Python = python
	return m.AdviseTorch(q), len(q.CCs) > 0 && (q.DriverVersion != "" || q.DriverCUDA != "")
}
