package trainer

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ConfigError is a settings file (--config, "Load settings…") that cannot
// be read as settings: the file, and each problem in plain words with its
// line and setting, as the command line and the window both show it:
//
//	run.yaml: line 2 (epochs): "ten" is not a whole number
//
// It wraps ErrConfig and the reader's or the YAML decoder's error.
type ConfigError struct {
	File     string   // the file's name as given
	Problems []string // "line 2 (epochs): ..."; none when the file could not be read
	Err      error    // what the reader or the decoder said
}

func (e *ConfigError) Error() string {
	if len(e.Problems) == 0 {
		return e.Err.Error() // the reader's messages name the file
	}
	return e.File + ": " + strings.Join(e.Problems, "; ")
}

func (e *ConfigError) Unwrap() []error { return []error{ErrConfig, e.Err} }

var (
	// yamlLine is one of yaml.v3's messages about a line.
	yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	// yamlUnmarshal is "cannot unmarshal !!str `ten` into int" (no value
	// for a list or a mapping).
	yamlUnmarshal = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `([^`]*)`)? into (\\S+)$")
	// yamlUnknown is "field batchsize not found in type trainer.Config".
	yamlUnknown = regexp.MustCompile(`^field (\S+) not found in type`)
)

// plainYAML says what the YAML decoder's err means for the settings in
// src, one problem a line, instead of the decoder's words.
func plainYAML(err error, src []byte) []string {
	msgs := []string{err.Error()}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	lines := strings.Split(string(src), "\n")
	var out []string
	for _, msg := range msgs {
		m := yamlLine.FindStringSubmatch(msg)
		if m == nil {
			out = append(out, fmt.Sprintf("the file is not valid YAML (%s); settings are written one a line, like \"epochs: 10\", indented with spaces", strings.TrimPrefix(msg, "yaml: ")))
			continue
		}
		n, _ := strconv.Atoi(m[1])
		out = append(out, plainYAMLLine(n, keyOnLine(lines, n), m[2]))
	}
	return out
}

// plainYAMLLine says one of the decoder's problems on line n, whose
// setting is key ("" when the line holds none).
func plainYAMLLine(n int, key, what string) string {
	where := fmt.Sprintf("line %d", n)
	if key != "" {
		where += fmt.Sprintf(" (%s)", key)
	}
	if u := yamlUnknown.FindStringSubmatch(what); u != nil {
		return fmt.Sprintf("line %d: %q is not a setting gpuwizard knows (%s)", n, u[1], settingHint(u[1]))
	}
	u := yamlUnmarshal.FindStringSubmatch(what)
	switch {
	case u == nil:
		return fmt.Sprintf("%s: the file is not valid YAML here (%s)", where, what)
	case u[3] == "trainer.Config":
		return fmt.Sprintf("line %d: the file must hold settings, one \"name: value\" a line like \"epochs: 10\", not %s", n, yamlTagKind(u[1]))
	case u[2] == "":
		return fmt.Sprintf("%s: must be %s, not %s", where, goKind(u[3]), yamlTagKind(u[1]))
	}
	return fmt.Sprintf("%s: %q is not %s", where, u[2], goKind(u[3]))
}

// keyOnLine is the setting named on line n of lines (1-based), or "".
func keyOnLine(lines []string, n int) string {
	if n < 1 || n > len(lines) {
		return ""
	}
	k, _, ok := strings.Cut(strings.TrimSpace(lines[n-1]), ":")
	if !ok || strings.ContainsAny(k, " \t") {
		return ""
	}
	return strings.Trim(k, `"'`)
}

// settingHint names the setting meant by an unknown name, or lists them.
func settingHint(name string) string {
	keys := settingNames()
	low := strings.ToLower(strings.NewReplacer("-", "_", " ", "_").Replace(name))
	for _, k := range keys {
		if low == k || (len(k) >= 3 && (strings.HasPrefix(low, k) || strings.HasPrefix(k, low))) {
			return fmt.Sprintf("did you mean %q?", k)
		}
	}
	return "the settings are " + strings.Join(keys, ", ")
}

// settingNames are the YAML names of Config's fields, sorted.
func settingNames() []string {
	t := reflect.TypeOf(Config{})
	var names []string
	for i := 0; i < t.NumField(); i++ {
		if n, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); n != "" && n != "-" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// goKind names a Go type for people.
func goKind(t string) string {
	switch {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "text"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	}
	return "the right kind of value"
}

// yamlTagKind names a YAML node kind for people.
func yamlTagKind(tag string) string {
	switch tag {
	case "seq":
		return "a list"
	case "map":
		return "a group of settings"
	case "str":
		return "text"
	}
	return "a " + tag
}
