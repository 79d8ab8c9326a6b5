package tui

import (
	"fmt"
	"strings"
)

// StartViewByName resolves a view name as the `:` prompt accepts it (a
// kind's alias: "pods", "po", "rc", "rayclusters", …; case-insensitive) to
// the list view it opens, for Options.StartView (raydar -c VIEW). An
// unknown name is an error that lists the names there are.
func StartViewByName(name string) (ViewKind, error) {
	r := kinds()
	if k, ok := r.ByAlias(strings.ToLower(strings.TrimSpace(name))); ok {
		return k.List, nil
	}
	return "", fmt.Errorf("unknown view %q: one of %s", name, strings.Join(r.Aliases(), ", "))
}
