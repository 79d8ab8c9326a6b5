package keys

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/raydar/raydar/kube"
)

// File is the format of keys.yaml:
//
//	keys:
//	  up: [k, up]
//	  sort-status: ["ctrl+s"]
//	  refresh: []            # unbinds
//	actions:
//	  delete: ["ctrl+d"]     # view actions, by action name
//
// A single key may be written without brackets: `help: F1`.
type File struct {
	Keys    map[string]KeyList `json:"keys,omitempty"`
	Actions map[string]KeyList `json:"actions,omitempty"`
}

// KeyList is a list of key names; in YAML either a list or one string.
type KeyList []string

// UnmarshalJSON accepts a string or a list of strings.
func (l *KeyList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*l = KeyList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		if bytes.Contains(b, []byte("true")) || bytes.Contains(b, []byte("false")) {
			// YAML 1.1 (sigs.k8s.io/yaml) reads a bare y, n, yes, no, on or
			// off as a boolean: the key the user meant is lost by then.
			return fmt.Errorf("want a key name or a list of key names, got %s: YAML reads a bare y, n, yes, no, on or off as true or false, quote the key (\"n\")", b)
		}
		return fmt.Errorf("want a key name or a list of key names, got %s", b)
	}
	*l = many
	return nil
}

// Path returns the key file's path: $XDG_CONFIG_HOME/raydar/keys.yaml, or
// ~/.config/raydar/keys.yaml when XDG_CONFIG_HOME is unset or relative (as the
// XDG base directory spec requires).
func Path() (string, error) {
	return kube.ConfigFile("keys.yaml")
}

// LoadDefault loads the key file at Path(); a missing file yields the
// defaults.
func LoadDefault() (*KeyMap, error) {
	p, err := Path()
	if err != nil {
		return nil, err
	}
	return Load(p)
}

// Load returns the default key map rebound by the file at path. A missing file
// is not an error. Any other problem (unreadable file, bad YAML, unknown
// binding name, empty key name, a key bound twice) is reported with the path.
func Load(path string) (*KeyMap, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	km, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return km, nil
}

// Parse rebinds the default key map from the YAML in data.
func Parse(data []byte) (*KeyMap, error) {
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	km := Default()
	byName := map[string]*Named{}
	all := km.All()
	for i := range all {
		byName[all[i].Name] = &all[i]
	}
	names := make([]string, 0, len(f.Keys))
	for n := range f.Keys {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b, ok := byName[n]
		if !ok {
			valid := make([]string, 0, len(all))
			for _, a := range all {
				valid = append(valid, a.Name)
			}
			return nil, fmt.Errorf("unknown binding %q (valid: %s)", n, strings.Join(valid, ", "))
		}
		if err := checkKeys(n, f.Keys[n]); err != nil {
			return nil, err
		}
		*b.Binding = rebind(*b.Binding, f.Keys[n])
	}
	for n, ks := range f.Actions {
		if err := checkKeys("action "+n, ks); err != nil {
			return nil, err
		}
	}
	km.actions = map[string][]string{}
	for n, ks := range f.Actions {
		km.actions[n] = ks
	}
	if err := km.Check(); err != nil {
		return nil, err
	}
	return km, nil
}

func checkKeys(name string, ks []string) error {
	for _, k := range ks {
		if strings.TrimSpace(k) == "" || k != strings.TrimSpace(k) {
			return fmt.Errorf("%s: invalid key name %q", name, k)
		}
	}
	return nil
}
