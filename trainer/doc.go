// Package trainer trains image classifiers: it loads a dataset, builds the
// model as a gorgonia graph, runs the training loop on the chosen device,
// writes checkpoints and results, and reports progress as events.
//
// One type owns "a network on a device": the session (session.go). Opening
// one chooses the backend (device.go), fits the batch to the device's
// memory, builds the model and plans it on the executor; it then launches
// and collects training steps, evaluates a split, and reads and writes the
// parameters. Everything that runs a model is a session:
//
//   - Run (run.go) is a run folder (rundir.go), a session and the epoch
//     loop (loop.go);
//   - EstimateEpochOn (estimate.go) is a session and three timed steps;
//   - Bench (bench.go) is a session on random batches;
//   - RunResults evaluates a stopped run's checkpoint with a session plus
//     evaluate (runs.go);
//   - the Predictor (predict.go) is a session at batch 1 running the
//     evaluation program, so a prediction takes the numeric path of
//     validation.
//
// The ground types callers see (Result, EpochResult, Estimate,
// DeviceStatus, Metrics, ...) are in result.go; the checkpoint file format
// in checkpoint.go; ONNX export in export.go.
package trainer
