package main

import (
	"fmt"
	"strconv"
	"strings"
)

// program is one of the two .exe files.
type program struct {
	File        string // without .exe
	Description string // FileDescription: the name Task Manager shows
}

var programs = []program{
	{"gpuwizard", "gpuwizard: why your training does not use the NVIDIA GPU (command line)"},
	{"gpuwizard-gui", "gpuwizard"},
}

// parseVersion reads a.b.c.d (missing parts are 0).
func parseVersion(s string) ([4]uint16, error) {
	var v [4]uint16
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return v, fmt.Errorf("version %q: at most four numbers a.b.c.d", s)
	}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return v, fmt.Errorf("version %q: %q is not a number from 0 to 65535", s, p)
		}
		v[i] = uint16(n)
	}
	return v, nil
}

// rcString quotes s for a resource script string.
func rcString(s string) string {
	return `"` + strings.NewReplacer(`"`, `""`, `\`, `\\`).Replace(s) + `"`
}

// resourceScript is the .rc file of p: its icon (resource 1, the one
// Explorer shows) and its version information.
func resourceScript(p program, ico string, v [4]uint16, product string) string {
	num := fmt.Sprintf("%d,%d,%d,%d", v[0], v[1], v[2], v[3])
	dotted := fmt.Sprintf("%d.%d.%d.%d", v[0], v[1], v[2], v[3])
	fields := [][2]string{
		{"CompanyName", "gpuwizard"},
		{"FileDescription", p.Description},
		{"FileVersion", dotted},
		{"InternalName", p.File},
		{"LegalCopyright", "gpuwizard authors"},
		{"OriginalFilename", p.File + ".exe"},
		{"ProductName", "gpuwizard"},
		{"ProductVersion", product},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "1 ICON %s\n\n", rcString(ico))
	fmt.Fprintf(&b, "1 VERSIONINFO\nFILEVERSION %s\nPRODUCTVERSION %s\nFILEFLAGSMASK 0x3fL\nFILEFLAGS 0x0L\nFILEOS 0x40004L\nFILETYPE 0x1L\nFILESUBTYPE 0x0L\n", num, num)
	b.WriteString("BEGIN\n  BLOCK \"StringFileInfo\"\n  BEGIN\n    BLOCK \"040904b0\"\n    BEGIN\n")
	for _, f := range fields {
		fmt.Fprintf(&b, "      VALUE %s, %s\n", rcString(f[0]), rcString(f[1]))
	}
	b.WriteString("    END\n  END\n  BLOCK \"VarFileInfo\"\n  BEGIN\n    VALUE \"Translation\", 0x409, 1200\n  END\nEND\n")
	return b.String()
}
