// Package par shares loops out to a pool of goroutines without allocating:
// the Go backend's kernels run their ranges on every thread GOMAXPROCS
// allows, step after step, with no garbage.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Job is a loop over items: Run handles items lo to hi-1 on goroutine w
// (0 is the caller; w < Threads()), so per-goroutine scratch space can be
// indexed by w. Run is called concurrently on disjoint ranges: it must only
// write what its items own. Keep jobs in long-lived structs and pass
// pointers to them: a pointer in an interface costs no allocation.
type Job interface {
	Run(w, lo, hi int)
}

// Pool runs jobs on up to GOMAXPROCS goroutines: the caller's and parked
// workers started on first use. One For runs at a time (For is not
// reentrant); a Pool's zero value is ready. Close stops the workers.
type Pool struct {
	mu      sync.Mutex // one For at a time
	workers int
	wake    chan int
	done    sync.WaitGroup
	job     Job
	n       int
	grain   int
	next    atomic.Int64
}

// Threads is the number of goroutines For would use now.
func Threads() int { return runtime.GOMAXPROCS(0) }

// For runs j over items 0 to n-1 in chunks of grain items (at least 1),
// taken in turn by the caller and the workers, and returns when all are
// done. With one thread, or one chunk, j runs on the caller alone.
func (p *Pool) For(n, grain int, j Job) {
	if n <= 0 {
		return
	}
	grain = max(grain, 1)
	chunks := (n + grain - 1) / grain
	w := min(Threads(), chunks)
	if w <= 1 {
		j.Run(0, 0, n)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	w = min(w, p.start(w-1)+1)
	p.job, p.n, p.grain = j, n, grain
	p.next.Store(0)
	p.done.Add(w - 1)
	for i := 1; i < w; i++ {
		p.wake <- i
	}
	p.work(0)
	p.done.Wait()
	p.job = nil
}

// start makes sure up to k workers wait on wake and returns how many do.
// A worker is told its index with the wake-up.
func (p *Pool) start(k int) int {
	if p.wake == nil {
		p.wake = make(chan int, max(runtime.NumCPU(), 2))
	}
	for p.workers < k && p.workers < cap(p.wake) {
		p.workers++
		go func(wake <-chan int) {
			for w := range wake {
				p.work(w)
				p.done.Done()
			}
		}(p.wake)
	}
	return min(k, p.workers)
}

// work takes chunks until none is left.
func (p *Pool) work(w int) {
	for {
		lo := int(p.next.Add(1)-1) * p.grain
		if lo >= p.n {
			return
		}
		p.job.Run(w, lo, min(lo+p.grain, p.n))
	}
}

// Close stops the workers; the Pool can be used again (it starts new ones).
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.wake != nil {
		close(p.wake)
		p.wake, p.workers = nil, 0
	}
}
