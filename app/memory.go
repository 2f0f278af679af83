package app

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// heapLimit keeps the window's Go memory near what it really holds while
// a run trains in the same process. A training holds its network's buffers
// for its whole length (hundreds of MiB for a CNN on 48×48 images) and
// allocates little per step, so with Go's default pacing (a collection
// when the heap has doubled) the process would keep up to that much again
// in garbage. Once the run has built its network, hold caps the Go
// runtime's memory at what it then uses plus a margin (a soft limit:
// the collector runs more often near it, and never takes more than half
// the CPU); release restores the previous limit when the run ends.
type heapLimit struct {
	prev int64
	held bool
}

// heapMargin is the room above the memory in use: a quarter of it, at
// least 96 MiB (the charts, the log and a dataset preview).
func heapMargin(inUse int64) int64 { return max(96<<20, inUse/4) }

func (h *heapLimit) hold() {
	if h.held {
		return
	}
	runtime.GC()
	debug.FreeOSMemory()
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return
	}
	inUse := int64(s[0].Value.Uint64() - s[1].Value.Uint64())
	h.prev = debug.SetMemoryLimit(inUse + heapMargin(inUse))
	h.held = true
}

func (h *heapLimit) release() {
	if !h.held {
		return
	}
	debug.SetMemoryLimit(h.prev)
	h.held = false
}
