package fleet

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gpuwizard/gpu"
	"gpuwizard/gpu/compat"
	"gpuwizard/gpu/doctor"
	"gpuwizard/gpu/internal/fakemachine"
)

var testMatrix = sync.OnceValues(compat.LoadMatrix)

func mustMatrix(t testing.TB) *compat.Matrix {
	t.Helper()
	m, err := testMatrix()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Kinds of fake node.
const (
	kindReady     = "ready"      // an H100, driver 580, torch cu130
	kindOldDriver = "old_driver" // driver 550 under torch cu130
	kindCPUWheel  = "cpu_wheel"  // a CPU-only torch beside an H100
)

// machine is a fake node of the given kind, named host.
func machine(kind, host string) *fakemachine.Machine {
	var m *fakemachine.Machine
	switch kind {
	case kindOldDriver:
		m = fakemachine.BaseMachine(fakemachine.MockNVML("550.54.15", 12040, fakemachine.H100())).WithTorch(fakemachine.VenvSite, "2.11.0+cu130", "13.0")
		m.Files["/proc/driver/nvidia/version"] = fakemachine.ProcVersion550
	case kindCPUWheel:
		m = fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100())).WithTorch(fakemachine.VenvSite, "2.3.0+cpu", "")
	default:
		m = fakemachine.BaseMachine(fakemachine.MockNVML("580.95.05", 13000, fakemachine.H100(), fakemachine.H100())).WithTorch(fakemachine.VenvSite, "2.11.0+cu130", "13.0")
	}
	m.Files["/proc/sys/kernel/hostname"] = host + "\n"
	return m
}

// reportJSON is what `gpuwizard doctor --json` prints on a fake node.
func reportJSON(t testing.TB, kind, host string) []byte {
	t.Helper()
	rep := doctor.Diagnose(machine(kind, host).Probe(t), mustMatrix(t))
	var b bytes.Buffer
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func parse(t *testing.T, data []byte, name string) Node {
	t.Helper()
	n, err := Parse(data, name, "test", mustMatrix(t))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestFromReport(t *testing.T) {
	n := parse(t, reportJSON(t, kindReady, "gpu01"), "")
	if n.Node != "gpu01" || !n.Ready || n.State != StateAnswered {
		t.Fatalf("node %q ready %v state %s", n.Node, n.Ready, n.State)
	}
	if n.Driver != "580.95.05" || n.CUDA != "13.0" {
		t.Errorf("driver %q cuda %q", n.Driver, n.CUDA)
	}
	if got := GPUSummary(n.GPUs); got != "2× H100 80GB HBM3" {
		t.Errorf("GPUs %q", got)
	}
	if len(n.Frameworks) != 1 || n.Frameworks[0] != "torch 2.11.0+cu130" {
		t.Errorf("frameworks %q", n.Frameworks)
	}
	if named := parse(t, reportJSON(t, kindReady, "gpu01"), "slurm-name"); named.Node != "slurm-name" {
		t.Errorf("a given name must win over the hostname: %q", named.Node)
	}
}

func TestParseRefusesWhatIsNotAReport(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"text", "bash: gpuwizard: command not found\n", "no JSON object"},
		{"empty", "", "no JSON object"},
		{"other JSON", `{"hello": "world"}`, `without the report's "verdict"`},
		{"torn JSON", `{"ready": true, "verdict": "Ready`, "unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.text), "n1", "test", mustMatrix(t))
			if !errors.Is(err, ErrNotReport) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want ErrNotReport with %q", err, tt.want)
			}
		})
	}
}

func TestParseSkipsBannerAndReadsSavedFacts(t *testing.T) {
	banner := append([]byte("Welcome to the cluster.\nslurmstepd: notice\n"), reportJSON(t, kindOldDriver, "gpu02")...)
	if n := parse(t, banner, ""); n.Node != "gpu02" || n.Ready {
		t.Fatalf("behind a banner: node %q ready %v", n.Node, n.Ready)
	}
	facts, err := json.Marshal(machine(kindCPUWheel, "gpu09").Probe(t))
	if err != nil {
		t.Fatal(err)
	}
	n := parse(t, facts, "")
	if n.Node != "gpu09" || n.Ready || !hasFinding(n, "torch_cpu_only") {
		t.Fatalf("saved facts: node %q ready %v findings %v", n.Node, n.Ready, ids(n))
	}
}

func hasFinding(n Node, id string) bool {
	for _, f := range n.Findings {
		if f.ID == id {
			return true
		}
	}
	return false
}

func ids(n Node) []string {
	var out []string
	for _, f := range n.Findings {
		out = append(out, f.ID)
	}
	return out
}

// fleet is three answering nodes (one ready, two with a driver too old
// for their torch) and one that is down.
func fleet(t *testing.T) Report {
	nodes := []Node{
		parse(t, reportJSON(t, kindOldDriver, "gpu10"), ""),
		parse(t, reportJSON(t, kindReady, "gpu2"), ""),
		parse(t, reportJSON(t, kindOldDriver, "gpu9"), ""),
		Unanswered("gpu11", StateDown, "drained (Reason=bad fan)", "slurm",
			gpu.Step{Text: "Resume it once fixed:", Command: "scontrol update NodeName=" + NodesPlaceholder + " State=RESUME"}),
	}
	return New(nodes)
}

func TestGroupsAcrossNodes(t *testing.T) {
	r := fleet(t)
	if r.Ready || r.Total != 4 || r.Count != 1 {
		t.Fatalf("ready %v total %d count %d", r.Ready, r.Total, r.Count)
	}
	var names []string
	for _, n := range r.Nodes {
		names = append(names, n.Node)
	}
	if strings.Join(names, " ") != "gpu2 gpu9 gpu10 gpu11" {
		t.Fatalf("order %v, want natural order", names)
	}
	g := r.Groups[0]
	if g.ID != "driver_too_old_for_torch" || g.Count != 2 || strings.Join(g.Nodes, ",") != "gpu9,gpu10" {
		t.Fatalf("first group %+v", g)
	}
	if len(g.Fix) == 0 || !strings.Contains(g.Fix[0].Text, "Upgrade the driver") {
		t.Fatalf("group fix %+v", g.Fix)
	}
	var down *Group
	for i := range r.Groups {
		if r.Groups[i].ID == "fleet_down" {
			down = &r.Groups[i]
		}
	}
	if down == nil || down.Fix[0].Command != "scontrol update NodeName=gpu11 State=RESUME" {
		t.Fatalf("the down node's group %+v", down)
	}
	if all := New([]Node{parse(t, reportJSON(t, kindReady, "a"), "")}); !all.Ready || len(all.Groups) != 0 {
		t.Fatalf("one ready node: ready %v groups %v", all.Ready, all.Groups)
	}
	if empty := New(nil); empty.Ready {
		t.Fatal("no node at all cannot be a ready fleet")
	}
}

func TestWriters(t *testing.T) {
	r := fleet(t)
	var text bytes.Buffer
	if err := r.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Fleet: 1 of 4 nodes ready", "✖ 2 nodes:", "gpu[9-10]", "→ Upgrade the driver",
		"NODE   READY  GPUS", "gpu2   yes    2× H100 80GB HBM3  580.95.05  13.0  torch 2.11.0+cu130"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| gpu11 | no | none | - | - | - | No report: drained (Reason=bad fan). |") {
		t.Errorf("markdown:\n%s", md.String())
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Nodes) != 4 || back.Groups[0].Count != 2 {
		t.Fatalf("JSON round trip: %v %+v", err, back.Groups)
	}
}

func TestCSVDefusesFormulas(t *testing.T) {
	r := New([]Node{Unanswered("=HYPERLINK(\"x\")", StateGarbage, "-1", "f")})
	var b bytes.Buffer
	if err := r.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || strings.Join(rows[0], ",") != strings.Join(CSVHeader, ",") {
		t.Fatalf("rows %q", rows)
	}
	if rows[1][0] != `'=HYPERLINK("x")` || rows[1][9] != "fleet_garbage" {
		t.Fatalf("row %q", rows[1])
	}
}

func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	paths := []string{
		write("a.json", reportJSON(t, kindReady, "gpu01")),
		write("b.json", reportJSON(t, kindReady, "gpu01")), // the same host twice
		write("node7.json", []byte("Permission denied (publickey).\n")),
		filepath.Join(dir, "missing.json"),
	}
	r := New(ReadFiles(paths, mustMatrix(t)))
	byName := map[string]Node{}
	for _, n := range r.Nodes {
		byName[n.Node] = n
	}
	if n := byName["node7"]; n.State != StateGarbage || !strings.Contains(n.Reason, "Permission denied") {
		t.Errorf("garbage file: %+v", n)
	}
	if n := byName["missing"]; n.State != StateUnreadable {
		t.Errorf("missing file: %+v", n)
	}
	if _, ok := byName["gpu01 ("+paths[0]+")"]; !ok {
		t.Errorf("duplicate hostnames are not told apart by file: %v", byName)
	}
}

func TestHostlist(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{"gpu01", "gpu02", "gpu03", "gpu07"}, "gpu[01-03,07]"},
		{[]string{"gpu09", "gpu10"}, "gpu[09-10]"},
		{[]string{"gpu9", "gpu10", "gpu11"}, "gpu[9-11]"},
		{[]string{"gpu9", "gpu010"}, "gpu9,gpu010"},
		{[]string{"login", "gpu1"}, "login,gpu1"},
		{[]string{"a1", "b1", "b2"}, "a1,b[1-2]"},
		{[]string{"x[1]", "x2"}, "x[1],x2"},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := Hostlist(tt.in); got != tt.want {
			t.Errorf("Hostlist(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNaturalLess(t *testing.T) {
	for _, c := range [][2]string{{"gpu2", "gpu10"}, {"a", "b"}, {"gpu", "gpu1"}, {"n1a", "n1b"}, {"gpu02", "gpu3"}} {
		if !NaturalLess(c[0], c[1]) || NaturalLess(c[1], c[0]) {
			t.Errorf("%q should come before %q", c[0], c[1])
		}
	}
}

func TestShortList(t *testing.T) {
	var nodes []string
	for i := 1; i <= 300; i += 2 {
		nodes = append(nodes, fmt.Sprintf("gpu%03d", i))
	}
	s := shortList(nodes)
	if len(s) > 180 || !strings.HasPrefix(s, "gpu[001,003,") || !strings.HasSuffix(s, ",…] (150 nodes in all)") {
		t.Fatalf("%d bytes: %s", len(s), s)
	}
	if s := shortList([]string{"a1", "a2"}); s != "a[1-2]" {
		t.Fatalf("short: %s", s)
	}
}

func TestLoadReport(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	if err := fleet(t).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "fleet.json")
	single := filepath.Join(dir, "doctor.json")
	os.WriteFile(good, b.Bytes(), 0o644)
	os.WriteFile(single, reportJSON(t, kindReady, "n"), 0o644)
	r, err := LoadReport(good)
	if err != nil || len(r.Nodes) != 4 || r.Groups[0].Count != 2 || r.Count != 1 {
		t.Fatalf("%v: %d nodes, groups %+v", err, len(r.Nodes), r.Groups)
	}
	if _, err := LoadReport(single); err == nil || !strings.Contains(err.Error(), `no "nodes"`) {
		t.Fatalf("a doctor report is not a fleet report: %v", err)
	}
}

func TestNamesAreOneLine(t *testing.T) {
	r := New([]Node{Unanswered("=cmd|x\n\x1b]0;pwn\a", StateGarbage, "x", "f")})
	var b bytes.Buffer
	if err := r.WriteText(&b, false); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\a") || !strings.Contains(b.String(), `=cmd|x\n\x1b]0;pwn\x07  no`) {
		t.Fatalf("%q", b.String())
	}
}
