package resp

import "testing"

func TestParseByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ByteSize
		str  string
	}{
		{"0", 0, "0"},
		{"1000", 1000, "1000"},
		{"64kb", 64 << 10, "64kb"},
		{"128MB", 128 << 20, "128mb"},
		{"1gb", 1 << 30, "1gb"},
		{"3g", 3e9, "3000000000"},
		{"2m", 2e6, "2000000"},
		{"1536mb", 1536 << 20, "1536mb"},
	} {
		got, err := ParseByteSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
		if got.String() != tc.str {
			t.Errorf("ByteSize(%d).String() = %q; want %q", got, got.String(), tc.str)
		}
	}
	for _, bad := range []string{"", "mb", "-1", "1.5gb", "1tb", "9999999999gb"} {
		if got, err := ParseByteSize(bad); err == nil {
			t.Errorf("ParseByteSize(%q) = %d; want an error", bad, got)
		}
	}
}
