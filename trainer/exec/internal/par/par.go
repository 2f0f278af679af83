// Package par shares loops out to a pool of goroutines without allocating:
// the Go backend's kernels run their ranges on every thread GOMAXPROCS
// allows, step after step, with no garbage.
//
// A training step is a few dozen kernels of tens to hundreds of
// microseconds each, so the hand-off must cost far less than that. Waking
// a parked goroutine does not: on a virtual machine the idle CPU has
// halted, and waking it costs tens of microseconds, every kernel. So the
// workers spin a while (spinFor) waiting for the next loop before they
// park, as OpenMP's runtimes do, and yield the CPU to the operating system
// now and then while they spin.
//
// A worker must claim a loop before it takes part. The caller takes chunks
// itself, and when none is left it withdraws the offer from every worker
// that has not claimed it yet: it never waits for a worker that is not
// running (a busy host's scheduler may have put it on the caller's CPU, or
// descheduled its vCPU), only for those that took chunks. At worst, every
// loop then runs on the caller alone, at the speed of one thread.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Job is a loop over items: Run handles items lo to hi-1 on goroutine w
// (0 is the caller; w < Threads()), so per-goroutine scratch space can be
// indexed by w. Run is called concurrently on disjoint ranges: it must only
// write what its items own. Keep jobs in long-lived structs and pass
// pointers to them: a pointer in an interface costs no allocation.
type Job interface {
	Run(w, lo, hi int)
}

// spinFor is how long an idle worker waits for the next loop before it
// parks: longer than the gaps between a step's kernels, short enough that
// an idle trainer costs nothing.
const spinFor = 200 * time.Microsecond

// waitFor is how long the caller spins for a worker that claimed a loop
// to finish its chunks before it blocks.
const waitFor = 50 * time.Microsecond

// yieldEvery is how many spins pass between yields to the OS scheduler.
const yieldEvery = 64

// A worker's state word holds a loop number and where that loop stands
// for the worker: offered by the caller, claimed by the worker, withdrawn
// by the caller (the worker did not claim it in time), or done.
const (
	offered = iota + 1
	claimed
	withdrawn
	finished
)

func state(seq uint64, s uint64) uint64 { return seq<<2 | (s - 1) }
func stage(v uint64) uint64             { return v&3 + 1 }

// Pool runs jobs on up to GOMAXPROCS goroutines: the caller's and workers
// started on first use. One For runs at a time (For is not reentrant); a
// Pool's zero value is ready. Close stops the workers.
type Pool struct {
	mu      sync.Mutex // one For at a time
	workers []*worker
	seq     uint64 // the current loop's number
	job     Job
	n       int
	grain   int
	next    atomic.Int64
}

// worker is one goroutine's mailbox.
type worker struct {
	st      atomic.Uint64 // state(loop, stage)
	parked  atomic.Bool
	waiting atomic.Bool   // the caller blocks on fin
	wake    chan struct{} // one token: the caller's nudge to a parked worker
	fin     chan struct{} // one token: the worker's nudge to a blocked caller
	stop    atomic.Bool
	_       [64]byte // keep workers' words on separate cache lines
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
	for len(p.workers) < w-1 {
		k := &worker{wake: make(chan struct{}, 1), fin: make(chan struct{}, 1)}
		k.st.Store(state(0, finished))
		p.workers = append(p.workers, k)
		go p.serve(k, len(p.workers))
	}
	p.job, p.n, p.grain = j, n, grain
	p.next.Store(0)
	p.seq++
	seq := p.seq
	for _, k := range p.workers[:w-1] {
		k.st.Store(state(seq, offered))
		if k.parked.Load() {
			select {
			case k.wake <- struct{}{}:
			default: // a token is already waiting
			}
		}
	}
	p.work(0)
	for _, k := range p.workers[:w-1] {
		if k.st.CompareAndSwap(state(seq, offered), state(seq, withdrawn)) {
			continue // it never started: nothing to wait for
		}
		k.await(seq)
	}
	p.job = nil
}

// await returns when worker k, which claimed loop seq, has finished it: it
// spins for up to waitFor, then blocks until the worker nudges it.
func (k *worker) await(seq uint64) {
	done := state(seq, finished)
	var deadline time.Time
	for spins := 1; k.st.Load() != done; spins++ {
		if spins%yieldEvery != 0 {
			continue
		}
		yield()
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(waitFor)
			continue
		}
		if now.After(deadline) {
			k.waiting.Store(true)
			for k.st.Load() != done {
				<-k.fin
			}
			k.waiting.Store(false)
			return
		}
	}
}

// serve is worker k's goroutine (index w): it claims and runs each loop
// offered in its mailbox, spinning between loops for up to spinFor, then
// parks.
func (p *Pool) serve(k *worker, w int) {
	for {
		deadline := time.Time{}
		var v uint64
		for spins := 1; ; spins++ {
			if v = k.st.Load(); stage(v) == offered {
				break
			}
			if k.stop.Load() {
				return
			}
			if spins%yieldEvery != 0 {
				continue
			}
			yield()
			now := time.Now()
			if deadline.IsZero() {
				deadline = now.Add(spinFor)
				continue
			}
			if now.After(deadline) {
				k.parked.Store(true)
				if stage(k.st.Load()) != offered && !k.stop.Load() {
					<-k.wake
				}
				k.parked.Store(false)
				deadline = time.Time{}
			}
		}
		seq := v >> 2
		if !k.st.CompareAndSwap(v, state(seq, claimed)) {
			continue // withdrawn meanwhile
		}
		p.work(w)
		k.st.Store(state(seq, finished))
		if k.waiting.Load() {
			select {
			case k.fin <- struct{}{}:
			default: // a token is already waiting
			}
		}
	}
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
	for _, k := range p.workers {
		k.stop.Store(true)
		select {
		case k.wake <- struct{}{}:
		default:
		}
	}
	p.workers = nil
}
