package meteor

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// TestAppendLink: a chain stored by appending a link to the stored bytes
// (storeInsert) is byte for byte the chain encoded whole, across the
// lengths where the count's varint grows a byte, and decodes to the same
// links.
func TestAppendLink(t *testing.T) {
	var chain []link
	for n := 0; n < 300; n++ {
		l := link{Record: store.Record{Version: wire.Version{TS: hlc.Timestamp{WallNanos: int64(1000 + n)}, Node: wire.NodeID(n % 3)},
			Value: []byte(fmt.Sprintf("value-%d", n)), Tombstone: n%7 == 0}, Applied: n%2 == 0}
		if n > 0 {
			raw := encodeChain(chain).Value
			got := appendLink(raw, len(chain), l)
			want := encodeChain(append(chain[:len(chain):len(chain)], l))
			if !bytes.Equal(got.Value, want.Value) || got.Version != want.Version {
				t.Fatalf("appendLink to %d links = %x (version %v); want %x (version %v)", len(chain), got.Value, got.Version, want.Value, want.Version)
			}
			dec, err := decodeChain("k", got.Value)
			if err != nil || len(dec) != n+1 || dec[n].Version != l.Version || dec[n].Applied != l.Applied || !bytes.Equal(dec[n].Value, l.Value) {
				t.Fatalf("decoding %d links appended: %d links, last %+v, err %v; want last %+v", n+1, len(dec), dec[len(dec)-1], err, l)
			}
		}
		chain = append(chain, l)
	}
}

// TestDecodeChainRefusesTrailingBytes: storeInsert appends to the stored
// bytes as read, so a chain with bytes after its last link must not decode
// (they would be carried into every later chain).
func TestDecodeChainRefusesTrailingBytes(t *testing.T) {
	l := link{Record: store.Record{Version: wire.Version{TS: hlc.Timestamp{WallNanos: 1000}}, Value: []byte("v")}, Applied: true}
	raw := encodeChain([]link{l}).Value
	if _, err := decodeChain("k", raw); err != nil {
		t.Fatalf("decoding a well-formed chain: %v", err)
	}
	if dec, err := decodeChain("k", append(slices.Clone(raw), 0x7f)); err == nil {
		t.Fatalf("a chain with a trailing byte decoded as %d links; want an error", len(dec))
	}
}
