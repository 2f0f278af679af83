package probe

import (
	"context"
	"fmt"
	"gpuwizard/gpu"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// probePCI lists NVIDIA PCI functions from sysfs, which works with no driver
// at all: it tells "no NVIDIA GPU" from "GPU without a working driver".
func (p *prober) probePCI(ctx context.Context) (func(*gpu.Facts), error) {
	const dir = "/sys/bus/pci/devices"
	ents, err := os.ReadDir(p.file(dir))
	if err != nil {
		return nil, fmt.Errorf("pci: reading %s: %w", dir, err)
	}
	var devs []gpu.PCIDevice
	for _, e := range ents {
		base := p.sys.join(dir, e.Name())
		vendor := p.sysValue(p.sys.join(base, "vendor"))
		if vendor != "0x10de" {
			continue
		}
		d := gpu.PCIDevice{
			Address: e.Name(),
			Vendor:  vendor,
			Device:  p.sysValue(p.sys.join(base, "device")),
			Class:   p.sysValue(p.sys.join(base, "class")),
		}
		if target, err := os.Readlink(p.file(p.sys.join(base, "driver"))); err == nil {
			d.Driver = filepath.Base(target)
		}
		devs = append(devs, d)
	}
	return func(f *gpu.Facts) { f.PCI = devs }, nil
}

func (p *prober) sysValue(path string) string {
	b, err := p.readFile(path, capSmall)
	if err != nil {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(string(b)))
}

var moduleVersionRE = regexp.MustCompile(`Kernel Module(?: for [^ ]+)?\s+([0-9]+\.[0-9]+(?:\.[0-9]+)?)`)

// probeDriver reads the kernel side: loaded modules, the module's version
// and the device nodes.
func (p *prober) probeDriver(ctx context.Context) (func(*gpu.Facts), error) {
	var d gpu.DriverFacts
	var errs []string
	if b, err := p.readFile("/proc/driver/nvidia/version", capSmall); err == nil {
		first, _, _ := strings.Cut(string(b), "\n")
		d.ProcVersion = strings.TrimSpace(first)
		if m := moduleVersionRE.FindStringSubmatch(d.ProcVersion); m != nil {
			d.ModuleVersion = m[1]
		}
	}
	if b, err := p.readFile("/proc/modules", capSource); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			name, _, _ := strings.Cut(line, " ")
			if name == "nouveau" || strings.HasPrefix(name, "nvidia") {
				d.Modules = append(d.Modules, name)
			}
		}
		sort.Strings(d.Modules)
	} else {
		errs = append(errs, "reading /proc/modules: "+err.Error())
	}
	if d.Modules == nil {
		d.Modules = []string{}
	}
	nodes, _ := filepath.Glob(p.file("/dev/nvidia*"))
	d.DeviceNodes = []gpu.DeviceNode{}
	for _, n := range nodes {
		st, err := os.Stat(n)
		if err != nil || st.IsDir() {
			continue
		}
		node := gpu.DeviceNode{Path: "/dev/" + filepath.Base(n), Mode: st.Mode().String()}
		if st.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0 {
			// Opening a named pipe would block: listed, never opened.
			d.DeviceNodes = append(d.DeviceNodes, node)
			continue
		}
		if fh, err := os.OpenFile(n, os.O_RDONLY, 0); err == nil {
			node.Readable = true
			fh.Close()
		}
		if fh, err := os.OpenFile(n, os.O_WRONLY, 0); err == nil {
			node.Writable = true
			fh.Close()
		}
		d.DeviceNodes = append(d.DeviceNodes, node)
	}
	d.DXG = p.exists("/dev/dxg")
	apply := func(f *gpu.Facts) { f.Driver = d }
	if len(errs) > 0 {
		return apply, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return apply, nil
}

// probeHost reads the distribution, kernel, WSL, container and Secure Boot.
func (p *prober) probeHost(ctx context.Context) (func(*gpu.Facts), error) {
	var h gpu.HostFacts
	if b, err := p.readFile("/etc/os-release", capSmall); err == nil {
		kv := parseOSRelease(string(b))
		h.Distro, h.DistroName = kv["ID"], kv["PRETTY_NAME"]
	}
	if b, err := p.readFile("/proc/sys/kernel/osrelease", capSmall); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	h.Hostname = p.hostname()
	low := strings.ToLower(h.Kernel)
	switch {
	case strings.Contains(low, "microsoft-standard-wsl2") || (strings.Contains(low, "microsoft") && p.exists("/dev/dxg")):
		h.WSL = 2
	case strings.Contains(low, "microsoft"):
		h.WSL = 1
	}
	h.WSLLibDir = p.exists("/usr/lib/wsl/lib")
	h.WSLLibCUDA = p.exists("/usr/lib/wsl/lib/libcuda.so.1")
	h.Container = p.containerKind()
	h.SecureBoot = p.secureBoot()
	return func(f *gpu.Facts) {
		f.Host.Distro, f.Host.DistroName, f.Host.Kernel = h.Distro, h.DistroName, h.Kernel
		f.Host.WSL, f.Host.WSLLibDir, f.Host.WSLLibCUDA = h.WSL, h.WSLLibDir, h.WSLLibCUDA
		f.Host.Container, f.Host.SecureBoot = h.Container, h.SecureBoot
		f.Host.Hostname = h.Hostname
	}, nil
}

// hostname is the machine's name: the kernel's (so a fake root has its
// own), else, on the live machine, the operating system's answer.
func (p *prober) hostname() string {
	if b, err := p.readFile("/proc/sys/kernel/hostname", capSmall); err == nil {
		if h := strings.TrimSpace(string(b)); h != "" {
			return h
		}
	}
	if p.o.Root != "/" {
		return ""
	}
	h, _ := os.Hostname()
	return h
}

func parseOSRelease(s string) map[string]string {
	kv := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		kv[k] = strings.Trim(v, `"'`)
	}
	return kv
}

func (p *prober) containerKind() string {
	switch {
	case p.exists("/.dockerenv"):
		return "docker"
	case p.exists("/run/.containerenv"):
		return "podman"
	case p.o.Environ["KUBERNETES_SERVICE_HOST"] != "":
		return "kubernetes"
	}
	if b, err := p.readFile("/run/systemd/container", capSmall); err == nil {
		if s := strings.TrimSpace(string(b)); s != "" {
			return s
		}
	}
	if b, err := p.readFile("/proc/1/cgroup", capSource); err == nil {
		s := string(b)
		switch {
		case strings.Contains(s, "/docker/") || strings.Contains(s, "docker-"):
			return "docker"
		case strings.Contains(s, "kubepods"):
			return "kubernetes"
		case strings.Contains(s, "/lxc/"):
			return "lxc"
		}
	}
	return ""
}

// secureBoot reads the EFI SecureBoot variable: 4 bytes of attributes, then
// one byte that is 1 when Secure Boot is on. "" when not readable (BIOS boot,
// no efivarfs, no permission).
func (p *prober) secureBoot() string {
	for _, m := range p.glob("/sys/firmware/efi/efivars/SecureBoot-*") {
		b, err := p.readFile(m, capSmall)
		if err != nil || len(b) < 5 {
			continue
		}
		if b[4] == 1 {
			return "enabled"
		}
		return "disabled"
	}
	return ""
}
