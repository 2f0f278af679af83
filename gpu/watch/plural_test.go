package watch

import (
	"strings"
	"testing"
)

// Counts read as English: "1 thread", "1 reading", "15 children", never
// "1 threads", "1 readings", "15 childs".
func TestCountsInWords(t *testing.T) {
	line := Report{PID: 42, Verdict: "On the CPU", CPU: CPUUse{Threads: 1}, Processes: make([]Process, 3)}.Line()
	if !strings.Contains(line, "· 1 thread, 3 processes") {
		t.Errorf("line: %q", line)
	}
	sum := summaryText(42, "", &Summary{Readings: 1, LastVerdict: "On the CPU"})
	if !strings.Contains(sum, "It was on no GPU in 1 reading (On the CPU).") {
		t.Errorf("summary: %q", sum)
	}
	v := &view{pid: 1}
	v.last.members = []member{{proc: proc{PID: 1}, Role: "main"}}
	for i := 0; i < 15; i++ {
		v.last.members = append(v.last.members, member{proc: proc{PID: 100 + i}, Role: "child"})
	}
	v.last.members = append(v.last.members, member{proc: proc{PID: 200}, Role: "worker"}, member{proc: proc{PID: 300}, Role: "rank 1"})
	kids := v.childrenText()
	for _, want := range []string{"15 children (100, 101,", "1 worker (DataLoader or multiprocessing) (200)", "1 torchrun rank (300 rank 1)"} {
		if !strings.Contains(kids, want) {
			t.Errorf("children: %q lacks %q", kids, want)
		}
	}
}
