package app

import (
	"math"
	"runtime/debug"
	"testing"
	"time"
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

func TestRoughDuration(t *testing.T) {
	for in, want := range map[time.Duration]string{
		145_300 * time.Microsecond: "150ms", 2_437 * time.Millisecond: "2.4s", 29_060 * time.Millisecond: "29s",
		4_321 * time.Second: "1h12m0s", 612 * time.Second: "10m10s", 7 * time.Microsecond: "7µs",
	} {
		if got := roughDuration(in).String(); got != want {
			t.Errorf("%v: %s, want %s", in, got, want)
		}
	}
}
