package sgemm

import "golang.org/x/sys/cpu"

//go:noescape
func kernel4x16(k int, a *float32, b *float32, ldb int, c *float32, ldc int)

// haveKernel says whether this CPU runs the AVX2/FMA micro-kernel.
func haveKernel() bool { return cpu.X86.HasAVX2 && cpu.X86.HasFMA }
