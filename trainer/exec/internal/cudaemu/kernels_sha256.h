// The SHA-256 of the assets/kernels/kernels.cu this package compiles,
// written by make kernels. Go's build cache keys a cgo package on the
// files of its folder, not on what it includes from elsewhere: this file
// changes with kernels.cu, so the emulator is rebuilt when the kernels
// change, and the exec tests check (cudaemu.KernelsSHA256) that it was.
#define GW_KERNELS_SHA256 "53e2d66712122df3c0d67162c396f0358aab534c9c3ec2d74ad76139cc2df926"
