package cli

import (
	"errors"

	"gpuwizard/internal/safefile"
	"gpuwizard/trainer"
	"gpuwizard/trainer/data"
)

// inputErrors are the errors that say the input is wrong (a constant
// table): settings, a dataset, a model or checkpoint, a file that is
// missing, malformed, not a regular file or too big.
var inputErrors = []error{trainer.ErrConfig, trainer.ErrCheckpoint, trainer.ErrNotRun, data.ErrData,
	safefile.ErrNotRegular, safefile.ErrTooLarge}

// exitFor is the exit status of a command that ended with err: 0 without
// one, 130 stopped, 2 for an input error (as for bad flags), 1 for the
// rest (the device, the disk, a run that failed).
func exitFor(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, trainer.ErrStopped):
		return ExitStopped
	}
	for _, e := range inputErrors {
		if errors.Is(err, e) {
			return ExitUsage
		}
	}
	return ExitFailed
}
