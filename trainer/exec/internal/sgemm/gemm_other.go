//go:build !amd64

package sgemm

func kernel4x16(k int, a *float32, b *float32, ldb int, c *float32, ldc int, acc int) {
	panic("exec: no SGEMM micro-kernel on this architecture")
}

func kernel6x16(k int, a *float32, b *float32, ldb int, c *float32, ldc int, acc int) {
	panic("exec: no SGEMM micro-kernel on this architecture")
}

func haveKernel() bool { return false }

func dot4x3(k8 int, a0, a1, a2, a3, b0, b1, b2 *float32, out *[12]float32) {
	panic("exec: no SGEMM micro-kernel on this architecture")
}

func pack16(k int, b *float32, ldb int, dst *float32) {
	panic("exec: no SGEMM micro-kernel on this architecture")
}
