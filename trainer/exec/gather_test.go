package exec

import "testing"

// TestGather2: every second float, for every length around the unrolled
// step of four, from offsets 0 and 1 of a source holding only the floats
// read.
func TestGather2(t *testing.T) {
	src := make([]float32, 64)
	for i := range src {
		src[i] = float32(i)
	}
	for n := 0; n <= 13; n++ {
		for off := 0; off < 2; off++ {
			dst := make([]float32, n+1)
			dst[n] = -1                                  // past the end: untouched
			gather2(dst[:n], src[off:off+max(2*n-1, 0)]) // exactly the floats read
			for i := 0; i < n; i++ {
				if dst[i] != float32(off+2*i) {
					t.Fatalf("n %d off %d: dst[%d] = %v, want %v", n, off, i, dst[i], off+2*i)
				}
			}
			if dst[n] != -1 {
				t.Fatalf("n %d: wrote past the end", n)
			}
		}
	}
}
