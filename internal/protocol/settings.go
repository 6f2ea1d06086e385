package protocol

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/yamlfile"
)

// Spec is a keyspace's protocol and settings as a configuration states
// them: typed settings from code, a YAML mapping from a file, and
// name=value overrides from flags, applied in that order.
type Spec struct {
	// Protocol is the protocol's name; "" is the protocol of Settings if
	// set, else the default protocol.
	Protocol string
	// Settings, if set, is a pointer to the protocol's settings struct (as
	// its NewSettings returns) to start from.
	Settings any
	// YAML, if set, is a mapping of settings decoded over Settings.
	YAML *yaml.Node
	// Set are "name=value" overrides (value in YAML syntax), applied last.
	Set []string
}

// Resolve picks the protocol and decodes the settings strictly: a setting
// the protocol does not have is an error naming it and listing the valid
// ones.
func (s Spec) Resolve() (*Definition, any, error) {
	var d *Definition
	var err error
	if s.Protocol == "" && s.Settings != nil {
		d, err = Of(s.Settings)
	} else {
		d, err = Lookup(s.Protocol)
	}
	if err != nil {
		return nil, nil, err
	}
	settings := d.NewSettings()
	if s.Settings != nil {
		if reflect.TypeOf(s.Settings) != reflect.TypeOf(settings) {
			return nil, nil, fmt.Errorf("protocol %s: settings of type %T given; want %T", d.Name, s.Settings, settings)
		}
		// Copy, so building never changes the caller's settings.
		reflect.ValueOf(settings).Elem().Set(reflect.ValueOf(s.Settings).Elem())
	}
	if s.YAML != nil && s.YAML.Kind != 0 {
		if err := Decode(d, settings, s.YAML); err != nil {
			return nil, nil, err
		}
	}
	for _, kv := range s.Set {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, nil, fmt.Errorf("setting %q: want name=value", kv)
		}
		var n yaml.Node
		doc := strings.TrimSpace(name) + ": " + val
		if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
			return nil, nil, fmt.Errorf("setting %q: %w", kv, err)
		}
		if err := Decode(d, settings, &n); err != nil {
			// A flag's setting has no line: drop the one its little
			// document gave.
			if ye := (*yamlfile.Error)(nil); errors.As(err, &ye) {
				return nil, nil, errors.New(ye.Msg)
			}
			return nil, nil, err
		}
	}
	return d, settings, nil
}

// Build resolves s and builds its keyspace on t.
func (s Spec) Build(t *topo.Topology) (*Definition, Keyspace, error) {
	d, settings, err := s.Resolve()
	if err != nil {
		return nil, nil, err
	}
	ks, err := d.Build(t, settings)
	if err != nil {
		return nil, nil, err
	}
	return d, ks, nil
}

// Decode decodes a YAML mapping of settings into settings (a pointer to d's
// settings struct), strictly.
func Decode(d *Definition, settings any, n *yaml.Node) error {
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = n.Content[0]
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return &yamlfile.Error{Line: n.Line, Msg: fmt.Sprintf("protocol %s: settings must be a mapping of name: value", d.Name)}
	}
	names, err := settingNames(settings)
	if err != nil {
		return err
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if !slices.Contains(names, k) {
			return &yamlfile.Error{Line: n.Content[i].Line, Msg: fmt.Sprintf("protocol %s has no setting %q (valid: %s)", d.Name, k, strings.Join(names, ", "))}
		}
	}
	// Strict decoding catches what the check above cannot (a field of a
	// nested struct, a value of the wrong type), at the value's line.
	return yamlfile.DecodeNode(n, settings, "protocol "+d.Name+" settings")
}

// SettingNames lists the settings of protocol d, sorted.
func SettingNames(d *Definition) []string {
	names, _ := settingNames(d.NewSettings())
	return names
}

// settingNames are the YAML names of a settings struct's fields (inline
// structs included), sorted. Every exported field must have a name or be
// tagged "-".
func settingNames(settings any) ([]string, error) {
	t := reflect.TypeOf(settings)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("settings must be a pointer to a struct, not %T", settings)
	}
	var names []string
	var walk func(t reflect.Type) error
	walk = func(t reflect.Type) error {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("yaml")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" {
				continue
			}
			if opts == "inline" {
				if err := walk(f.Type); err != nil {
					return err
				}
				continue
			}
			if name == "" {
				return fmt.Errorf("settings field %s.%s has no yaml name", t.Name(), f.Name)
			}
			names = append(names, name)
		}
		return nil
	}
	if err := walk(t.Elem()); err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// EncodeNonZero is settings (a pointer to a settings struct) as a YAML
// mapping of its non-zero fields, which decodes back to the same settings.
func EncodeNonZero(settings any) (*yaml.Node, error) {
	v := reflect.ValueOf(settings)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("settings must be a pointer to a struct, not %T", settings)
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	var walk func(v reflect.Value) error
	walk = func(v reflect.Value) error {
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if opts == "inline" {
				if err := walk(v.Field(i)); err != nil {
					return err
				}
				continue
			}
			if v.Field(i).IsZero() {
				continue
			}
			var n yaml.Node
			if err := n.Encode(v.Field(i).Interface()); err != nil {
				return fmt.Errorf("setting %s: %w", name, err)
			}
			out.Content = append(out.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name}, &n)
		}
		return nil
	}
	if err := walk(v.Elem()); err != nil {
		return nil, err
	}
	return out, nil
}
