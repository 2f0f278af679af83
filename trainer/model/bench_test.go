package model

import (
	"math/rand"
	"testing"

	"gpuwizard/trainer/optim"
)

func benchTrain(b *testing.B, spec Spec, batch int) {
	net, err := Build(spec, batch, 1)
	if err != nil {
		b.Fatal(err)
	}
	x, y := net.RandomBatch(rand.New(rand.NewSource(1)))
	opt := optim.NewAdam(0)
	var params, grads [][]float32
	for _, p := range net.Params {
		params = append(params, p.Data)
	}
	// One untimed step: the tape machine is made on the first.
	if _, _, err := net.TrainStep(x, y); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := net.TrainStep(x, y); err != nil {
			b.Fatal(err)
		}
		grads = grads[:0]
		for _, p := range net.Params {
			grads = append(grads, p.Grad())
		}
		opt.Step(params, grads, 1e-3)
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "img/s")
}

func BenchmarkLeNet64(b *testing.B) {
	benchTrain(b, Spec{Kind: LeNet, Channels: 1, Height: 28, Width: 28, Classes: 10}, 64)
}

func BenchmarkMLP64(b *testing.B) {
	benchTrain(b, Spec{Kind: MLP, Channels: 1, Height: 28, Width: 28, Classes: 10}, 64)
}
