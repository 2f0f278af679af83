package cli

import (
	"context"
	"fmt"
	"time"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
	"gpuwizard/gpu/doctor"
	"gpuwizard/gpu/paste"
	"gpuwizard/gpu/probe"
	"gpuwizard/trainer"
)

// The live adapters between the doctor (gpu) and the trainer, used by the
// command line and the window alike: the one place where a doctor's
// report becomes a trainer.DeviceStatus.

// Check probes this machine with opts and judges it.
func Check(ctx context.Context, opts probe.Options) (gpu.Report, error) {
	m, err := compat.LoadMatrix()
	if err != nil {
		return gpu.Report{}, fmt.Errorf("loading the compatibility matrix: %w", err)
	}
	return doctor.Diagnose(probe.Probe(ctx, opts), m), nil
}

// LiveChecker probes this machine and judges it (the quick check).
func LiveChecker(ctx context.Context) (gpu.Report, error) { return Check(ctx, probe.Options{}) }

// DeepChecker is LiveChecker with the deep check (a real matmul and conv2d
// per GPU through each Python with torch).
func DeepChecker(ctx context.Context) (gpu.Report, error) {
	return Check(ctx, probe.Options{Deep: true})
}

// PasteChecker diagnoses a report pasted from another machine.
func PasteChecker(text string) (gpu.Report, error) {
	m, err := compat.LoadMatrix()
	if err != nil {
		return gpu.Report{}, fmt.Errorf("loading the compatibility matrix: %w", err)
	}
	return doctor.Diagnose(paste.Parse(text, time.Now()), m), nil
}

// DeviceStatus is what the doctor's report says about the trainer's own
// use of a GPU (it needs only the driver, not a Python framework).
func DeviceStatus(rep gpu.Report) trainer.DeviceStatus {
	ok, name, reason := rep.DriverReady()
	st := trainer.DeviceStatus{CUDAUsable: ok, GPU: name, Reason: reason}
	if rep.Facts != nil {
		st.Driver = rep.Facts.NVML.DriverVersion
		for _, g := range rep.Facts.NVML.GPUs {
			name := g.Name
			if g.MemoryTotalMiB > 0 {
				name += fmt.Sprintf(", %.0f GiB", float64(g.MemoryTotalMiB)/1024)
			}
			st.GPUs = append(st.GPUs, name)
		}
	}
	return st
}

// LiveProbe asks the doctor whether the trainer could use a GPU.
func LiveProbe(ctx context.Context) trainer.DeviceStatus {
	rep, err := LiveChecker(ctx)
	if err != nil {
		return trainer.DeviceStatus{Reason: err.Error()}
	}
	return DeviceStatus(rep)
}

// LiveSampler reads NVML for the trainer's proof of GPU use: the device
// that lists this process among its compute processes (NVML's index
// ordinal when none does).
func LiveSampler(s *probe.Sampler) trainer.GPUSampler {
	return func(ctx context.Context, ordinal, pid int) (trainer.GPUSample, error) {
		u, err := s.Sample(ctx, pid, ordinal)
		if err != nil {
			return trainer.GPUSample{}, err
		}
		return trainer.GPUSample{Time: time.Now(), Utilization: u.Utilization, MemoryUsedMiB: u.MemoryUsedMiB,
			ProcessListed: u.ProcessListed, ProcessMiB: u.ProcessMiB, TemperatureC: u.TemperatureC}, nil
	}
}
