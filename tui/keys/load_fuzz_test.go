package keys

import (
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// FuzzParse loads arbitrary bytes as keys.yaml.
//
// Invariants: nothing panics; a refusal names what is wrong (the YAML, the
// unknown binding, or the binding or key at fault); a file that loads gives
// a key map with no key bound twice, in which every binding the file names
// has exactly the file's keys (disabled when the list is empty), and that
// written back as a keys.yaml loads to the same key map.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "keys: {}", "keys:\n  up: [k, up]\n  sort-status: [\"ctrl+s\"]\n  refresh: []\nactions:\n  delete: [\"ctrl+d\"]\n",
		"keys:\n  help: F1\n", "keys:\n  up: [j]\n", "keys:\n  nope: [x]\n", "keys:\n  up: [' k']\n", "keys:\n  up: ['']\n",
		"keys:\n  up:\n", "keys:\n  up: {a: b}\n", "actions:\n  scale: []\n", "actions:\n  scale: [\"\\t\"]\n",
		"unknown: 1\n", "keys: [up]\n", "keys:\n  up: [k]\n  up: [j]\n", "{\"keys\":{\"quit\":[\"q\"]}}", "\t", "keys:\n  quit: [\"ctrl+c\", \"ctrl+c\"]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		km, err := Parse(data)
		if err != nil {
			if !namesCause(err.Error()) {
				t.Fatalf("Parse(%q) refused without naming the cause: %q", data, err)
			}
			return
		}
		if err := km.Check(); err != nil {
			t.Fatalf("Parse(%q) accepted a key map that fails Check: %v", data, err)
		}
		var file File
		if err := yaml.Unmarshal(data, &file); err != nil {
			t.Fatalf("Parse accepted %q but it does not unmarshal: %v", data, err)
		}
		for _, n := range km.All() {
			ks, named := file.Keys[n.Name]
			if !named {
				continue
			}
			if len(ks) == 0 {
				if n.Binding.Enabled() {
					t.Fatalf("%s: the file unbinds it, the key map has %q", n.Name, n.Binding.Keys())
				}
			} else if !slices.Equal(n.Binding.Keys(), ks) {
				t.Fatalf("%s: the file binds %q, the key map %q", n.Name, ks, n.Binding.Keys())
			}
		}
		// Write the rebound part of the key map back as a keys.yaml and load
		// it again.
		back := File{Keys: map[string]KeyList{}, Actions: map[string]KeyList{}}
		for _, n := range km.All() {
			if _, named := file.Keys[n.Name]; !named {
				continue
			}
			ks := KeyList{}
			if n.Binding.Enabled() {
				ks = n.Binding.Keys()
			}
			back.Keys[n.Name] = ks
		}
		for a, ks := range km.actions {
			back.Actions[a] = append(KeyList{}, ks...)
		}
		out, err := yaml.Marshal(back)
		if err != nil {
			t.Fatal(err)
		}
		km2, err := Parse(out)
		if err != nil {
			t.Fatalf("the key map of %q, written back as\n%s\ndoes not load: %v", data, out, err)
		}
		a, b := km.All(), km2.All()
		for i := range a {
			if a[i].Binding.Enabled() != b[i].Binding.Enabled() || !slices.Equal(a[i].Binding.Keys(), b[i].Binding.Keys()) ||
				a[i].Binding.Help() != b[i].Binding.Help() {
				t.Fatalf("%s: %q (help %v) became %q (help %v) after writing back", a[i].Name,
					a[i].Binding.Keys(), a[i].Binding.Help(), b[i].Binding.Keys(), b[i].Binding.Help())
			}
		}
		if len(km.actions) != len(km2.actions) {
			t.Fatalf("actions %v became %v", km.actions, km2.actions)
		}
		for n, ks := range km.actions {
			if !slices.Equal(ks, km2.actions[n]) {
				t.Fatalf("action %s: %q became %q", n, ks, km2.actions[n])
			}
		}
	})
}

// namesCause reports whether a Parse error says what is wrong: the YAML,
// an unknown binding, a binding's or action's key, or a key bound twice.
func namesCause(msg string) bool {
	if strings.HasPrefix(msg, "invalid YAML: ") || strings.HasPrefix(msg, "unknown binding ") || strings.HasPrefix(msg, "key ") ||
		strings.HasPrefix(msg, "action ") {
		return true
	}
	for _, n := range Default().All() {
		if strings.HasPrefix(msg, n.Name+": ") {
			return true
		}
	}
	return false
}
