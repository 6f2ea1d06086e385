package dirgroup_test

import (
	"maps"
	"testing"

	"github.com/lightcone/lightcone/internal/protocol/dirgroup"
	"github.com/lightcone/lightcone/internal/wire"
)

// TestRowsRoundTrip: DecodeRows gives back what EncodeRows encoded, the
// same bytes whatever the map's order, and refuses data cut short or
// with bytes left over.
func TestRowsRoundTrip(t *testing.T) {
	rows := map[string]uint64{"b": 2, "a": 1, "": 0, "c": 1 << 40}
	enc := func(b []byte, v uint64) []byte { return wire.AppendUvarint(b, v) }
	dec := func(d *wire.Decoder) uint64 { return d.Uvarint() }
	data := dirgroup.EncodeRows(rows, enc)
	for range 10 {
		if again := dirgroup.EncodeRows(maps.Clone(rows), enc); string(again) != string(data) {
			t.Fatalf("EncodeRows = %x, then %x", data, again)
		}
	}
	got, err := dirgroup.DecodeRows(data, dec)
	if err != nil || !maps.Equal(got, rows) {
		t.Fatalf("DecodeRows(EncodeRows(%v)) = %v, %v", rows, got, err)
	}
	for _, bad := range [][]byte{data[:len(data)-1], append(data, 0), {0xff, 0xff, 0x03}} {
		if got, err := dirgroup.DecodeRows(bad, dec); err == nil {
			t.Errorf("DecodeRows(%x) = %v; want an error", bad, got)
		}
	}
}
