package fleet

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkMerge1000 merges 1,000 saved doctor reports (three kinds of
// fake node, each file with its own hostname): reading, parsing, grouping
// and writing the table, as `gpuwizard fleet merge` does. The goal is
// under 2 s for the 1,000 (2 ms a node).
func BenchmarkMerge1000(b *testing.B) {
	const n = 1000
	kinds := []string{kindReady, kindOldDriver, kindCPUWheel}
	templates := make([][]byte, len(kinds))
	for i, k := range kinds {
		templates[i] = reportJSON(b, k, "TEMPLATEHOST")
	}
	dir := b.TempDir()
	paths := make([]string, n)
	var total int64
	for i := range paths {
		body := bytes.ReplaceAll(templates[i%len(kinds)], []byte("TEMPLATEHOST"), fmt.Appendf(nil, "gpu%04d", i))
		paths[i] = filepath.Join(dir, fmt.Sprintf("gpu%04d.json", i))
		if err := os.WriteFile(paths[i], body, 0o644); err != nil {
			b.Fatal(err)
		}
		total += int64(len(body))
	}
	m := mustMatrix(b)
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r := New(ReadFiles(paths, m))
		if r.Total != n || len(r.Groups) == 0 {
			b.Fatalf("total %d groups %d", r.Total, len(r.Groups))
		}
		if err := r.WriteText(io.Discard, false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/node")
}
