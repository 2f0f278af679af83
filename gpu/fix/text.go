package fix

import (
	"fmt"
	"io"
	"strings"

	"gpuwizard/gpu"
)

// WriteText writes the plan for a person: the environment, each change
// with why, what goes and comes, the exact commands, then what is not
// fixed and why.
func (p Plan) WriteText(w io.Writer) error {
	var b strings.Builder
	s := gpu.Sanitize
	if p.Fixable() {
		fmt.Fprintf(&b, "Plan for %s (%s environment at %s)\n", s(p.Interpreter), s(orUnknown(p.EnvKind)), s(p.Prefix))
		b.WriteString("Nothing runs as root; only this interpreter's own pip is used.\n\n")
	} else {
		fmt.Fprintf(&b, "Nothing to fix automatically in %s.\n\n", s(p.Interpreter))
	}
	for i, a := range p.Actions {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s(a.Why))
		fmt.Fprintf(&b, "   fixes: %s\n", strings.Join(a.Findings, ", "))
		if len(a.Remove) > 0 {
			fmt.Fprintf(&b, "   removes: %s\n", s(strings.Join(a.Remove, ", ")))
		}
		if len(a.Install) > 0 {
			index := p.Index
			if a.Index != "" {
				index = a.Index
			}
			fmt.Fprintf(&b, "   installs: %s (from %s; sizes are known once pip resolves them)\n", s(strings.Join(a.Install, ", ")), s(index))
		}
		for _, c := range a.Commands {
			fmt.Fprintf(&b, "   $ %s\n", s(c.String()))
		}
		b.WriteString("\n")
	}
	if p.Fixable() {
		b.WriteString("Before anything changes, the environment's packages are recorded (pip freeze) so that gpuwizard fix --undo can put them back exactly.\n\n")
	}
	if len(p.NotFixable) > 0 {
		b.WriteString("Not fixed automatically:\n")
		for _, u := range p.NotFixable {
			fmt.Fprintf(&b, "  - %s (%s): %s\n", s(u.Title), u.ID, s(u.Why))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
