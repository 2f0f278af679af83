package app

import (
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"gpuwizard/trainer/data"
)

// Issue 19, 4: the reason Next refused a detection dataset goes when
// another dataset is chosen, and a slow answer about an older choice does
// not replace the newer one.
func TestDatasetMessagesBelongToTheChosenOne(t *testing.T) {
	slow := filepath.Join(t.TempDir(), "slow")
	writeLongDataset(t, slow, 2)
	release := make(chan struct{})
	wz, loop := newTestWizard(t, Deps{LoadData: func(p string, o data.Options) (*data.Dataset, error) {
		if p == slow {
			<-release
		}
		return data.Load(p, o)
	}})
	loop.do(func() { wz.show(1) })
	wz.wg.Wait()
	loop.do(func() {
		wz.dataView.loaded("/x/instances.json", datasetLoad{format: "coco"})
		test.Tap(wz.next)
		if !strings.Contains(wz.status.Text, "COCO file") {
			t.Fatalf("status %q", wz.status.Text)
		}
		wz.dataView.load(data.Builtin)
		if wz.status.Text != "" {
			t.Errorf("another dataset chosen, the COCO error stays: %q", wz.status.Text)
		}
	})
	wz.wg.Wait()
	loop.do(func() {
		if wz.status.Text != "" || strings.Contains(wz.dataView.lint.Text, "COCO") {
			t.Errorf("after loading: status %q, report %q", wz.status.Text, wz.dataView.lint.Text)
		}
		wz.dataView.load(slow) // waits on release
		wz.dataView.load(data.Builtin)
	})
	waitUI(t, loop, "the built-in dataset", func() bool { return !wz.dataView.loading })
	close(release)
	wz.wg.Wait()
	loop.do(func() {
		if wz.dataArg != data.Builtin || !strings.Contains(wz.dataView.format.Text, "builtin") {
			t.Errorf("the older, slower choice replaced the newer: %s, %q", wz.dataArg, wz.dataView.format.Text)
		}
		test.Tap(wz.next)
		if wz.cur != 2 {
			t.Errorf("Next refused the built-in dataset: %q", wz.status.Text)
		}
	})
}
