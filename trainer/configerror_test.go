package trainer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A settings file's mistakes are said in plain words, with the line and
// the setting, the same for --config and the window's "Load settings…".
func TestConfigErrorsInPlainWords(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"model: lenet\nepochs: ten\n", `run.yaml: line 2 (epochs): "ten" is not a whole number`},
		{"epochs: ten\nlr: fast\n", `run.yaml: line 1 (epochs): "ten" is not a whole number; line 2 (lr): "fast" is not a number`},
		{"grey: maybe\n", `line 1 (grey): "maybe" is not true or false`},
		{"epochs: 3\nbatchsize: 64\n", `line 2: "batchsize" is not a setting gpuwizard knows (did you mean "batch"?)`},
		{"epocs: 3\n", `line 1: "epocs" is not a setting gpuwizard knows (the settings are batch, data, device, epochs,`},
		{"model: {kind: cnn}\n", `line 1 (model): must be text, not a group of settings`},
		{"- epochs: 3\n", `line 1: the file must hold settings, one "name: value" a line like "epochs: 10", not a list`},
		{"epochs: [3\n", `line 1 (epochs): the file is not valid YAML here (did not find expected ',' or ']')`},
		{"epochs: 3\n  lr: 2\n", `line 2 (lr): the file is not valid YAML here (mapping values are not allowed in this context)`},
		{"\tepochs: 1\n", `run.yaml: the file is not valid YAML (found character that cannot start any token); settings are written one a line`},
	} {
		_, err := ParseConfig("run.yaml", []byte(c.yaml), Defaults())
		var ce *ConfigError
		if !errors.As(err, &ce) || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s", c.yaml, err, c.want)
		}
		if strings.Contains(err.Error(), "unmarshal") || strings.Contains(err.Error(), "!!") || strings.Contains(err.Error(), "trainer.Config") {
			t.Errorf("%q: the decoder's words leak: %v", c.yaml, err)
		}
	}
	// A file that cannot be read is named by the reader's message.
	_, err := LoadConfigFile(filepath.Join(t.TempDir(), "none.yaml"), Defaults())
	if !errors.Is(err, ErrConfig) || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "none.yaml") {
		t.Errorf("missing file: %v", err)
	}
}
