package cli

// exeSuffix ends the name of a program the tests put on PATH: Windows
// finds programs by their extension.
const exeSuffix = ".exe"

// kubeTimeout is fleet k8s --timeout in the fake cluster's test: each
// fake kubectl call starts this test binary, about 0.3 s under Wine.
const kubeTimeout = "8s"
