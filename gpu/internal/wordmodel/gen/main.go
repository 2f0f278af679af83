// Command gen writes the doctor's word model, gpu/doctor/wordmodel.txt,
// from the tuning part of the corpus (never the held-out part). Run it from
// the repository's root:
//
//	go run ./gpu/internal/wordmodel/gen
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"gpuwizard/gpu/internal/wordmodel"
)

func main() {
	dir := flag.String("corpus", filepath.Join("gpu", "testdata", "corpus"), "the corpus folder (its tuning part is read)")
	out := flag.String("o", filepath.Join("gpu", "doctor", "wordmodel.txt"), "the model file to write")
	flag.Parse()
	m, err := wordmodel.FromTuning(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, m.Format(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s: %d features, %d classes\n", *out, len(m.Words), len(m.Classes))
}
