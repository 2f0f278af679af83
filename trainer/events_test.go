package trainer

import (
	"context"
	"testing"
)

// Epoch events are never dropped, even once the run is cancelled: the
// epoch was trained and saved, and its line must be shown. (A select on
// a cancelled context and a channel with room picks either at random.)
func TestEpochEventsSurviveCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ch := make(chan Event, 64)
	em := &emitter{ch: ch}
	for i := 1; i <= 32; i++ {
		em.send(ctx, Event{Kind: EventEpoch, Epoch: i})
	}
	em.send(ctx, Event{Kind: EventDone})
	close(ch)
	var epochs, done int
	for ev := range ch {
		switch ev.Kind {
		case EventEpoch:
			epochs++
		case EventDone:
			done++
		}
	}
	if epochs != 32 || done != 1 {
		t.Fatalf("after cancellation: %d of 32 epoch events and %d done event arrived", epochs, done)
	}
}
