package resp

import (
	"fmt"
	"strconv"
	"strings"
)

// ByteSize is a size in bytes that reads as Redis writes sizes in its
// config: a number with an optional unit, "k"/"m"/"g" (powers of 1000) or
// "kb"/"mb"/"gb" (powers of 1024), case-insensitive. It is a pflag.Value
// and an encoding.TextUnmarshaler (YAML).
type ByteSize int64

var sizeUnits = []struct {
	suffix string
	mult   int64
}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"b", 1}}

// ParseByteSize parses s as a ByteSize.
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSuffix(t, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<63-1)/mult {
		return 0, fmt.Errorf("invalid size %q: want bytes, optionally with a unit (kb, mb, gb)", s)
	}
	return ByteSize(n * mult), nil
}

// String writes the size in the largest binary unit that divides it.
func (b ByteSize) String() string {
	for _, u := range sizeUnits[:3] {
		if b != 0 && int64(b)%(u.mult*1024) != 0 && int64(b)%u.mult == 0 {
			return strconv.FormatInt(int64(b)/u.mult, 10) + u.suffix
		}
	}
	if b != 0 && int64(b)%(1<<30) == 0 {
		return strconv.FormatInt(int64(b)>>30, 10) + "gb"
	}
	return strconv.FormatInt(int64(b), 10)
}

// Set implements pflag.Value.
func (b *ByteSize) Set(s string) error {
	v, err := ParseByteSize(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// Type implements pflag.Value.
func (b *ByteSize) Type() string { return "size" }

// UnmarshalText implements encoding.TextUnmarshaler.
func (b *ByteSize) UnmarshalText(text []byte) error { return b.Set(string(text)) }
