//go:build !amd64

package vmath

func haveAVX2() bool { return false }

func siluAVX2(o, a *float32, n int) { panic("vmath: no vector SiLU on this architecture") }

func siluGradAVX2(o, x, dy *float32, n int) {
	panic("vmath: no vector SiLU gradient on this architecture")
}
