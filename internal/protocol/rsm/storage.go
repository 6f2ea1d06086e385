package rsm

import (
	"encoding/binary"
	"fmt"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/lightcone/lightcone/internal/store"
)

// The group's durable state lives in the node's Env store under
// Config.StorePrefix:
//
//	<prefix>hs           the raft HardState (term, vote, commit), protobuf
//	<prefix>last         the index of the log's last entry, uvarint
//	<prefix>e/<index>    one log entry, protobuf; <index> is 16 hex digits
//
// Entries above last are garbage left by a truncation (raft replaced a
// suffix with a shorter one) and are never read. A handler's writes go in
// the order entries, last, hard state: a crash that keeps a prefix of
// unsynced writes (store.Mem.CrashTorn) never leaves a commit index beyond
// the entries or a last index without its entries. Nothing written in a
// handler is relied on by another node before it is synced: the runtime
// syncs the store before the handler's messages leave (persist before
// send, raft's Ready contract).
//
// The log starts after a bootstrap snapshot at index 1, term 1 with the
// configured members as voters, which every member derives from Config
// rather than storing: all members start from the same state.

// bootIndex and bootTerm are the bootstrap snapshot's position.
const bootIndex, bootTerm = 1, 1

func (g *Group) key(suffix string) string { return g.cfg.StorePrefix + suffix }

func (g *Group) entryKey(i uint64) string {
	return g.cfg.StorePrefix + fmt.Sprintf("e/%016x", i)
}

var marshal = proto.MarshalOptions{Deterministic: true}

// load rebuilds the in-memory raft storage from the store.
func (g *Group) load(st store.Store) (*raft.MemoryStorage, error) {
	ms := raft.NewMemoryStorage()
	voters := make([]uint64, len(g.cfg.Members))
	for i, m := range g.cfg.Members {
		voters[i] = raftID(m)
	}
	boot := &pb.Snapshot{Metadata: &pb.SnapshotMetadata{
		ConfState: &pb.ConfState{Voters: voters},
		Index:     new(uint64(bootIndex)),
		Term:      new(uint64(bootTerm)),
	}}
	if err := ms.ApplySnapshot(boot); err != nil {
		return nil, fmt.Errorf("rsm: bootstrap: %w", err)
	}
	last := uint64(bootIndex)
	if rec, ok, err := st.Get(g.key("last")); err != nil {
		return nil, err
	} else if ok {
		v, n := binary.Uvarint(rec.Value)
		if n <= 0 || v < bootIndex {
			return nil, fmt.Errorf("rsm: %s: bad last index", g.key("last"))
		}
		last = v
	}
	ents := make([]*pb.Entry, 0, last-bootIndex)
	for i := uint64(bootIndex + 1); i <= last; i++ {
		rec, ok, err := st.Get(g.entryKey(i))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("rsm: %s: entry %d of %d missing", g.cfg.Group, i, last)
		}
		e := new(pb.Entry)
		if err := proto.Unmarshal(rec.Value, e); err != nil {
			return nil, fmt.Errorf("rsm: %s: entry %d: %w", g.cfg.Group, i, err)
		}
		if e.GetIndex() != i {
			return nil, fmt.Errorf("rsm: %s: entry %d stored under %d", g.cfg.Group, e.GetIndex(), i)
		}
		ents = append(ents, e)
	}
	if err := ms.Append(ents); err != nil {
		return nil, fmt.Errorf("rsm: %s: %w", g.cfg.Group, err)
	}
	if rec, ok, err := st.Get(g.key("hs")); err != nil {
		return nil, err
	} else if ok {
		hs := new(pb.HardState)
		if err := proto.Unmarshal(rec.Value, hs); err != nil {
			return nil, fmt.Errorf("rsm: %s: hard state: %w", g.cfg.Group, err)
		}
		if hs.GetCommit() > last {
			return nil, fmt.Errorf("rsm: %s: commit %d beyond last entry %d", g.cfg.Group, hs.GetCommit(), last)
		}
		if err := ms.SetHardState(hs); err != nil {
			return nil, err
		}
	}
	return ms, nil
}

// save writes a Ready's entries and hard state to the store (in the order
// the comment above explains) and then to the in-memory raft storage.
func (g *Group) save(st store.Store, hs *pb.HardState, ents []*pb.Entry) error {
	if len(ents) > 0 {
		for _, e := range ents {
			b, err := marshal.Marshal(e)
			if err != nil {
				return err
			}
			if err := st.Put(g.entryKey(e.GetIndex()), store.Record{Value: b}); err != nil {
				return err
			}
		}
		last := ents[len(ents)-1].GetIndex()
		if err := st.Put(g.key("last"), store.Record{Value: binary.AppendUvarint(nil, last)}); err != nil {
			return err
		}
		if err := g.ms.Append(ents); err != nil {
			return err
		}
	}
	if !raft.IsEmptyHardState(hs) && !g.skipHardState {
		b, err := marshal.Marshal(hs)
		if err != nil {
			return err
		}
		if err := st.Put(g.key("hs"), store.Record{Value: b}); err != nil {
			return err
		}
	}
	if !raft.IsEmptyHardState(hs) {
		return g.ms.SetHardState(hs)
	}
	return nil
}
