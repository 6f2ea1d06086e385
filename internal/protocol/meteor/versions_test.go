package meteor

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/lightcone/lightcone/internal/env"
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

// storeEnv is an Env with a store and nothing else (storeInsert uses no
// more).
type storeEnv struct {
	env.Env
	s *store.Mem
}

func (e storeEnv) Store() store.Store { return e.s }

// TestStoreInsertInPlace: storeInsert appends the newest link to the
// cached chain in place, and yet a chain as an earlier readChain returned it
// keeps its links, and one that is no longer the cached chain is copied,
// not grown over the cached one's links; the stored bytes always decode to
// the chain returned.
func TestStoreInsertInPlace(t *testing.T) {
	e := storeEnv{s: store.NewMem()}
	r := &Replica{}
	ki := &keyInfo{stored: chainKey("k")}
	mk := func(n int) link {
		return link{Record: store.Record{Version: wire.Version{TS: hlc.Timestamp{WallNanos: int64(1000 + n)}}, Value: []byte(fmt.Sprintf("v%d", n))}, Applied: true}
	}
	check := func(what string, got []link) {
		t.Helper()
		rec, _, _ := e.s.Get(ki.stored)
		dec, err := decodeChain("k", rec.Value)
		if err != nil || len(dec) != len(got) {
			t.Fatalf("%s: stored chain decodes to %d links (err %v); want %d", what, len(dec), err, len(got))
		}
		for i := range dec {
			if dec[i].Version != got[i].Version || !bytes.Equal(dec[i].Value, got[i].Value) {
				t.Fatalf("%s: stored link %d is %v; the chain returned has %v", what, i, dec[i].Version, got[i].Version)
			}
		}
	}
	type held struct{ chain, want []link }
	var holds []held
	for n := range 40 {
		chain, err := r.readChain(e.s, "k", ki)
		if err != nil {
			t.Fatal(err)
		}
		holds = append(holds, held{chain, slices.Clone(chain)})
		next, err := r.storeInsert(e, ki, chain, mk(n))
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("insert %d", n), next)
	}
	cur, _ := r.readChain(e.s, "k", ki)
	curWant := slices.Clone(cur)
	// A stale chain (not the cached one, though it shares its array) gets
	// a link: copied, or it would overwrite the cached chain's links.
	stale := cur[:len(cur)-5]
	next, err := r.storeInsert(e, ki, stale, mk(100))
	if err != nil {
		t.Fatal(err)
	}
	check("insert into a stale chain", next)
	holds = append(holds, held{cur, curWant})
	for i, h := range holds {
		for j := range h.want {
			if h.chain[j].Version != h.want[j].Version || !bytes.Equal(h.chain[j].Value, h.want[j].Value) {
				t.Fatalf("chain held before insert %d: link %d became %v; was %v", i, j, h.chain[j].Version, h.want[j].Version)
			}
		}
	}
}

// TestSearch checks search, which looks at the newest versions first,
// against slices.BinarySearchFunc, over sorted lists of every length up to
// a few past nearEnd and versions before, among, between and after them.
func TestSearch(t *testing.T) {
	for n := range 3 * nearEnd {
		var vs []wire.Version
		for i := range n {
			vs = append(vs, wire.Version{TS: hlc.Timestamp{WallNanos: int64(10 * (i + 1))}, Node: wire.NodeID(i % 2)})
		}
		for wall := int64(0); wall <= int64(10*(n+1)); wall += 5 {
			for node := range wire.NodeID(3) {
				v := wire.Version{TS: hlc.Timestamp{WallNanos: wall}, Node: node}
				wantI, wantOK := slices.BinarySearchFunc(vs, v, wire.Version.Compare)
				if i, ok := search(vs, v, itself); i != wantI || ok != wantOK {
					t.Fatalf("search(%d versions, %v) = %d, %v; want %d, %v", n, v, i, ok, wantI, wantOK)
				}
			}
		}
	}
}

// TestStoreSuffix: storing the newest links of a stored chain from its
// stored bytes gives the bytes of those links encoded whole, for every
// number of links dropped, and keeps them as the cached chain.
func TestStoreSuffix(t *testing.T) {
	for k := 1; k <= 12; k++ {
		e := storeEnv{s: store.NewMem()}
		r := &Replica{}
		ki := &keyInfo{stored: chainKey("k")}
		for n := range 12 {
			chain, err := r.readChain(e.s, "k", ki)
			if err != nil {
				t.Fatal(err)
			}
			l := link{Record: store.Record{Version: wire.Version{TS: hlc.Timestamp{WallNanos: int64(1_800_000_000_000_000_000 + n*1000)}, Node: wire.NodeID(n % 3)},
				Value: []byte(fmt.Sprintf("value-%d", n*n)), Tombstone: n%5 == 0}, Applied: n%2 == 0}
			if _, err := r.storeInsert(e, ki, chain, l); err != nil {
				t.Fatal(err)
			}
		}
		chain, err := r.readChain(e.s, "k", ki)
		if err != nil {
			t.Fatal(err)
		}
		kept := slices.Clone(chain[k:])
		if err := r.storeSuffix(e, ki, chain, kept); err != nil {
			t.Fatal(err)
		}
		got, _, _ := e.s.Get(ki.stored)
		want := encodeChain(kept)
		if !bytes.Equal(got.Value, want.Value) || got.Version != want.Version {
			t.Fatalf("dropping %d of %d links: stored %x (version %v); want %x (version %v)", k, len(chain), got.Value, got.Version, want.Value, want.Version)
		}
		if len(ki.chain) != len(kept) || (len(kept) > 0 && &ki.chain[0] != &kept[0]) {
			t.Fatalf("dropping %d links: the cached chain is not the one kept", k)
		}
	}
}
