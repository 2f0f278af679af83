package sgemm

// UseOnly4 makes g pack op(A) in 4-row panels and run kernel4x16 alone
// (the reference the 6-row kernel is measured against).
func (g *Gemm) UseOnly4(on bool) { g.only4 = on }
