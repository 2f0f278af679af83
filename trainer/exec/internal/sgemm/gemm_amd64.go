package sgemm

import "golang.org/x/sys/cpu"

//go:noescape
func kernel4x16(k int, a *float32, b *float32, ldb int, c *float32, ldc int, acc int)

//go:noescape
func kernel6x16(k int, a *float32, b *float32, ldb int, c *float32, ldc int, acc int)

//go:noescape
func dot4x3(k8 int, a0, a1, a2, a3, b0, b1, b2 *float32, out *[12]float32)

// haveKernel says whether this CPU runs the AVX2/FMA micro-kernel.
func haveKernel() bool { return cpu.X86.HasAVX2 && cpu.X86.HasFMA }

//go:noescape
func pack16(k int, b *float32, ldb int, dst *float32)
