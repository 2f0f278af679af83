#include "textflag.h"

// Constants, each broadcast to all eight lanes when used.
DATA vconst<>+0(SB)/4, $0xc2aea8f6  // -87.33: the clamp below
DATA vconst<>+4(SB)/4, $0x42b170a4  // 88.72: the clamp above
DATA vconst<>+8(SB)/4, $0x3fb8aa3b  // log2(e)
DATA vconst<>+12(SB)/4, $0x4b400000 // 1.5·2^23: rounds to an integer
DATA vconst<>+16(SB)/4, $0xbf318000 // -ln2, high part (0.693359375)
DATA vconst<>+20(SB)/4, $0x395e8083 // -ln2, low part (2.12194440e-4)
DATA vconst<>+24(SB)/4, $0x3f800000 // 1
DATA vconst<>+28(SB)/4, $0x0000007f // 127, the exponent bias (an integer)
DATA vconst<>+32(SB)/4, $0x39500d01 // 1/5040
DATA vconst<>+36(SB)/4, $0x3ab60b61 // 1/720
DATA vconst<>+40(SB)/4, $0x3c088889 // 1/120
DATA vconst<>+44(SB)/4, $0x3d2aaaab // 1/24
DATA vconst<>+48(SB)/4, $0x3e2aaaab // 1/6
DATA vconst<>+52(SB)/4, $0x3f000000 // 1/2
GLOBL vconst<>(SB), RODATA|NOPTR, $56

// LOADCONSTS keeps the constants used on every element in Y8-Y15.
#define LOADCONSTS \
	VBROADCASTSS vconst<>+0(SB), Y8 \
	VBROADCASTSS vconst<>+4(SB), Y9 \
	VBROADCASTSS vconst<>+8(SB), Y10 \
	VBROADCASTSS vconst<>+12(SB), Y11 \
	VBROADCASTSS vconst<>+16(SB), Y12 \
	VBROADCASTSS vconst<>+20(SB), Y13 \
	VBROADCASTSS vconst<>+24(SB), Y14 \
	VBROADCASTSS vconst<>+28(SB), Y15

// EXPNEG sets Y4 = e^-Y0 as vmath.Exp does, lane by lane: Y1 = -x clamped
// to [-87.33, 88.72] (VMAXPS and VMINPS return their second source, -x,
// when it is NaN), Y2 = n = round(Y1·log2 e), Y3 = r = Y1 − n·ln 2 in two
// parts, Y4 = the degree-7 polynomial of r by Horner's rule, times 2^n
// made in Y5 by writing n + 127 into the exponent bits. Y6 is scratch.
#define EXPNEG \
	VXORPS Y1, Y1, Y1 \
	VSUBPS Y0, Y1, Y1 \
	VMAXPS Y1, Y8, Y1 \
	VMINPS Y1, Y9, Y1 \
	VMOVAPS Y1, Y2 \
	VFMADD213PS Y11, Y10, Y2 \
	VSUBPS Y11, Y2, Y2 \
	VMOVAPS Y1, Y3 \
	VFMADD231PS Y2, Y12, Y3 \
	VFMADD231PS Y2, Y13, Y3 \
	VBROADCASTSS vconst<>+32(SB), Y4 \
	VBROADCASTSS vconst<>+36(SB), Y6 \
	VFMADD213PS Y6, Y3, Y4 \
	VBROADCASTSS vconst<>+40(SB), Y6 \
	VFMADD213PS Y6, Y3, Y4 \
	VBROADCASTSS vconst<>+44(SB), Y6 \
	VFMADD213PS Y6, Y3, Y4 \
	VBROADCASTSS vconst<>+48(SB), Y6 \
	VFMADD213PS Y6, Y3, Y4 \
	VBROADCASTSS vconst<>+52(SB), Y6 \
	VFMADD213PS Y6, Y3, Y4 \
	VFMADD213PS Y14, Y3, Y4 \
	VFMADD213PS Y14, Y3, Y4 \
	VCVTPS2DQ Y2, Y5 \
	VPADDD Y15, Y5, Y5 \
	VPSLLD $23, Y5, Y5 \
	VMULPS Y5, Y4, Y4

// func siluAVX2(o, a *float32, n int)
// o[i] = a[i] / (1 + e^-a[i]) for i < n, n a multiple of 8. Needs AVX2 and FMA.
TEXT ·siluAVX2(SB), NOSPLIT, $0-24
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   done
	LOADCONSTS

loop:
	VMOVUPS (SI), Y0
	EXPNEG
	VADDPS  Y14, Y4, Y4
	VDIVPS  Y4, Y0, Y7
	VMOVUPS Y7, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     loop
	VZEROUPPER

done:
	RET

// func siluGradAVX2(o, x, dy *float32, n int)
// o[i] = dy[i]·s·(1 + x[i]·(1 − s)) with s = 1 / (1 + e^-x[i]), for i < n,
// n a multiple of 8. Needs AVX2 and FMA.
TEXT ·siluGradAVX2(SB), NOSPLIT, $0-32
	MOVQ o+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ dy+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ   gdone
	LOADCONSTS

gloop:
	VMOVUPS     (SI), Y0
	EXPNEG
	VADDPS      Y14, Y4, Y4
	VDIVPS      Y4, Y14, Y6
	VSUBPS      Y6, Y14, Y7
	VFMADD213PS Y14, Y0, Y7
	VMULPS      Y6, Y7, Y7
	VMULPS      (DX), Y7, Y7
	VMOVUPS     Y7, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DX
	ADDQ        $32, DI
	DECQ        CX
	JNZ         gloop
	VZEROUPPER

gdone:
	RET
