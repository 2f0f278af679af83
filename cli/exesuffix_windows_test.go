package cli

// exeSuffix ends the name of a program the tests put on PATH: Windows
// finds programs by their extension.
const exeSuffix = ".exe"
