//go:build windows

package watch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unsafe"

	"golang.org/x/sys/windows"
)

// winSource reads Windows' processes: the whole table in one
// NtQuerySystemInformation call (IDs, parents, threads, CPU and start
// times, image names), command lines (NtQueryInformationProcess's
// ProcessCommandLineInformation, Windows 8.1 and later, else the PEB),
// loaded DLLs (EnumProcessModulesEx: torch_cuda.dll, cudart64_12.dll,
// nvcuda.dll…), the environment and folder from the process's PEB, read
// as bytes with ReadProcessMemory. Windows has no device files to show
// and no cgroups: those evidences are Linux's.
type winSource struct {
	mu       sync.Mutex
	at       time.Time
	snap     map[int]proc
	modCache map[int]*moduleCache
}

// moduleCache keeps a process's DLL names by their base address: only
// DLLs loaded since the last reading are asked their names.
type moduleCache struct {
	start uint64
	names map[windows.Handle]string
}

func newWinSource() *winSource { return &winSource{modCache: map[int]*moduleCache{}} }

var (
	_ source      = (*winSource)(nil)
	_ cwdReader   = (*winSource)(nil)
	_ ownerReader = (*winSource)(nil)
	_ placeNamer  = (*winSource)(nil)
)

// snapshotTTL lets one Sample's reads share one process table.
const snapshotTTL = 20 * time.Millisecond

// windowsEpoch is 1601-01-01 in FILETIME's 100 ns units before the Unix
// epoch.
const windowsEpoch = 116444736000000000

func filetime(t int64) time.Time {
	if t <= windowsEpoch {
		return time.Time{}
	}
	return time.Unix(0, (t-windowsEpoch)*100)
}

// snapshot reads every process with NtQuerySystemInformation.
func (s *winSource) snapshot() (map[int]proc, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap != nil && time.Since(s.at) < snapshotTTL {
		return s.snap, nil
	}
	buf := make([]byte, 512<<10)
	for {
		var n uint32
		err := windows.NtQuerySystemInformation(windows.SystemProcessInformation, unsafe.Pointer(&buf[0]), uint32(len(buf)), &n)
		if err == nil {
			break
		}
		if !errors.Is(err, windows.STATUS_INFO_LENGTH_MISMATCH) || len(buf) >= 64<<20 {
			return nil, fmt.Errorf("listing processes (NtQuerySystemInformation): %w", err)
		}
		buf = make([]byte, max(int(n)+64<<10, 2*len(buf)))
	}
	out := map[int]proc{}
	for off := 0; off+int(unsafe.Sizeof(windows.SYSTEM_PROCESS_INFORMATION{})) <= len(buf); {
		p := (*windows.SYSTEM_PROCESS_INFORMATION)(unsafe.Pointer(&buf[off]))
		if pid := int(p.UniqueProcessID); pid > 0 {
			out[pid] = proc{PID: pid, PPID: int(p.InheritedFromUniqueProcessID), Comm: p.ImageName.String(), UID: -1,
				CPU: time.Duration(p.UserTime+p.KernelTime) * 100, Threads: int(p.NumberOfThreads),
				StartTime: uint64(p.CreateTime), Started: filetime(p.CreateTime)}
		}
		if p.NextEntryOffset == 0 {
			break
		}
		off += int(p.NextEntryOffset)
	}
	s.snap, s.at = out, time.Now()
	return out, nil
}

func (s *winSource) table() (map[int]proc, error) { return s.snapshot() }

// proc reads one process: the table's entry and its command line (nil
// when it cannot be read: another user's process).
func (s *winSource) proc(pid int) (proc, error) {
	snap, err := s.snapshot()
	if err != nil {
		return proc{}, err
	}
	pr, ok := snap[pid]
	if !ok {
		return proc{}, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
	}
	pr.Cmdline = commandLine(pid)
	return pr, nil
}

// openProcess opens pid with the given rights; another user's process
// gives an error wrapping fs.ErrPermission, an ended one ErrNoProcess.
func openProcess(pid int, access uint32) (windows.Handle, error) {
	h, err := windows.OpenProcess(access, false, uint32(pid))
	switch {
	case err == nil:
		return h, nil
	case errors.Is(err, windows.ERROR_ACCESS_DENIED):
		return 0, fmt.Errorf("opening process %d: %w (%v)", pid, fs.ErrPermission, err)
	case errors.Is(err, windows.ERROR_INVALID_PARAMETER):
		return 0, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
	}
	return 0, fmt.Errorf("opening process %d: %w", pid, err)
}

// commandLine reads a process's command line and splits it as the C
// runtime does; nil when it cannot be read. It asks Windows (8.1 and
// later) first, then reads the PEB (older systems, Wine).
func commandLine(pid int) []string {
	line, ok := "", false
	if h, err := openProcess(pid, windows.PROCESS_QUERY_LIMITED_INFORMATION); err == nil {
		line, ok = queryCommandLine(h)
		windows.CloseHandle(h)
	}
	if !ok {
		h, err := openProcess(pid, windows.PROCESS_QUERY_INFORMATION|windows.PROCESS_VM_READ)
		if err != nil {
			return nil
		}
		defer windows.CloseHandle(h)
		params, err := processParameters(h)
		if err != nil {
			return nil
		}
		if line, err = readUnicodeString(h, params[paramsCommandLine:]); err != nil {
			return nil
		}
	}
	args, err := windows.DecomposeCommandLine(line)
	if err != nil || len(args) == 0 {
		return nil
	}
	return args
}

// queryCommandLine asks NtQueryInformationProcess for the command line
// (ProcessCommandLineInformation: Windows 8.1 and later): a
// UNICODE_STRING whose characters follow it in the same buffer.
func queryCommandLine(h windows.Handle) (string, bool) {
	buf := make([]byte, 4096)
	for range 3 {
		var n uint32
		err := windows.NtQueryInformationProcess(h, windows.ProcessCommandLineInformation, unsafe.Pointer(&buf[0]), uint32(len(buf)), &n)
		switch {
		case err == nil:
			length := int(binary.LittleEndian.Uint16(buf[0:2]))
			ptr := uintptr(binary.LittleEndian.Uint64(buf[8:16]))
			off := int(ptr - uintptr(unsafe.Pointer(&buf[0])))
			if off < 16 || off+length > len(buf) {
				return "", false
			}
			return utf16Bytes(buf[off : off+length]), true
		case errors.Is(err, windows.STATUS_INFO_LENGTH_MISMATCH) && int(n) > len(buf) && n < 1<<20:
			buf = make([]byte, n)
		default:
			return "", false
		}
	}
	return "", false
}

// utf16Bytes decodes little-endian UTF-16 bytes.
func utf16Bytes(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

// Offsets in the 64-bit PEB and RTL_USER_PROCESS_PARAMETERS (winternl.h).
const (
	pebProcessParameters   = 0x20
	paramsCurrentDirectory = 0x38 // CURDIR.DosPath, a UNICODE_STRING
	paramsCommandLine      = 0x70
	paramsEnvironment      = 0x80
	paramsEnvironmentSize  = 0x3f0
	paramsSize             = 0x400
)

// readMemory copies n bytes at addr of another process.
func readMemory(h windows.Handle, addr uint64, n int) ([]byte, error) {
	if addr == 0 || n <= 0 {
		return nil, fmt.Errorf("reading another process's memory at %#x: %w", addr, errors.ErrUnsupported)
	}
	buf := make([]byte, n)
	var got uintptr
	if err := windows.ReadProcessMemory(h, uintptr(addr), &buf[0], uintptr(n), &got); err != nil && got == 0 {
		return nil, fmt.Errorf("reading another process's memory: %w", err)
	}
	return buf[:got], nil
}

// processParameters reads the process's RTL_USER_PROCESS_PARAMETERS as
// bytes (64-bit processes; its pointers stay numbers, never Go pointers).
func processParameters(h windows.Handle) ([]byte, error) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		return nil, fmt.Errorf("reading a process's parameters: %w (64-bit only)", errors.ErrUnsupported)
	}
	var pbi [48]byte // PROCESS_BASIC_INFORMATION: PebBaseAddress at 8
	var n uint32
	if err := windows.NtQueryInformationProcess(h, windows.ProcessBasicInformation, unsafe.Pointer(&pbi[0]), uint32(len(pbi)), &n); err != nil {
		return nil, fmt.Errorf("reading the process's PEB address: %w", err)
	}
	peb, err := readMemory(h, binary.LittleEndian.Uint64(pbi[8:16]), pebProcessParameters+8)
	if err != nil || len(peb) < pebProcessParameters+8 {
		return nil, fmt.Errorf("reading the process's PEB: %w", errors.Join(err, errors.ErrUnsupported))
	}
	params, err := readMemory(h, binary.LittleEndian.Uint64(peb[pebProcessParameters:]), paramsSize)
	if err != nil || len(params) < paramsEnvironment+8 {
		return nil, fmt.Errorf("reading the process's parameters: %w", errors.Join(err, errors.ErrUnsupported))
	}
	return params, nil
}

// readUnicodeString reads the text of a remote UNICODE_STRING (Length at
// 0, Buffer at 8).
func readUnicodeString(h windows.Handle, us []byte) (string, error) {
	if len(us) < 16 {
		return "", fmt.Errorf("reading a string: %w", errors.ErrUnsupported)
	}
	length := int(binary.LittleEndian.Uint16(us[0:2]))
	if length == 0 {
		return "", nil
	}
	b, err := readMemory(h, binary.LittleEndian.Uint64(us[8:16]), length)
	if err != nil {
		return "", err
	}
	return utf16Bytes(b), nil
}

// maxEnviron bounds the environment block read.
const maxEnviron = 1 << 20

// environ reads the environment block the PEB points to: UTF-16
// NAME=value strings up to an empty one. Names are upper-cased (Windows
// compares them without case).
func (s *winSource) environ(pid int) (map[string]string, error) {
	h, err := openProcess(pid, windows.PROCESS_QUERY_INFORMATION|windows.PROCESS_VM_READ)
	if err != nil {
		return nil, err
	}
	defer windows.CloseHandle(h)
	params, err := processParameters(h)
	if err != nil {
		return nil, fmt.Errorf("reading the environment of process %d: %w", pid, err)
	}
	addr := binary.LittleEndian.Uint64(params[paramsEnvironment:])
	size := 0
	if len(params) >= paramsEnvironmentSize+8 {
		size = int(binary.LittleEndian.Uint64(params[paramsEnvironmentSize:]))
	}
	block, err := readEnvironBlock(h, addr, size)
	if err != nil {
		return nil, fmt.Errorf("reading the environment of process %d: %w", pid, err)
	}
	env := map[string]string{}
	for _, kv := range strings.Split(utf16Bytes(block), "\x00") {
		if kv == "" {
			break
		}
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[strings.ToUpper(k)] = v
		}
	}
	return env, nil
}

// readEnvironBlock reads size bytes, or (size unknown) 4 KiB at a time
// until the block's closing pair of NULs.
func readEnvironBlock(h windows.Handle, addr uint64, size int) ([]byte, error) {
	if size > 0 && size <= maxEnviron {
		return readMemory(h, addr, size)
	}
	var block []byte
	for len(block) < maxEnviron {
		b, err := readMemory(h, addr+uint64(len(block)), 4096)
		if err != nil {
			if len(block) > 0 {
				return block, nil
			}
			return nil, err
		}
		block = append(block, b...)
		for i := 0; i+3 < len(block); i += 2 {
			if block[i] == 0 && block[i+1] == 0 && block[i+2] == 0 && block[i+3] == 0 {
				return block[:i+4], nil
			}
		}
	}
	return block, nil
}

// cwd reads the process's current folder from its parameters.
func (s *winSource) cwd(pid int) (string, error) {
	h, err := openProcess(pid, windows.PROCESS_QUERY_INFORMATION|windows.PROCESS_VM_READ)
	if err != nil {
		return "", err
	}
	defer windows.CloseHandle(h)
	params, err := processParameters(h)
	if err != nil {
		return "", err
	}
	dir, err := readUnicodeString(h, params[paramsCurrentDirectory:])
	return strings.TrimSuffix(dir, `\`), err
}

// modules lists the DLLs (and the program) loaded into the process, by
// full path.
func (s *winSource) modules(pid int) ([]string, error) {
	h, err := openProcess(pid, windows.PROCESS_QUERY_INFORMATION|windows.PROCESS_VM_READ)
	if err != nil {
		return nil, err
	}
	defer windows.CloseHandle(h)
	mods := make([]windows.Handle, 512)
	for {
		var needed uint32
		size := uint32(len(mods)) * uint32(unsafe.Sizeof(mods[0]))
		if err := windows.EnumProcessModulesEx(h, &mods[0], size, &needed, windows.LIST_MODULES_ALL); err != nil {
			return nil, fmt.Errorf("listing the DLLs of process %d: %w", pid, err)
		}
		if n := int(needed / uint32(unsafe.Sizeof(mods[0]))); needed <= size || len(mods) >= maxMapped {
			mods = mods[:min(n, len(mods))] // past maxMapped DLLs, the first ones
			break
		}
		mods = make([]windows.Handle, min(int(needed/uint32(unsafe.Sizeof(mods[0])))+64, maxMapped))
	}
	cache := s.moduleCache(pid)
	out := make([]string, 0, len(mods))
	name := make([]uint16, windows.MAX_LONG_PATH)
	for _, m := range mods {
		if n, ok := cache.names[m]; ok {
			out = append(out, n)
			continue
		}
		if err := windows.GetModuleFileNameEx(h, m, &name[0], uint32(len(name))); err != nil {
			continue
		}
		n := strings.TrimPrefix(windows.UTF16ToString(name), `\\?\`)
		cache.names[m] = n
		out = append(out, n)
	}
	return out, nil
}

// moduleCache is pid's cache of DLL names, new when the PID was reused.
func (s *winSource) moduleCache(pid int) *moduleCache {
	start := uint64(0)
	if snap, err := s.snapshot(); err == nil {
		start = snap[pid].StartTime
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.modCache[pid]
	if c == nil || c.start != start {
		c = &moduleCache{start: start, names: map[windows.Handle]string{}}
		s.modCache[pid] = c
	}
	return c
}

// exe is the full path of the process's program.
func (s *winSource) exe(pid int) (string, error) {
	h, err := openProcess(pid, windows.PROCESS_QUERY_LIMITED_INFORMATION)
	if err != nil {
		return "", err
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &n); err != nil {
		return "", fmt.Errorf("reading the program of process %d: %w", pid, err)
	}
	return windows.UTF16ToString(buf[:n]), nil
}

// ownedBySelf reports whether the process's token has the user of watch's
// own token; false when it cannot be read (another user's process).
func (s *winSource) ownedBySelf(p proc) bool {
	h, err := openProcess(p.PID, windows.PROCESS_QUERY_LIMITED_INFORMATION)
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return false
	}
	defer tok.Close()
	theirs, err := tok.GetTokenUser()
	if err != nil {
		return false
	}
	mine, err := windows.GetCurrentProcessToken().GetTokenUser()
	return err == nil && theirs.User.Sid.Equals(mine.User.Sid)
}

// userName is the account that owns the process (DOMAIN\user as Windows
// writes it, or the user alone on this machine).
func (s *winSource) userName(p proc) string {
	h, err := openProcess(p.PID, windows.PROCESS_QUERY_LIMITED_INFORMATION)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return "another user"
		}
		return "unknown"
	}
	defer windows.CloseHandle(h)
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return "another user"
	}
	defer tok.Close()
	u, err := tok.GetTokenUser()
	if err != nil {
		return "unknown"
	}
	account, domain, _, err := u.User.Sid.LookupAccount("")
	if err != nil {
		return u.User.Sid.String()
	}
	if host, _ := os.Hostname(); domain != "" && !strings.EqualFold(domain, host) {
		return domain + `\` + account
	}
	return account
}

func (s *winSource) numCPU() int {
	return int(windows.GetActiveProcessorCount(windows.ALL_PROCESSOR_GROUPS))
}

func (s *winSource) isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// place names where a fact of the process was read, in Windows' terms.
func (s *winSource) place(pid int, what string) string {
	switch what {
	case "maps":
		return fmt.Sprintf("the DLLs of process %d", pid)
	case "environ":
		return fmt.Sprintf("the environment of process %d", pid)
	case "cmdline":
		return fmt.Sprintf("the command line of process %d", pid)
	}
	return fmt.Sprintf("process %d's %s", pid, what)
}
