package watch

import (
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
)

// cpuLimit reads the CPU quota of the process's cgroup (Docker --cpus,
// Kubernetes limits, systemd CPUQuota): cgroup v2's cpu.max, or v1's
// cpu.cfs_quota_us over cpu.cfs_period_us, the tightest of the cgroup and
// its parents, with the throttling counts of cpu.stat there. ok is false
// when no limit is set or none can be read.
func (p *procFS) cpuLimit(pid int) (cpuLimit, bool) {
	b, err := p.readFile(procPath(pid, "cgroup"))
	if err != nil {
		return cpuLimit{}, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			if l, ok := p.walkLimit(f[2], []string{"sys/fs/cgroup"}, readCPUMax); ok {
				return l, true
			}
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "cpu" {
				if l, ok := p.walkLimit(f[2], []string{"sys/fs/cgroup/cpu,cpuacct", "sys/fs/cgroup/cpu"}, readCFSQuota); ok {
					return l, true
				}
			}
		}
	}
	return cpuLimit{}, false
}

// walkLimit looks for the tightest limit from the cgroup dir up to its
// mount's root (a container sees its own cgroup as the root).
func (p *procFS) walkLimit(dir string, mounts []string, read func(p *procFS, d string) (float64, bool)) (cpuLimit, bool) {
	var best cpuLimit
	for _, mnt := range mounts {
		if _, err := fs.Stat(p.fsys, mnt); err != nil {
			continue
		}
		for d := path.Clean("/" + dir); ; d = path.Dir(d) {
			full := path.Join(mnt, d)
			if cores, ok := read(p, full); ok && (best.Cores == 0 || cores < best.Cores) {
				best = cpuLimit{Cores: cores, Path: "/" + full}
				best.Periods, best.Throttled = p.throttling(full)
			}
			if d == "/" {
				break
			}
		}
		if best.Cores > 0 {
			return best, true
		}
	}
	return cpuLimit{}, false
}

// readCPUMax reads cgroup v2's "QUOTA PERIOD" ("max 100000": no limit).
func readCPUMax(p *procFS, dir string) (float64, bool) {
	b, err := p.readFile(path.Join(dir, "cpu.max"))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] == "max" {
		return 0, false
	}
	return quotaCores(f[0], f[1])
}

// readCFSQuota reads cgroup v1's cpu.cfs_quota_us (-1: no limit) and
// cpu.cfs_period_us.
func readCFSQuota(p *procFS, dir string) (float64, bool) {
	q, err1 := p.readFile(path.Join(dir, "cpu.cfs_quota_us"))
	per, err2 := p.readFile(path.Join(dir, "cpu.cfs_period_us"))
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return quotaCores(strings.TrimSpace(string(q)), strings.TrimSpace(string(per)))
}

func quotaCores(quota, period string) (float64, bool) {
	q, err1 := strconv.ParseFloat(quota, 64)
	per, err2 := strconv.ParseFloat(period, 64)
	if err1 != nil || err2 != nil || q <= 0 || per <= 0 {
		return 0, false
	}
	return q / per, true
}

// throttling reads cpu.stat's nr_periods and nr_throttled.
func (p *procFS) throttling(dir string) (periods, throttled uint64) {
	b, err := p.readFile(path.Join(dir, "cpu.stat"))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, " ")
		n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		switch k {
		case "nr_periods":
			periods = n
		case "nr_throttled":
			throttled = n
		}
	}
	return periods, throttled
}

// minorsTTL is how long the GPU-to-device-file map is kept.
const minorsTTL = time.Minute

// gpuMinors maps each GPU's PCI bus id ("0000:01:00.0", lower case) to the
// minor number of its device file (/dev/nvidiaN), from the driver's
// /proc/driver/nvidia/gpus/BUS/information.
func (p *procFS) gpuMinors() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.minorsMap != nil && time.Since(p.minorsAt) < minorsTTL {
		return p.minorsMap
	}
	out := map[string]int{}
	ents, _ := fs.ReadDir(p.fsys, "proc/driver/nvidia/gpus")
	for _, e := range ents {
		b, err := p.readFile(path.Join("proc/driver/nvidia/gpus", e.Name(), "information"))
		if err != nil {
			continue
		}
		bus, minor := "", -1
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			switch strings.TrimSpace(k) {
			case "Bus Location":
				bus = normBusID(strings.TrimSpace(v))
			case "Device Minor":
				if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
					minor = n
				}
			}
		}
		if bus == "" {
			bus = normBusID(e.Name())
		}
		if minor >= 0 {
			out[bus] = minor
		}
	}
	p.minorsMap, p.minorsAt = out, time.Now()
	return out
}

// normBusID writes a PCI bus id as "dddd:bb:dd.f" in lower case: NVML
// says "00000000:01:00.0", the driver's /proc "0000:01:00.0".
func normBusID(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	dom, rest, ok := strings.Cut(s, ":")
	if !ok || !strings.Contains(rest, ":") {
		return s
	}
	dom = strings.TrimLeft(dom, "0")
	for len(dom) < 4 {
		dom = "0" + dom
	}
	return dom + ":" + rest
}
