package app

// Issue 19, 1: the Train step is reset for a new run, and its log follows its end.

import (
	"context"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"gpuwizard/trainer"
)

// chattyTrain is a finished run of n epochs: a log line per epoch, so the
// log outgrows its box.
func chattyTrain(t *testing.T, n int) func(context.Context, trainer.Config, chan<- trainer.Event, trainer.Options) (*trainer.Result, error) {
	return func(ctx context.Context, cfg trainer.Config, ev chan<- trainer.Event, opts trainer.Options) (*trainer.Result, error) {
		res := &trainer.Result{RunDir: t.TempDir(), Device: "cpu", Classes: []string{"a", "b"}, Epochs: n, BestEpoch: n, Val: &trainer.Metrics{Accuracy: 0.9}}
		ev <- trainer.Event{Kind: trainer.EventStart, Device: "cpu", DeviceReason: "fake: no GPU here", Epochs: n, Steps: 1, Message: "start", RunDir: res.RunDir}
		for e := 1; e <= n; e++ {
			ev <- trainer.Event{Kind: trainer.EventStep, Epoch: e, Epochs: n, Step: 1, Steps: 1, Loss: 1, Accuracy: 0.5, LR: 0.001, ImagesPerSec: 100}
			ev <- trainer.Event{Kind: trainer.EventEpoch, Epoch: e, Epochs: n, ValLoss: 0.5, ValAccuracy: 0.8}
		}
		ev <- trainer.Event{Kind: trainer.EventDone, Message: "finished"}
		return res, nil
	}
}

// trainOnce walks from Check to a finished run on the Train step.
func trainOnce(t *testing.T, wz *wizard, loop *uiLoop) {
	t.Helper()
	loop.do(func() { wz.show(1) })
	wz.wg.Wait()
	loop.do(func() {
		wz.show(2)
		test.Tap(wz.next)
		test.Tap(wz.train.start)
	})
	wz.wg.Wait()
	loop.do(func() {
		if wz.cur != 3 || wz.result == nil || !strings.HasPrefix(wz.train.where.Text, "Finished") {
			t.Fatalf("first run: step %d, result %v, %q (%s)", wz.cur, wz.result, wz.train.where.Text, wz.status.Text)
		}
	})
}

// Issue 19, 1: after the settings change, the Train step is ready for the
// new run, not showing the old one; unchanged settings keep it.
func TestTrainStepResetsForNewSettings(t *testing.T) {
	wz, loop := newTestWizard(t, Deps{Train: fakeTrain(t, 3)})
	v := wz.train
	trainOnce(t, wz, loop)
	loop.do(func() {
		test.Tap(wz.back) // Settings, unchanged
		test.Tap(wz.next)
		if wz.result == nil || !strings.HasPrefix(v.where.Text, "Finished") || wz.next.Disabled() {
			t.Errorf("unchanged settings lost the run: %q", v.where.Text)
		}
		test.Tap(wz.back)
		wz.settings.entries["epochs"].SetText("7")
		test.Tap(wz.next)
	})
	loop.do(func() {
		if wz.cur != 3 || wz.result != nil || !wz.next.Disabled() {
			t.Errorf("new settings: step %d, result %v, Next enabled %v", wz.cur, wz.result, !wz.next.Disabled())
		}
		if !strings.HasPrefix(v.where.Text, "Ready: ") || !strings.Contains(v.where.Text, "7 epochs") {
			t.Errorf("progress line %q: want the new run's settings", v.where.Text)
		}
		if strings.Contains(v.device.Text, "fake") || !strings.Contains(v.device.Text, "Automatic") {
			t.Errorf("device %q: the old run's", v.device.Text)
		}
		if v.loss.Len(0) != 0 || v.acc.Len(1) != 0 || v.progress.Value != 0 || v.log.Text != "" || v.loss.XMax != 7 {
			t.Errorf("left over: %d loss points, %d val points, progress %v, log %q, x axis to %v", v.loss.Len(0), v.acc.Len(1), v.progress.Value, v.log.Text, v.loss.XMax)
		}
	})
}

// Issue 19, 1: the second run's log follows its end, even when the user
// had scrolled up in the first run's log; it starts empty.
func TestSecondRunLogFollows(t *testing.T) {
	wz, loop := newTestWizard(t, Deps{Train: chattyTrain(t, 30)})
	v := wz.train
	trainOnce(t, wz, loop)
	loop.do(func() {
		v.logBox.Scrolled(&fyne.ScrollEvent{Scrolled: fyne.Delta{DY: 200}}) // reading the first run's log
		if v.follow {
			t.Fatal("scrolled up, the log still follows")
		}
		test.Tap(wz.back)
		wz.settings.entries["epochs"].SetText("30")
		test.Tap(wz.next)
		test.Tap(v.start)
	})
	wz.wg.Wait()
	loop.do(func() {
		end := v.log.Size().Height - v.logBox.Size().Height
		if end <= 0 || v.logBox.Offset.Y < end-1 {
			t.Errorf("second run: the log is at %v, its end at %v", v.logBox.Offset.Y, end)
		}
		if !strings.HasPrefix(v.log.Text, "Starting: ") || strings.Count(v.log.Text, "epoch 30/30") != 1 {
			t.Errorf("the second run's log starts with %q and holds the first's", v.log.Text[:min(len(v.log.Text), 40)])
		}
	})
}
