package kube

import (
	"fmt"
	"os"
	"path/filepath"
)

// ConfigFile is the path of raydar's config file name (keys.yaml,
// config.yaml): $XDG_CONFIG_HOME/raydar/NAME, or ~/.config/raydar/NAME
// when XDG_CONFIG_HOME is unset or relative (as the XDG base directory
// spec requires).
func ConfigFile(name string) (string, error) {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("locating %s: %w", name, err)
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "raydar", name), nil
}
