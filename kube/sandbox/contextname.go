package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
)

// DefaultContextName is the kubeconfig context (and cluster) name of a
// sandbox whose Options name none.
const DefaultContextName = "raydar-sandbox"

// ContextNameFor is the context name `raydar sandbox` gives a sandbox
// without --context-name: DefaultContextName for the default (temporary)
// state directory, and DefaultContextName-<the directory's base name> for a
// given one, so that two sandboxes with their own state directories have
// distinct names when their kubeconfigs are merged (KUBECONFIG=a:b). The
// name may still be invalid (CheckContextName): a base name with a comma or
// a space.
func ContextNameFor(stateDir string) string {
	if stateDir == "" {
		return DefaultContextName
	}
	base := filepath.Base(filepath.Clean(stateDir))
	if base == "." || base == string(filepath.Separator) {
		return DefaultContextName
	}
	return DefaultContextName + "-" + base
}

// CheckContextName says whether name can name a sandbox's context. A
// kubeconfig takes any non-empty name (clientcmd's validateContext); raydar
// also needs to be able to type it in `--context a,b` (a comma separates
// contexts, spaces around a name are trimmed) and in a shell without
// quoting, so a name is letters, digits and - _ . : @ / only.
func CheckContextName(name string) error {
	if name == "" {
		return fmt.Errorf("sandbox: context name: empty")
	}
	if i := strings.IndexFunc(name, func(r rune) bool { return !contextNameRune(r) }); i >= 0 {
		return fmt.Errorf("sandbox: context name %q: %q is not allowed (use letters, digits and - _ . : @ /)", name, name[i:i+1])
	}
	return nil
}

func contextNameRune(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("-_.:@/", r)
}
