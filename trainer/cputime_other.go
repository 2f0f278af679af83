//go:build !unix

package trainer

// cpuTime is not measured off Unix.
func cpuTime() float64 { return 0 }
