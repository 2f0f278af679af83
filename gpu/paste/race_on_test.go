//go:build race

package paste

const raceEnabled = true
