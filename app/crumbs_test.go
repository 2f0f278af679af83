package app

import (
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

// Issue 19, 7: the crumbs go to the steps already reached; forward, each
// step's Leave still checks on the way; not while training.
func TestBreadcrumbsNavigate(t *testing.T) {
	wz, loop := newTestWizard(t, Deps{Train: fakeTrain(t, 1_000_000)})
	live := func() (out []int) {
		for i, c := range wz.crumbs {
			if c.live {
				out = append(out, i)
			}
		}
		return out
	}
	loop.do(func() {
		if l := live(); len(l) != 0 {
			t.Errorf("at the start crumbs %v lead somewhere", l)
		}
		test.Tap(wz.crumbs[2])
		if wz.cur != 0 {
			t.Error("a step never reached opened")
		}
		test.Tap(wz.next)
	})
	wz.wg.Wait()
	loop.do(func() {
		test.Tap(wz.next) // Settings
		test.Tap(wz.next) // Train
		if l := live(); !slices.Equal(l, []int{0, 1, 2}) {
			t.Errorf("on Train, crumbs %v are live: want 0 1 2 (no results yet)", l)
		}
		test.Tap(wz.crumbs[0])
		if wz.cur != 0 {
			t.Fatalf("the Check crumb: step %d", wz.cur)
		}
		test.Tap(wz.crumbs[2]) // forward: Check and Dataset are left on the way
	})
	wz.wg.Wait()
	loop.do(func() {
		if wz.cur != 2 {
			t.Fatalf("forward to Settings: step %d (%s)", wz.cur, wz.status.Text)
		}
		wz.settings.entries["batch"].SetText("0")
		test.Tap(wz.crumbs[1])
		test.Tap(wz.crumbs[3]) // Settings' Leave refuses batch 0
		if wz.cur != 2 || !strings.Contains(wz.status.Text, "batch size") {
			t.Errorf("invalid settings let the Train crumb through: step %d, %q", wz.cur, wz.status.Text)
		}
		wz.settings.entries["batch"].SetText("64")
		test.Tap(wz.crumbs[3])
		test.Tap(wz.train.start)
		if l := live(); len(l) != 0 {
			t.Errorf("while training crumbs %v lead somewhere", l)
		}
		test.Tap(wz.crumbs[0])
		if wz.cur != 3 {
			t.Error("a crumb left the Train step while training")
		}
		wz.train.halt()
	})
	wz.wg.Wait()
	loop.do(func() {
		if l := live(); !slices.Equal(l, []int{0, 1, 2, 4}) {
			t.Errorf("after a stopped run crumbs %v are live: want 0 1 2 4", l)
		}
	})
}
