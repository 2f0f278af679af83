package trainer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeRun makes a run folder (an args.yaml is what makes one) under root.
func fakeRun(t testing.TB, root, name string) string {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "args.yaml"), Defaults().YAML(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRunIndexRecordsRuns: a run started with Options.RunIndex is recorded
// (absolute, once, the latest first), a run deleted since is skipped and
// pruned from the file, and the project's own runs are left out.
func TestRunIndexRecordsRuns(t *testing.T) {
	index := filepath.Join(t.TempDir(), "config", "gpuwizard", RunIndexFile)
	cfg := tinyConfig(t, tinyDataset(t, 20))
	cfg.Epochs = 1
	_, res, err := collect(context.Background(), cfg, Options{RunIndex: index})
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := IndexedRunDirs(index)
	if err != nil || !slices.Equal(dirs, []string{res.RunDir}) || !filepath.IsAbs(dirs[0]) {
		t.Fatalf("after one run the index lists %q (%v), want [%s]", dirs, err, res.RunDir)
	}

	other := t.TempDir()
	a, b := fakeRun(t, other, "train"), fakeRun(t, other, "train2")
	for _, d := range []string{a, b, a + string(filepath.Separator), filepath.Join(b, "..", "train")} {
		if err := RecordRun(index, d); err != nil {
			t.Fatal(err)
		}
	}
	dirs, _ = IndexedRunDirs(index)
	if want := []string{a, b, res.RunDir}; !slices.Equal(dirs, want) {
		t.Fatalf("index %q, want %q (each once, the latest recorded first)", dirs, want)
	}

	if err := os.RemoveAll(b); err != nil {
		t.Fatal(err)
	}
	project, err := ListRuns(cfg.Project)
	if err != nil || len(project) != 1 {
		t.Fatalf("project runs %v (%v)", project, err)
	}
	runs, err := ListIndexedRuns(index, project)
	if err != nil || len(runs) != 1 || runs[0].Dir != a {
		t.Fatalf("indexed runs %+v (%v): want only %s (the project's run is listed already, %s is gone)", runs, err, a, b)
	}
	if dirs, _ = IndexedRunDirs(index); !slices.Equal(dirs, []string{a, res.RunDir}) {
		t.Errorf("the deleted run is not pruned: %q", dirs)
	}
}

// TestRunIndexCapped: the index keeps the newest MaxIndexedRuns runs.
func TestRunIndexCapped(t *testing.T) {
	root := t.TempDir()
	index := filepath.Join(root, RunIndexFile)
	var older []string // the newest first, as the file keeps them
	for i := range MaxIndexedRuns + 5 {
		older = append(older, fakeRun(t, root, fmt.Sprintf("run%d", i)))
	}
	b, _ := json.Marshal(runIndex{Version: 1, Runs: older})
	if err := os.WriteFile(index, b, 0o644); err != nil {
		t.Fatal(err)
	}
	last := fakeRun(t, root, "newest")
	if err := RecordRun(index, last); err != nil {
		t.Fatal(err)
	}
	dirs, err := IndexedRunDirs(index)
	if err != nil || len(dirs) != MaxIndexedRuns || dirs[0] != last || dirs[len(dirs)-1] != older[MaxIndexedRuns-2] {
		t.Fatalf("%d entries (%v), first %q, last %q: want %d, the newest first", len(dirs), err, dirs[0], dirs[len(dirs)-1], MaxIndexedRuns)
	}
	if st, err := os.Stat(index); err != nil || st.Size() > MaxRunIndexFile {
		t.Fatalf("index size: %v %v", st, err)
	}
}

// TestRunIndexConcurrentRecords: trainings recording at the same time all
// end up in the index (the lock file serialises them).
func TestRunIndexConcurrentRecords(t *testing.T) {
	root := t.TempDir()
	index := filepath.Join(root, RunIndexFile)
	var dirs []string
	for i := range 8 {
		dirs = append(dirs, fakeRun(t, root, fmt.Sprintf("r%d", i)))
	}
	var wg sync.WaitGroup
	for _, d := range dirs {
		wg.Go(func() {
			if err := RecordRun(index, d); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, _ := IndexedRunDirs(index)
	slices.Sort(got)
	if !slices.Equal(got, dirs) {
		t.Fatalf("index %q, want all of %q", got, dirs)
	}
}

// TestRunIndexHostile: a damaged or foreign index never breaks a listing
// or a run: it is an error naming the file (or its bad entries are
// skipped), and the next record replaces it.
func TestRunIndexHostile(t *testing.T) {
	root := t.TempDir()
	good := fakeRun(t, root, "good")
	many := `{"version":1,"runs":[` + strings.Repeat(`"/",`, 60000) + `"/"]}`
	for _, tc := range []struct {
		name    string
		content string // written as the index
		wantErr bool
		want    []string // the folders listed
	}{
		{name: "not JSON", content: "runs:\n- /tmp\n", wantErr: true},
		{name: "truncated", content: `{"version":1,"runs":["` + good, wantErr: true},
		{name: "wrong type", content: `{"runs":"` + good + `"}`, wantErr: true},
		{name: "too large", content: `{"runs":[],"pad":"` + strings.Repeat("x", MaxRunIndexFile) + `"}`, wantErr: true},
		{name: "empty", content: "", wantErr: true},
		{name: "odd entries skipped", content: fmt.Sprintf(`{"version":7,"runs":["relative/run","/a\u0000b","/a\nb",%q,%q,%q,"/"]}`, "/"+strings.Repeat("d", 5000), good, good+"/"), want: []string{good}},
		{name: "60001 entries", content: many, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			index := filepath.Join(t.TempDir(), RunIndexFile)
			if err := os.WriteFile(index, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			runs, err := ListIndexedRuns(index, nil)
			if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, ErrRunIndex)) {
				t.Fatalf("error %v, want one: %v", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), index) {
				t.Errorf("the error does not name the file: %v", err)
			}
			var got []string
			for _, r := range runs {
				got = append(got, r.Dir)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("listed %q, want %q", got, tc.want)
			}
			// The next run replaces a damaged index with a good one.
			fresh := fakeRun(t, root, "fresh-"+strings.ReplaceAll(tc.name, " ", "-"))
			if err := RecordRun(index, fresh); err != nil {
				t.Fatalf("record over it: %v", err)
			}
			dirs, err := IndexedRunDirs(index)
			if err != nil || len(dirs) == 0 || dirs[0] != fresh {
				t.Fatalf("after a record: %q %v", dirs, err)
			}
			b, _ := os.ReadFile(index)
			var idx runIndex
			if json.Unmarshal(b, &idx) != nil || idx.Version != 1 {
				t.Errorf("rewritten index: %q", b)
			}
		})
	}
}

// TestRunIndexUnwritable: an index that cannot be replaced (a folder in its
// place) is an error that names it and says what to do; the run that
// records itself still trains (the trainer logs the note).
func TestRunIndexUnwritable(t *testing.T) {
	index := filepath.Join(t.TempDir(), RunIndexFile)
	if err := os.Mkdir(index, 0o755); err != nil {
		t.Fatal(err)
	}
	err := RecordRun(index, fakeRun(t, t.TempDir(), "train"))
	if !errors.Is(err, ErrRunIndex) || !strings.Contains(err.Error(), index) || !strings.Contains(err.Error(), "move "+RunIndexFile+" aside") {
		t.Fatalf("error %v", err)
	}
	cfg := tinyConfig(t, tinyDataset(t, 10))
	cfg.Epochs = 1
	evs, res, err := collect(context.Background(), cfg, Options{RunIndex: index})
	if err != nil || res == nil {
		t.Fatalf("the run failed with the index: %v", err)
	}
	noted := false
	for _, e := range evs {
		noted = noted || (e.Kind == EventLog && strings.Contains(e.Message, "will not list this run"))
	}
	if !noted {
		t.Error("no note says the run is not listed")
	}
}

// BenchmarkListIndexedRuns lists a full index: MaxIndexedRuns run folders
// (what the Runs view reads, in the background, each time it opens).
func BenchmarkListIndexedRuns(b *testing.B) {
	root := b.TempDir()
	index := filepath.Join(root, RunIndexFile)
	var dirs []string
	for i := range MaxIndexedRuns {
		dirs = append(dirs, fakeRun(b, root, fmt.Sprintf("run%d", i)))
	}
	buf, _ := json.Marshal(runIndex{Version: 1, Runs: dirs})
	if err := os.WriteFile(index, buf, 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		runs, err := ListIndexedRuns(index, nil)
		if err != nil || len(runs) != MaxIndexedRuns {
			b.Fatalf("%d runs, %v", len(runs), err)
		}
	}
}
