package par

import (
	"runtime"
	"sync/atomic"
	"testing"
)

type countJob struct {
	hits    []atomic.Int32
	badW    atomic.Int32
	threads int
}

func (j *countJob) Run(w, lo, hi int) {
	if w < 0 || w >= j.threads {
		j.badW.Add(1)
	}
	for i := lo; i < hi; i++ {
		j.hits[i].Add(1)
	}
}

// TestForCoversEveryItemOnce: every item is handed out exactly once, to a
// goroutine index below Threads, for any size, grain and thread count, and
// For allocates nothing.
func TestForCoversEveryItemOnce(t *testing.T) {
	var p Pool
	defer p.Close()
	for _, threads := range []int{1, 2, 3, 8} {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
		for _, n := range []int{0, 1, 7, 64, 1000} {
			for _, grain := range []int{0, 1, 3, 64, 5000} {
				j := &countJob{hits: make([]atomic.Int32, n), threads: threads}
				p.For(n, grain, j)
				for i := range j.hits {
					if h := j.hits[i].Load(); h != 1 {
						t.Fatalf("threads %d n %d grain %d: item %d run %d times", threads, n, grain, i, h)
					}
				}
				if j.badW.Load() != 0 {
					t.Fatalf("threads %d: a goroutine index out of range", threads)
				}
			}
		}
		j := &countJob{hits: make([]atomic.Int32, 4096), threads: threads}
		if a := testing.AllocsPerRun(20, func() { p.For(4096, 16, j) }); a != 0 {
			t.Errorf("%d threads: %v allocations per For", threads, a)
		}
	}
	p.Close()
	j := &countJob{hits: make([]atomic.Int32, 10), threads: runtime.GOMAXPROCS(0)}
	p.For(10, 1, j) // usable again after Close
	for i := range j.hits {
		if j.hits[i].Load() != 1 {
			t.Fatal("the pool does not work after Close")
		}
	}
}
