package watch

import "time"

// Settler tells when the verdicts of a watch have settled: the same state
// and first finding in consecutive reports over Span, once CPU use is
// measured and the process is no longer setting up. `watch --once` gives
// its verdict then, and says so when its window ends first.
type Settler struct {
	// Span is how long a verdict must hold. Zero: 2 s.
	Span time.Duration

	key   string
	since time.Time
	n     int
}

// Add takes the next report and says whether the verdict has settled.
func (s *Settler) Add(r Report) bool {
	span := s.Span
	if span <= 0 {
		span = 2 * time.Second
	}
	key := string(r.State)
	if len(r.Findings) > 0 {
		key += "/" + r.Findings[0].ID
	}
	if r.OnGPU {
		key += "/gpu"
	}
	if key != s.key {
		s.key, s.since, s.n = key, r.Time, 0
	}
	s.n++
	switch {
	case r.State == StateExited:
		return true
	case r.State == StateSettingUp || r.State == StateUnknown || !r.CPU.Measured:
		return false
	}
	return s.n >= 3 && r.Time.Sub(s.since) >= span
}
