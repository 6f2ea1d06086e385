package disk

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/lightcone/lightcone/internal/hlc"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// recordFormat is the on-disk encoding version of a Record. A reader
// refuses formats it does not know instead of misreading them.
const recordFormat = 1

const (
	flagTombstone = 1 << 0
	recordHeader  = 1 + 1 + 8 + 4 + 4 // format, flags, wall, logical, node
)

// ErrCorrupt reports a stored record that cannot be decoded.
var ErrCorrupt = errors.New("disk: corrupt record")

// AppendRecord appends the encoding of r to dst.
func AppendRecord(dst []byte, r store.Record) []byte {
	var flags byte
	if r.Tombstone {
		flags |= flagTombstone
	}
	dst = append(dst, recordFormat, flags)
	dst = binary.BigEndian.AppendUint64(dst, uint64(r.Version.TS.WallNanos))
	dst = binary.BigEndian.AppendUint32(dst, r.Version.TS.Logical)
	dst = binary.BigEndian.AppendUint32(dst, uint32(r.Version.Node))
	return append(dst, r.Value...)
}

// DecodeRecord decodes a record; the value is copied out of b.
func DecodeRecord(b []byte) (store.Record, error) {
	if len(b) < recordHeader {
		return store.Record{}, fmt.Errorf("%w: %d bytes, want at least %d", ErrCorrupt, len(b), recordHeader)
	}
	if b[0] != recordFormat {
		return store.Record{}, fmt.Errorf("%w: format %d, this build reads format %d", ErrCorrupt, b[0], recordFormat)
	}
	r := store.Record{
		Tombstone: b[1]&flagTombstone != 0,
		Version: wire.Version{
			TS: hlc.Timestamp{
				WallNanos: int64(binary.BigEndian.Uint64(b[2:])),
				Logical:   binary.BigEndian.Uint32(b[10:]),
			},
			Node: wire.NodeID(binary.BigEndian.Uint32(b[14:])),
		},
	}
	if len(b) > recordHeader {
		v := append([]byte(nil), b[recordHeader:]...)
		r.Value = v[:len(v):len(v)] // shared via the row cache: no spare capacity to append into
	}
	return r, nil
}
