package app

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestHeapLimitHoldsAndRestores(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	var h heapLimit
	h.hold()
	held := debug.SetMemoryLimit(-1)
	if held == before || held >= math.MaxInt64/2 || held < 96<<20 {
		t.Fatalf("held limit %d (before %d)", held, before)
	}
	h.hold() // twice: the first limit stays
	if debug.SetMemoryLimit(-1) != held {
		t.Error("a second hold moved the limit")
	}
	h.release()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("after release %d, want %d", got, before)
	}
	h.release() // idempotent
}
