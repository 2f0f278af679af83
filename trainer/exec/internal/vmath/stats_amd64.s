#include "textflag.h"

// HSUM4 adds four vectors of four doubles (ya, yb, yc, yd) into the low
// double of xa (ya's low half; xb, yb's, is scratch).
#define HSUM4(ya, yb, yc, yd, xa, xb) \
	VADDPD yb, ya, ya \
	VADDPD yd, yc, yc \
	VADDPD yc, ya, ya \
	VEXTRACTF128 $1, ya, xb \
	VADDPD xb, xa, xa \
	VHADDPD xa, xa, xa

// func sum64AVX2(v *float32, n int) float64
// Σ v[i] for i < n (n a multiple of 16): each half of eight floats
// widened to four doubles, four accumulators. Needs AVX.
TEXT ·sum64AVX2(SB), NOSPLIT, $0-24
	MOVQ v+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $4, CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

sumloop:
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VCVTPS2PD 32(SI), Y6
	VCVTPS2PD 48(SI), Y7
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VADDPD Y6, Y2, Y2
	VADDPD Y7, Y3, Y3
	ADDQ $64, SI
	DECQ CX
	JNE sumloop

	HSUM4(Y0, Y1, Y2, Y3, X0, X1)
	VMOVSD X0, ret+16(FP)
	VZEROUPPER
	RET

// func sqDev64AVX2(v *float32, n int, mean float32) float64
// Σ (v[i]−mean)² for i < n (n a multiple of 16): the difference in
// float32, widened, squared and added in float64. Needs AVX2 and FMA.
TEXT ·sqDev64AVX2(SB), NOSPLIT, $0-32
	MOVQ v+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $4, CX
	VBROADCASTSS mean+16(FP), Y15
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

sqloop:
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y6
	VSUBPS Y15, Y4, Y4
	VSUBPS Y15, Y6, Y6
	VEXTRACTF128 $1, Y4, X5
	VEXTRACTF128 $1, Y6, X7
	VCVTPS2PD X4, Y4
	VCVTPS2PD X5, Y5
	VCVTPS2PD X6, Y6
	VCVTPS2PD X7, Y7
	VFMADD231PD Y4, Y4, Y0
	VFMADD231PD Y5, Y5, Y1
	VFMADD231PD Y6, Y6, Y2
	VFMADD231PD Y7, Y7, Y3
	ADDQ $64, SI
	DECQ CX
	JNE sqloop

	HSUM4(Y0, Y1, Y2, Y3, X0, X1)
	VMOVSD X0, ret+24(FP)
	VZEROUPPER
	RET

// func sumDot64AVX2(dy, x *float32, n int, mean float32, sum, dot *float64)
// *sum = Σ dy[i], *dot = Σ (x[i]−mean)·dy[i] for i < n (n a multiple of
// 16): x − mean in float32, both widened, the rest in float64 with four
// accumulators each. Needs AVX2 and FMA.
TEXT ·sumDot64AVX2(SB), NOSPLIT, $0-48
	MOVQ dy+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	VBROADCASTSS mean+24(FP), Y15
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7

sdloop:
	VMOVUPS (DI), Y8
	VMOVUPS 32(DI), Y10
	VSUBPS Y15, Y8, Y8
	VSUBPS Y15, Y10, Y10
	VEXTRACTF128 $1, Y8, X9
	VEXTRACTF128 $1, Y10, X11
	VCVTPS2PD X8, Y8
	VCVTPS2PD X9, Y9
	VCVTPS2PD X10, Y10
	VCVTPS2PD X11, Y11
	VCVTPS2PD (SI), Y12
	VADDPD Y12, Y0, Y0
	VFMADD231PD Y12, Y8, Y4
	VCVTPS2PD 16(SI), Y13
	VADDPD Y13, Y1, Y1
	VFMADD231PD Y13, Y9, Y5
	VCVTPS2PD 32(SI), Y12
	VADDPD Y12, Y2, Y2
	VFMADD231PD Y12, Y10, Y6
	VCVTPS2PD 48(SI), Y13
	VADDPD Y13, Y3, Y3
	VFMADD231PD Y13, Y11, Y7
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNE sdloop

	HSUM4(Y0, Y1, Y2, Y3, X0, X1)
	MOVQ sum+32(FP), AX
	VMOVSD X0, (AX)
	HSUM4(Y4, Y5, Y6, Y7, X4, X5)
	MOVQ dot+40(FP), AX
	VMOVSD X4, (AX)
	VZEROUPPER
	RET

// func normalizeAVX2(o, a *float32, n int, sub, mul float32)
// o[i] = (a[i]−sub)·mul for i < n (n a multiple of 16). Needs AVX.
TEXT ·normalizeAVX2(SB), NOSPLIT, $0-32
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	VBROADCASTSS sub+24(FP), Y14
	VBROADCASTSS mul+28(FP), Y15

normloop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VSUBPS Y14, Y0, Y0
	VSUBPS Y14, Y1, Y1
	VMULPS Y15, Y0, Y0
	VMULPS Y15, Y1, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNE normloop
	VZEROUPPER
	RET

// func normGradAVX2(o, dy, x *float32, n int, mean, k, gm, inv float32)
// o[i] = (dy[i] − (x[i]−mean)·k − gm)·inv for i < n (n a multiple
// of 16), each operation rounded as in Go (no fused multiply-add). Needs
// AVX.
TEXT ·normGradAVX2(SB), NOSPLIT, $0-48
	MOVQ o+0(FP), DI
	MOVQ dy+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $4, CX
	VBROADCASTSS mean+32(FP), Y12
	VBROADCASTSS k+36(FP), Y13
	VBROADCASTSS gm+40(FP), Y14
	VBROADCASTSS inv+44(FP), Y15

ngloop:
	VMOVUPS (DX), Y0
	VMOVUPS 32(DX), Y1
	VSUBPS Y12, Y0, Y0
	VSUBPS Y12, Y1, Y1
	VMULPS Y13, Y0, Y0
	VMULPS Y13, Y1, Y1
	VMOVUPS (SI), Y2
	VMOVUPS 32(SI), Y3
	VSUBPS Y0, Y2, Y2
	VSUBPS Y1, Y3, Y3
	VSUBPS Y14, Y2, Y2
	VSUBPS Y14, Y3, Y3
	VMULPS Y15, Y2, Y2
	VMULPS Y15, Y3, Y3
	VMOVUPS Y2, (DI)
	VMOVUPS Y3, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	DECQ CX
	JNE ngloop
	VZEROUPPER
	RET
// func binaryAVX2(op int, o, a, b *float32, n int)
// o[i] = a[i] op b[i] for i < n (n a multiple of 8): op 0 adds, 1
// subtracts, 2 multiplies. Needs AVX.
TEXT ·binaryAVX2(SB), NOSPLIT, $0-40
	MOVQ op+0(FP), AX
	MOVQ o+8(FP), DI
	MOVQ a+16(FP), SI
	MOVQ b+24(FP), DX
	MOVQ n+32(FP), CX
	SHRQ $3, CX
	CMPQ AX, $1
	JE subloop
	JG mulloop

addvloop:
	VMOVUPS (SI), Y0
	VADDPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNE addvloop
	VZEROUPPER
	RET

subloop:
	VMOVUPS (SI), Y0
	VSUBPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNE subloop
	VZEROUPPER
	RET

mulloop:
	VMOVUPS (SI), Y0
	VMULPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNE mulloop
	VZEROUPPER
	RET

// func scaleShiftAVX2(o, a *float32, n int, s, t float32)
// o[i] = a[i]·s + t for i < n (n a multiple of 8), the product rounded
// before the sum. Needs AVX.
TEXT ·scaleShiftAVX2(SB), NOSPLIT, $0-32
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	VBROADCASTSS s+24(FP), Y14
	VBROADCASTSS t+28(FP), Y15

ssloop:
	VMULPS (SI), Y14, Y0
	VADDPS Y15, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNE ssloop
	VZEROUPPER
	RET

// func gather2AVX2(dst, src *float32, n int)
// dst[i] = src[2i] for i < n (n a multiple of 8): sixteen floats read,
// the even ones of each 128-bit lane picked (VSHUFPS), the 64-bit pairs
// put back in order (VPERMPD). Needs AVX2.
TEXT ·gather2AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX

g2loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VSHUFPS $0x88, Y1, Y0, Y2
	VPERMPD $0xD8, Y2, Y2
	VMOVUPS Y2, (DI)
	ADDQ $64, SI
	ADDQ $32, DI
	DECQ CX
	JNE g2loop
	VZEROUPPER
	RET

// func scatterAdd2AVX2(dst, src *float32, n int)
// dst[2i] += src[i] for i < n (n a multiple of 8): eight floats
// interleaved with zeros (VUNPCK*PS, then the lanes ordered with
// VPERM2F128), added to sixteen of dst, and the sums blended into the
// even floats only (the odd ones keep their bits, −0 included). Needs AVX.
TEXT ·scatterAdd2AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	VXORPS Y15, Y15, Y15

s2loop:
	VMOVUPS (SI), Y0
	VUNPCKLPS Y15, Y0, Y1
	VUNPCKHPS Y15, Y0, Y2
	VPERM2F128 $0x20, Y2, Y1, Y3
	VPERM2F128 $0x31, Y2, Y1, Y4
	VMOVUPS (DI), Y5
	VMOVUPS 32(DI), Y6
	VADDPS Y3, Y5, Y7
	VADDPS Y4, Y6, Y8
	VBLENDPS $0x55, Y7, Y5, Y5
	VBLENDPS $0x55, Y8, Y6, Y6
	VMOVUPS Y5, (DI)
	VMOVUPS Y6, 32(DI)
	ADDQ $32, SI
	ADDQ $64, DI
	DECQ CX
	JNE s2loop
	VZEROUPPER
	RET
