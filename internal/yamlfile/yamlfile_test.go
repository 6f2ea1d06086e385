package yamlfile

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

type inner struct {
	Loss  float64 `yaml:"loss"`
	Delay time.Duration
}

type base struct {
	Name string `yaml:"name"`
}

type custom struct{ v string }

func (c *custom) UnmarshalYAML(n *yaml.Node) error {
	if n.Value == "bad" {
		return fmt.Errorf("line %d: custom: %q refused", n.Line, n.Value)
	}
	c.v = n.Value
	return nil
}

type doc struct {
	base     `yaml:",inline"`
	Seed     uint64            `yaml:"seed"`
	Protocol string            `yaml:"protocol"`
	Net      inner             `yaml:"net"`
	Faults   []inner           `yaml:"faults"`
	Nodes    map[string]*inner `yaml:"nodes"`
	Later    yaml.Node         `yaml:"later"`
	Custom   custom            `yaml:"custom"`
	Hidden   int               `yaml:"-"`
}

// TestDecodeErrors: every error names the file, the line of the mistake
// and the field; an unknown field lists the valid ones.
func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"seed: 1\nprotcol: quorum\n", `lc.yaml:2: unknown field "protcol" in scenario (did you mean "protocol"?); valid fields: name, seed, protocol, net, faults, nodes, later, custom`},
		{"net:\n  loss: 0.1\n  los: 2\n", `lc.yaml:3: unknown field "los" in net (did you mean "loss"?); valid fields: loss, delay`},
		{"faults:\n  - {loss: 1}\n  - {zzz: 1}\n", `lc.yaml:3: unknown field "zzz" in faults[1]; valid fields: loss, delay`},
		{"nodes:\n  a: {loss: x}\n", `lc.yaml:2: nodes.a.loss: "x" is not a number`},
		{"seed: 2.5\n", `lc.yaml:1: seed: "2.5" is not an integer`},
		{"seed: 1\nseed: 2\n", `lc.yaml:2: seed: given twice (first on line 1)`},
		{"net: 3\n", `lc.yaml:1: net: expected a mapping with fields loss, delay, got "3"`},
		{"faults: {a: 1}\n", `lc.yaml:1: faults: expected a list, got a mapping`},
		{"net: {delay: forever}\n", `lc.yaml:1: net.delay: cannot unmarshal !!str ` + "`forever`" + ` into time.Duration`},
		{"name: x\n\ncustom: bad\n", `lc.yaml:3: custom: custom: "bad" refused`},
		// yaml.v3 says line 1 for these: where the enclosing construct began.
		{"protocol: quorum\nseed: [1\nname: x\n", `lc.yaml:2: syntax error: did not find expected ',' or ']'`},
		{"protocol: quorum\nnet:\n  loss: 0.1\n los: 2\n", `lc.yaml:4: syntax error: did not find expected key`},
		{"protocol: quorum\nseed 5\nname: x\n", `lc.yaml:2: syntax error: could not find expected ':'`},
		{"list: [1,\n  2]\nname: x\nbad: : :\n", `lc.yaml:4: syntax error: mapping values are not allowed in this context`},
	} {
		var d doc
		err := Decode("lc.yaml", []byte(tc.yaml), &d, "scenario")
		if err == nil || err.Error() != tc.want {
			t.Errorf("Decode(%q) = %v;\nwant %s", tc.yaml, err, tc.want)
		}
	}
	var d doc
	good := "name: n\nseed: 3\nnet: {loss: 0.5, delay: 2s}\nfaults: [{loss: 1}]\nnodes: {a: {loss: 1}}\nlater: {anything: [1]}\ncustom: ok\n"
	if err := Decode("lc.yaml", []byte(good), &d, "scenario"); err != nil {
		t.Fatalf("Decode(good) = %v", err)
	}
	if d.Name != "n" || d.Seed != 3 || d.Net.Delay != 2*time.Second || d.Nodes["a"].Loss != 1 || d.Custom.v != "ok" || d.Later.Kind != yaml.MappingNode {
		t.Errorf("Decode(good) = %+v", d)
	}
	if err := Decode("empty.yaml", nil, &d, "scenario"); err != nil {
		t.Errorf("Decode(empty) = %v; want nil", err)
	}
}

// TestInFile: a located error found after decoding (a wrapped one) gets
// the file and keeps its context after the location.
func TestInFile(t *testing.T) {
	err := fmt.Errorf("workload: %w", &Error{Line: 7, Msg: `unknown field "x" in workload`})
	got := InFile("lc.yaml", err)
	if want := `lc.yaml:7: workload: unknown field "x" in workload`; got.Error() != want {
		t.Errorf("InFile = %q; want %q", got, want)
	}
	var ye *Error
	if !errors.As(got, &ye) || ye.Line != 7 || ye.File != "lc.yaml" {
		t.Errorf("InFile = %#v; want an *Error at lc.yaml:7", got)
	}
	if got := InFile("lc.yaml", errors.New("world: mars")); got.Error() != "lc.yaml: world: mars" {
		t.Errorf("InFile(plain) = %q", got)
	}
	if InFile("lc.yaml", nil) != nil {
		t.Error("InFile(nil) != nil")
	}
	if !strings.Contains((&Error{Msg: "m"}).Error(), "m") {
		t.Error("Error without a location lost its message")
	}
}
