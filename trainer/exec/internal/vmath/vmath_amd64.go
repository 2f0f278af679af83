package vmath

import "golang.org/x/sys/cpu"

// siluAVX2 writes SiLU(a[i]) into o[i] for i < n (n a multiple of 8).
//
//go:noescape
func siluAVX2(o, a *float32, n int)

// siluGradAVX2 writes SiLU's gradient at x[i] times dy[i] into o[i] for
// i < n (n a multiple of 8).
//
//go:noescape
func siluGradAVX2(o, x, dy *float32, n int)

// haveAVX2 says whether this CPU runs the assembly (AVX2 and FMA).
func haveAVX2() bool { return cpu.X86.HasAVX2 && cpu.X86.HasFMA }
