package cli

import (
	"os"
	"testing"
)

// asMainEnv makes this test binary run as gpuwizard itself (Execute: the
// signal handling included) instead of the tests, so that a test can start
// the program as a real process and signal it.
const asMainEnv = "GPUWIZARD_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		os.Exit(Execute(os.Args[1:]))
	}
	if dir := os.Getenv(fakeKubectlEnv); dir != "" {
		os.Exit(fakeKubectl(dir, os.Args[1:]))
	}
	os.Exit(m.Run())
}
