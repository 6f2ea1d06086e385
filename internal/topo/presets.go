package topo

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

//go:embed presets/*.yaml
var presetFS embed.FS

// PresetNames returns the names of the built-in worlds, sorted.
func PresetNames() []string {
	entries, err := fs.ReadDir(presetFS, "presets")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok && !e.IsDir() {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Preset returns a freshly parsed and validated copy of the named built-in
// world; callers may modify it.
func Preset(name string) (*World, error) {
	data, err := presetFS.ReadFile(path.Join("presets", name+".yaml"))
	if err != nil || strings.ContainsAny(name, `/\`) || name == "" {
		return nil, fmt.Errorf("unknown world preset %q (valid: %s)", name, strings.Join(PresetNames(), ", "))
	}
	w, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("preset %s: %w", name, err)
	}
	return w, nil
}

// IsPreset reports whether name is a built-in world.
func IsPreset(name string) bool {
	for _, n := range PresetNames() {
		if n == name {
			return true
		}
	}
	return false
}

// Resolve returns the built-in world of that name, or else loads the YAML
// file at that path.
func Resolve(nameOrPath string) (*World, error) {
	if IsPreset(nameOrPath) {
		return Preset(nameOrPath)
	}
	if _, err := os.Stat(nameOrPath); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("unknown world %q: not a preset (valid: %s) and no such file", nameOrPath, strings.Join(PresetNames(), ", "))
		}
		return nil, fmt.Errorf("world %q: %w", nameOrPath, err)
	}
	return Load(nameOrPath)
}
