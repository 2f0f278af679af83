package trainer

import (
	"fmt"
	"strconv"
	"strings"
)

// deviceChoice is where a network should go: the CPU, or CUDA device
// ordinal; and why.
type deviceChoice struct {
	cuda     bool
	ordinal  int
	required bool   // CUDA was asked for by name: failing to open it is an error, not the CPU
	reason   string // why; for CUDA, what precedes the device's description
}

// chooseDevice applies the explicit fallback ladder to a device setting
// (cpu, auto, cuda, cuda:N) and what the doctor said, when it was asked:
// cpu is the CPU; cuda[:N] is that GPU, or an error with the doctor's
// finding when it says the GPU cannot serve; auto is the GPU when the
// doctor accepts it, else the CPU with the reason. hint says how to go on
// without the GPU, for errors. It opens nothing.
func chooseDevice(device string, st DeviceStatus, asked bool, hint string) (deviceChoice, error) {
	switch {
	case device == "cpu":
		return deviceChoice{reason: "requested with device=cpu"}, nil
	case strings.HasPrefix(device, "cuda"):
		ordinal, err := CUDAOrdinal(device)
		if err != nil {
			return deviceChoice{}, err
		}
		if asked && !st.CUDAUsable {
			return deviceChoice{}, fmt.Errorf("%w: %s was requested but cannot be served: %s (run gpuwizard doctor; or %s)", ErrDevice, device, st.Reason, hint)
		}
		return deviceChoice{cuda: true, ordinal: ordinal, required: true, reason: "requested with device=" + device}, nil
	case !asked:
		return deviceChoice{reason: "automatic choice; the GPU was not checked"}, nil
	case !st.CUDAUsable:
		return deviceChoice{reason: "automatic choice; no usable GPU: " + st.Reason}, nil
	}
	return deviceChoice{cuda: true, reason: "automatic choice"}, nil
}

// CUDAOrdinal reads the GPU index of a device setting: "cuda" is 0,
// "cuda:N" is N.
func CUDAOrdinal(device string) (int, error) {
	if device == "cuda" {
		return 0, nil
	}
	rest, ok := strings.CutPrefix(device, "cuda:")
	n, err := strconv.Atoi(rest)
	if !ok || err != nil || n < 0 {
		return 0, fmt.Errorf("%w: device %q: write cuda or cuda:N with N a GPU index (0, 1, ...)", ErrDevice, device)
	}
	return n, nil
}

// driverNote names the NVIDIA driver the doctor saw, when it did.
func driverNote(st DeviceStatus) string {
	if st.Driver == "" {
		return ""
	}
	return ", NVIDIA driver " + st.Driver
}
