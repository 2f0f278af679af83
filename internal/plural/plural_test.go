package plural

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n          int
		noun, want string
	}{
		{1, "thread", "1 thread"},
		{2, "thread", "2 threads"},
		{0, "reading", "0 readings"},
		{1, "reading", "1 reading"},
		{15, "child", "15 children"},
		{1, "child", "1 child"},
		{3, "child process", "3 child processes"},
		{2, "process", "2 processes"},
		{4, "GPU", "4 GPUs"},
		{1, "GPU", "1 GPU"},
		{2, "Python environment", "2 Python environments"},
		{2, "copy", "2 copies"},
		{2, "day", "2 days"},
		{2, "match", "2 matches"},
		{3, "epoch", "3 epochs"},
		{2, "box", "2 boxes"},
		{2, "byte", "2 bytes"},
		{2, "error", "2 errors"},
		{2, "torchrun rank", "2 torchrun ranks"},
		{2, "CUDA", "2 CUDAs"},
	} {
		if got := Count(c.n, c.noun); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}
