//go:build !amd64

package sgemm

func kernel4x16(k int, a *float32, b *float32, ldb int, c *float32, ldc int) {
	panic("exec: no SGEMM micro-kernel on this architecture")
}

func haveKernel() bool { return false }
