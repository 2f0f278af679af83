package paste

import (
	"regexp"
	"strconv"
	"strings"

	"gpuwizard/gpu"
)

// nvidia-smi --query-gpu=... --format=csv prints a header of the fields
// asked for ("name, driver_version, memory.total [MiB], compute_cap"), then
// one row per GPU; with noheader, only the rows, so the fields come from
// the command line.

// queryFieldRE is one field of a --query-gpu header, with its unit.
var queryFieldRE = regexp.MustCompile(`^([a-z][a-z_]*(?:\.[a-z_]+)*)(?: \[[^\]]{1,12}\])?$`)

// queryKeys are the fields the parser reads; a header must name one.
var queryKeys = map[string]bool{"name": true, "gpu_name": true, "driver_version": true, "compute_cap": true,
	"memory.total": true, "memory.used": true, "memory.free": true, "uuid": true, "gpu_uuid": true,
	"pci.bus_id": true, "gpu_bus_id": true, "index": true}

// queryCommandRE is a command line that asks nvidia-smi for CSV.
var queryCommandRE = regexp.MustCompile(`--query-gpu[= ]([\w.,]+)`)

// queryHeader reads a --query-gpu header line; it reports whether s was one.
func (pp *parser) queryHeader(s string) bool {
	if !strings.Contains(s, ",") && !queryKeys[s] {
		return false
	}
	fields := splitCSV(s)
	known := false
	for i, f := range fields {
		m := queryFieldRE.FindStringSubmatch(f)
		if m == nil {
			return false
		}
		fields[i] = m[1]
		known = known || queryKeys[m[1]]
	}
	if !known {
		return false
	}
	pp.csv = fields
	pp.formats["nvidia-smi-query"] = true
	return true
}

// queryCommand notes the fields of a command that asks for CSV without a
// header: the rows that follow are read with them.
func (pp *parser) queryCommand(s string) {
	m := queryCommandRE.FindStringSubmatch(s)
	if m == nil || !strings.Contains(s, "noheader") {
		return
	}
	var fields []string
	for _, f := range strings.Split(m[1], ",") {
		if f = strings.TrimSpace(f); f != "" {
			fields = append(fields, f)
		}
	}
	pp.csv = fields
}

// queryRow reads one row of --query-gpu output; it reports whether s was
// one (as many values as the header has fields, a GPU's values).
func (pp *parser) queryRow(s string) bool {
	vals := splitCSV(s)
	if len(vals) != len(pp.csv) {
		return false
	}
	row := map[string]string{}
	for i, f := range pp.csv {
		row[f] = vals[i]
	}
	name := firstOf(row, "name", "gpu_name")
	cc := row["compute_cap"]
	if cc != "" && !validVersion(cc) {
		return false
	}
	if name == "" && cc == "" && row["driver_version"] == "" || name != "" && !knownGPURE.MatchString(name) {
		return false
	}
	if d := row["driver_version"]; validVersion(d) {
		pp.f.NVML.DriverVersion = d
		pp.quote("driver", s)
	}
	if name == "" {
		return true
	}
	g := pp.gpu(name, cc, s)
	if cc != "" {
		g.CC = cc
	}
	if id := firstOf(row, "uuid", "gpu_uuid"); strings.HasPrefix(id, "GPU-") {
		g.UUID = id
	}
	if bus := firstOf(row, "pci.bus_id", "gpu_bus_id"); bus != "" {
		g.PCIBusID = bus
	}
	total, used, free := queryMiB(row["memory.total"]), queryMiB(row["memory.used"]), queryMiB(row["memory.free"])
	if total > 0 {
		g.MemoryTotalMiB, g.MemoryUsedMiB, g.MemoryFreeMiB = total, used, free
		if free == 0 && total >= used {
			g.MemoryFreeMiB = total - used
		}
		pp.quote("gpu_memory", s)
	}
	pp.formats["nvidia-smi-query"] = true
	return true
}

func firstOf(row map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := row[k]; v != "" && v != "[N/A]" && v != "N/A" {
			return v
		}
	}
	return ""
}

// queryMiB reads "24576 MiB" or "24576".
func queryMiB(s string) uint64 {
	n, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(s, "MiB")), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

func splitCSV(s string) []string {
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// A torch version printed alone ("2.5.1+cu124", print(torch.__version__)),
// or with what the doctor asks for beside it (torch.version.cuda,
// torch.cuda.is_available() and the arch list):
//
//	2.5.1+cu124 12.4 True ['sm_50', 'sm_60', 'sm_70', 'sm_75', 'sm_80', 'sm_86', 'sm_90']
var (
	bareTorchRE    = regexp.MustCompile(`^'?(\d+\.\d+(?:\.\d+)?(?:(?:a|b|rc|\.dev|\.post)\d+)?\+(?:cu\d{2,3}|cpu|rocm\d+(?:\.\d+)*))'?$`)
	torchAnswersRE = regexp.MustCompile(`^(?:(\S*python[\w.]*)\s+)?(\d+\.\d+\.\d+(?:(?:a|b|rc|\.dev|\.post)\d+)?(?:\+[A-Za-z0-9.]+)?)\s+(None|\d+\.\d+)(?:\s+(True|False))?(?:\s+\[((?:\s*'(?:sm|compute)_\d+a?',?)*)\s*\])?\s*$`)
	archItemRE     = regexp.MustCompile(`(?:sm|compute)_\d+a?`)
)

// bareTorch reads a line that holds only torch's version or the answers
// of the doctor's torch question; it reports whether s was one.
func (pp *parser) bareTorch(s string) bool {
	if m := bareTorchRE.FindStringSubmatch(s); m != nil {
		if v := gpu.MustVersion(m[1]); v.Major() < 1 {
			return false // torchvision's 0.x; torch starts at 1
		}
		pp.torch(m[1], s)
		return true
	}
	m := torchAnswersRE.FindStringSubmatch(s)
	if m == nil || gpu.MustVersion(m[2]).Major() < 1 || m[4] == "" && m[1] == "" {
		return false
	}
	pp.torch(m[2], s)
	pk := pp.setPackage("torch", m[2], "")
	switch {
	case m[3] == "None" && pk.ROCm == "":
		pk.CPUOnly, pk.CUDA = true, ""
	case m[3] != "None":
		pk.CUDA, pk.CPUOnly = m[3], false
	}
	pk.BuildNote = `report: "` + trimQuote(s) + `"`
	if m[1] != "" {
		pp.p.Interpreters = appendUnique(pp.p.Interpreters, m[1])
		pp.quote("python", s)
	}
	if m[4] != "" {
		pp.cudaAvailable(m[4] == "True", s)
	}
	if m[5] != "" {
		pp.p.ArchList = archItemRE.FindAllString(m[5], -1)
	}
	return true
}
