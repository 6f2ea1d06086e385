package scenario

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/protocol"
	_ "github.com/lightcone/lightcone/internal/protocol/all" // every protocol, from the registry
	"github.com/lightcone/lightcone/internal/topo"
)

// Spec is the config's keyspace protocol and settings: typed, then the
// YAML mapping, then Set.
func (c Config) Spec() protocol.Spec {
	s := protocol.Spec{Protocol: c.Protocol, Settings: c.Settings, Set: c.Set}
	if c.SettingsYAML.Kind != 0 {
		s.YAML = &c.SettingsYAML
	}
	return s
}

// newProtocol builds the config's keyspace from the registry.
func newProtocol(c Config, t *topo.Topology) (*protocol.Definition, protocol.Keyspace, error) {
	return c.Spec().Build(t)
}

// Protocols lists the protocols `lightcone sim` runs: every registered one,
// the default first.
func Protocols() []string { return protocol.Names() }

// Use switches c to a protocol with the given name=value settings, dropping
// the settings it had (they were another protocol's).
func (c *Config) Use(protocol string, kv ...string) {
	c.Protocol, c.Settings, c.SettingsYAML, c.Set = protocol, nil, yaml.Node{}, nil
	c.With(kv...)
}

// With appends name=value settings to c.Set (never into a slice another
// config shares).
func (c *Config) With(kv ...string) { c.Set = append(slices.Clip(c.Set), kv...) }

// WithIfHas appends each name=value setting that the config's protocol
// has, and skips the others (a sweep over a setting only some series'
// protocols have).
func (c *Config) WithIfHas(kv ...string) {
	for _, s := range kv {
		name, _, _ := strings.Cut(s, "=")
		if c.HasSetting(strings.TrimSpace(name)) {
			c.With(s)
		}
	}
}

// HasSetting reports whether the config's protocol has a setting name.
func (c Config) HasSetting(name string) bool {
	d, _, err := c.Spec().Resolve()
	return err == nil && slices.Contains(protocol.SettingNames(d), name)
}
