//go:build !windows

package cli

// exeSuffix ends the name of a program the tests put on PATH.
const exeSuffix = ""

// kubeTimeout is fleet k8s --timeout in the fake cluster's test (the pod
// on "busy" waits all of it).
const kubeTimeout = "1s"
