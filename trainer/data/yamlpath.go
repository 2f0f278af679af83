package data

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// hostPath is a path a data.yaml or a YOLO list file names (relative to
// the folder base), as this system names it. A dataset made on Windows
// separates folders with backslashes (train: images\train); elsewhere a
// backslash is a legal name character, so it is read as a separator only
// when no file of the name as written exists. Slashes are separators
// everywhere (filepath reads them so on Windows too).
func hostPath(base, s string) string {
	p := filepath.FromSlash(s)
	if !strings.Contains(s, `\`) {
		return p
	}
	literal := p
	if !filepath.IsAbs(literal) {
		literal = filepath.Join(base, literal)
	}
	if _, err := os.Lstat(literal); err == nil {
		return p
	}
	return filepath.FromSlash(strings.ReplaceAll(s, `\`, "/"))
}

// foreignAbs says whether s is an absolute path of another system than
// this one: a Windows path (C:\…, \\server\share\…) read where filepath
// does not know volumes. Joined to the data.yaml's folder it would name
// a folder nobody meant.
func foreignAbs(s string) bool {
	if filepath.IsAbs(filepath.FromSlash(s)) {
		return false
	}
	drive := len(s) >= 3 && s[1] == ':' && (s[2] == '\\' || s[2] == '/') && (s[0]|0x20 >= 'a' && s[0]|0x20 <= 'z')
	return drive || strings.HasPrefix(s, `\\`)
}

// foreignAbsError explains a Windows path in a data.yaml read elsewhere.
func foreignAbsError(file string, line int, key, value string) error {
	return fmt.Errorf("%w: %s:%d: %s: %s is a Windows path, which this system cannot open: write it relative to the data.yaml's folder (path: . and train: images/train), which works on every system",
		ErrData, file, line, key, value)
}

// yamlQuoteHint explains the YAML error a Windows path in double quotes
// gives ("C:\datasets\x": \d is not an escape), or is "".
func yamlQuoteHint(msg string) string {
	if !strings.Contains(msg, "unknown escape character") {
		return ""
	}
	return `: a Windows path in double quotes reads its backslashes as escapes; write it without quotes or in single quotes (path: 'C:\datasets\x'), or with slashes (C:/datasets/x)`
}
