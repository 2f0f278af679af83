package doctor

import "gpuwizard/gpu"

// A cause seen from outside (a GPU left idle, is_available() False, a
// framework's vague error) looks like a few others: a CPU-only build like
// a CUDA build installed into another Python, a missing driver like a
// container that was not given the GPU. When a thin report's own facts
// and words speak for fewer than three causes, the differential names the
// first one's lookalikes after it, each with the command that tells them
// apart, as a physician names what else would look the same.

// lookalike is a cause that shows the same symptoms as another, and why.
type lookalike struct {
	cause gpu.Cause
	why   string
}

// lookalikes are, for each cause, the two others most often mistaken for
// it, most likely first.
var lookalikes = map[gpu.Cause][]lookalike{
	gpu.CauseCPUOnlyBuild: {
		{gpu.CauseConflictingInstalls, "a CUDA build installed into another Python than the one that runs looks the same as a CPU-only build"},
		{gpu.CauseDriverMissing, "a CUDA build without a working driver also reports no GPU"}},
	gpu.CauseConflictingInstalls: {
		{gpu.CauseCPUOnlyBuild, "the install that runs may simply be a CPU-only build"},
		{gpu.CauseDriverMissing, "a CUDA build without a working driver also reports no GPU"}},
	gpu.CauseDriverMissing: {
		{gpu.CauseWSLOrContainer, "inside a container, WSL or a cloud or notebook machine without the GPU, the driver looks missing too"},
		{gpu.CauseDriverTooOld, "a driver that loads but is too old for the framework's CUDA also leaves the GPU unused"}},
	gpu.CauseDriverTooOld: {
		{gpu.CauseDriverMissing, "a driver that is not loaded at all gives the same message in some frameworks"},
		{gpu.CauseArchUnsupported, "a build for a newer CUDA may also lack the GPU's architecture"}},
	gpu.CauseArchUnsupported: {
		{gpu.CauseDriverTooOld, "a new GPU needs both a driver and a build that know it"},
		{gpu.CauseCPUOnlyBuild, "a CPU-only build leaves any GPU unused"}},
	gpu.CauseWSLOrContainer: {
		{gpu.CauseDriverMissing, "a host whose own driver is missing or not loaded gives the container nothing to pass"},
		{gpu.CauseOther, "a machine (or instance type) without an NVIDIA GPU looks the same from inside"}},
	gpu.CauseOther: {
		{gpu.CauseWSLOrContainer, "a hosted or cloud machine without a GPU attached, or a container without one, looks the same"},
		{gpu.CauseDriverMissing, "an NVIDIA GPU whose driver is missing looks absent too"}},
	gpu.CauseCudnnProblem: {
		{gpu.CauseTFGPULibs, "TensorFlow without its CUDA libraries fails in the same places"},
		{gpu.CauseConflictingInstalls, "a second CUDA or cuDNN on the path may be the one loaded"}},
	gpu.CauseTFGPULibs: {
		{gpu.CauseCPUOnlyBuild, "a TensorFlow without GPU support (2.11 and later on native Windows) lists no GPU either"},
		{gpu.CauseCudnnProblem, "a cuDNN of the wrong version stops it the same way"}},
	gpu.CauseDeviceSelection: {
		{gpu.CauseDeviceMismatchInCode, "code that never moves the model or the data also leaves the GPU idle"},
		{gpu.CauseOutOfMemory, "a GPU full of other processes' memory looks taken or unusable"}},
	gpu.CauseOutOfMemory: {
		{gpu.CauseDeviceSelection, "all work sent to one GPU (or the one others use) fills it first"},
		{gpu.CauseCudnnProblem, "cuDNN's internal and status errors are often memory running out"}},
	gpu.CauseDeviceMismatchInCode: {
		{gpu.CauseCPUOnlyBuild, "a CPU-only build also keeps everything on the CPU"},
		{gpu.CauseDeviceSelection, "a device index or CUDA_VISIBLE_DEVICES can leave tensors on another device"}},
}
