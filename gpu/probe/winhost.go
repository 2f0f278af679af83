package probe

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"gpuwizard/gpu"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// adaptersScript lists the display adapters through CIM, as CSV (one
// shape for any number of adapters, in Windows PowerShell 5.1 and 7).
const adaptersScript = "Get-CimInstance -ClassName Win32_VideoController | " +
	"Select-Object Name,PNPDeviceID,AdapterCompatibility,DriverVersion,Status,ConfigManagerErrorCode | " +
	"ConvertTo-Csv -NoTypeInformation"

// powershell is Windows PowerShell's path under %SystemRoot%.
func (p *prober) powershell() string {
	return p.sys.join(p.system32(), "WindowsPowerShell", "v1.0", "powershell.exe")
}

// probeWinAdapters lists the display adapters, which Windows knows with or
// without their driver: it tells "no NVIDIA GPU" from "an NVIDIA GPU
// without NVIDIA's driver" (Linux reads PCI for that). The NVIDIA ones
// are the facts' PCI devices.
func (p *prober) probeWinAdapters(ctx context.Context) (func(*gpu.Facts), error) {
	out, err := p.o.Runner.Run(ctx, p.powershell(), "-NoProfile", "-NonInteractive", "-Command", adaptersScript)
	if err != nil {
		return nil, fmt.Errorf("display adapters (PowerShell, Win32_VideoController): %w", err)
	}
	adapters, err := ParseVideoControllers(out)
	if err != nil {
		return nil, fmt.Errorf("display adapters: %w", err)
	}
	var pci []gpu.PCIDevice
	for _, a := range adapters {
		vendor, device := a.VendorDevice()
		if vendor != "10de" {
			continue
		}
		d := gpu.PCIDevice{Address: a.PNPDeviceID, Vendor: "0x" + vendor, Device: "0x" + device, Class: "0x030000"}
		if a.Provider == "NVIDIA" {
			d.Driver = "nvlddmkm" // NVIDIA's kernel-mode display driver
		} else if a.Provider != "" {
			d.Driver = a.Provider
		}
		pci = append(pci, d)
	}
	return func(f *gpu.Facts) {
		f.PCI = pci
		winFacts(f).Adapters = adapters
	}, nil
}

// ParseVideoControllers reads the CSV of adaptersScript. The NVIDIA
// driver's version is given in NVIDIA's form too (Driver).
func ParseVideoControllers(out []byte) ([]gpu.DisplayAdapter, error) {
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(out, []byte("\xef\xbb\xbf"))))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("reading the adapters' CSV: %w", err)
	}
	if len(rows) == 0 {
		return nil, errors.New("no output (expected a CSV header line)")
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[strings.TrimSpace(h)] = i
	}
	if _, ok := col["Name"]; !ok {
		return nil, fmt.Errorf("the CSV header %q has no Name column", strings.Join(rows[0], ","))
	}
	get := func(row []string, name string) string {
		if i, ok := col[name]; ok && i < len(row) {
			return strings.TrimSpace(row[i])
		}
		return ""
	}
	adapters := []gpu.DisplayAdapter{}
	for _, row := range rows[1:] {
		a := gpu.DisplayAdapter{Name: get(row, "Name"), PNPDeviceID: get(row, "PNPDeviceID"),
			Provider: get(row, "AdapterCompatibility"), DriverVersion: get(row, "DriverVersion"), Status: get(row, "Status")}
		a.ErrorCode, _ = strconv.Atoi(get(row, "ConfigManagerErrorCode"))
		if a.Provider == "NVIDIA" {
			a.Driver = gpu.WindowsDriverVersion(a.DriverVersion)
		}
		if a.Name != "" || a.PNPDeviceID != "" {
			adapters = append(adapters, a)
		}
	}
	return adapters, nil
}

// The registry keys the host source reads with reg.exe.
const (
	regWindowsVersion = `HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion`
	regFileSystem     = `HKLM\SYSTEM\CurrentControlSet\Control\FileSystem`
)

// probeWinHost reads the Windows release and whether long paths are
// enabled, from the registry through reg.exe.
func (p *prober) probeWinHost(ctx context.Context) (func(*gpu.Facts), error) {
	reg := p.sys.join(p.system32(), "reg.exe")
	var errs []error
	// The two queries run side by side: each is a process of its own
	// (a good part of a second under Wine).
	type answer struct {
		out []byte
		err error
	}
	lpc := make(chan answer, 1)
	go func() {
		defer func() { // a panicking Runner fails this query, not the program
			if r := recover(); r != nil {
				lpc <- answer{nil, fmt.Errorf("reg query crashed: %v", r)}
			}
		}()
		out, err := p.o.Runner.Run(ctx, reg, "query", regFileSystem, "/v", "LongPathsEnabled")
		lpc <- answer{out, err}
	}()
	ver, err := p.o.Runner.Run(ctx, reg, "query", regWindowsVersion)
	if err != nil {
		errs = append(errs, fmt.Errorf("the Windows version (reg query %s): %w", regWindowsVersion, err))
	}
	values := ParseRegQuery(string(ver))
	version, build := windowsRelease(values)
	var long *bool
	a := <-lpc
	lp, err := a.out, a.err
	switch v, ok := ParseRegQuery(string(lp))["LongPathsEnabled"]; {
	case err == nil && ok:
		on := v != "0x0" && v != "0"
		long = &on
	case err != nil && regAbsent(err):
		off := false // the value is absent: long paths are off
		long = &off
	case err != nil:
		errs = append(errs, fmt.Errorf("LongPathsEnabled (reg query %s): %w", regFileSystem, err))
	}
	hostname := p.o.Environ["COMPUTERNAME"]
	apply := func(f *gpu.Facts) {
		f.Host.DistroName, f.Host.Hostname = version, hostname
		w := winFacts(f)
		w.Version, w.Build, w.LongPathsEnabled = version, build, long
	}
	return apply, errors.Join(errs...)
}

// regAbsent says whether reg query failed because the value is absent:
// Windows' reg.exe says so ("unable to find the specified registry key or
// value") and exits with 1, which Wine's does without a word.
func regAbsent(err error) bool {
	var exit *exec.ExitError
	return strings.Contains(strings.ToLower(err.Error()), "unable to find") || errors.As(err, &exit) && exit.ExitCode() == 1
}

var regValueRE = regexp.MustCompile(`^\s+(\S(?:.*?\S)?)\s+(REG_[A-Z_]+)\s*(.*?)\s*$`)

// ParseRegQuery reads `reg query` output: "    Name    REG_SZ    value"
// lines, the values of the key queried (not of its subkeys).
func ParseRegQuery(out string) map[string]string {
	vals := map[string]string{}
	keys := 0
	for _, line := range strings.Split(strings.ReplaceAll(out, "\r", ""), "\n") {
		if strings.HasPrefix(line, "HKEY_") {
			keys++
			continue
		}
		if keys > 1 {
			break // a subkey's values (reg query /s)
		}
		if m := regValueRE.FindStringSubmatch(line); m != nil {
			vals[m[1]] = m[3]
		}
	}
	return vals
}

// windowsRelease names the release from CurrentVersion's values:
// "Windows 11 Pro 23H2". ProductName still says Windows 10 on Windows
// 11, which the build number (22000 and later) tells.
func windowsRelease(v map[string]string) (string, int) {
	build, _ := strconv.Atoi(v["CurrentBuildNumber"])
	if build == 0 {
		build, _ = strconv.Atoi(v["CurrentBuild"])
	}
	name := v["ProductName"]
	if build >= 22000 {
		name = strings.Replace(name, "Windows 10", "Windows 11", 1)
	}
	if rel := v["DisplayVersion"]; rel != "" && name != "" {
		name += " " + rel
	} else if rel := v["ReleaseId"]; rel != "" && name != "" {
		name += " " + rel
	}
	return name, build
}

// probeNvidiaSMI finds nvidia-smi.exe (System32 with DCH drivers, NVSMI
// under Program Files with older ones, or PATH) and reads each GPU's
// driver model from it: NVML's Windows library gives the rest.
func (p *prober) probeNvidiaSMI(ctx context.Context) (func(*gpu.Facts), error) {
	smi, onPath := p.lookPath("nvidia-smi"), true
	for _, c := range []string{p.sys.join(p.system32(), "nvidia-smi.exe"), p.sys.join(p.programFiles(), "NVIDIA Corporation", "NVSMI", "nvidia-smi.exe")} {
		if smi == "" && p.exists(c) {
			smi, onPath = c, false
		}
	}
	if smi == "" {
		return func(f *gpu.Facts) {}, nil
	}
	out, err := p.o.Runner.Run(ctx, smi, "--query-gpu=index,pci.bus_id,name,driver_version,driver_model.current,driver_model.pending", "--format=csv,noheader")
	rows := ParseSMIDriverModels(string(out))
	apply := func(f *gpu.Facts) {
		w := winFacts(f)
		w.NvidiaSMI, w.NvidiaSMIOnPath = smi, onPath
		for i := range f.NVML.GPUs {
			g := &f.NVML.GPUs[i]
			for _, r := range rows {
				if r.index == g.Index && (g.PCIBusID == "" || strings.EqualFold(r.busID, g.PCIBusID)) {
					g.DriverModel, g.DriverModelPending = r.current, r.pending
				}
			}
		}
	}
	if err != nil {
		return apply, fmt.Errorf("nvidia-smi driver models: %w", err)
	}
	return apply, nil
}

// smiModel is one GPU's driver model as nvidia-smi reports it.
type smiModel struct {
	index            int
	busID            string
	current, pending string
}

// ParseSMIDriverModels reads `nvidia-smi --query-gpu=index,pci.bus_id,
// name,driver_version,driver_model.current,driver_model.pending
// --format=csv,noheader`; "[N/A]" reads as unknown.
func ParseSMIDriverModels(out string) []smiModel {
	var rows []smiModel
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, ",")
		if len(f) < 6 {
			continue
		}
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
			if strings.HasPrefix(f[i], "[") {
				f[i] = "" // [N/A], [Not Supported]
			}
		}
		idx, err := strconv.Atoi(f[0])
		if err != nil {
			continue
		}
		n := len(f)
		rows = append(rows, smiModel{index: idx, busID: f[1], current: f[n-2], pending: f[n-1]})
	}
	return rows
}
