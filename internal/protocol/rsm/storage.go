package rsm

import (
	"encoding/binary"
	"fmt"
	"slices"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// The group's durable state lives in the node's Env store under
// Config.StorePrefix:
//
//	<prefix>snap         the latest snapshot (absent until the first):
//	                     uvarint top, bool installed, then the snapshot
//	                     (raftpb.Snapshot: index, term, conf state and the
//	                     state machine's Snapshot), protobuf
//	<prefix>hs           the raft HardState (term, vote, commit), protobuf
//	<prefix>last         the index of the log's last entry, then the
//	                     snapshot's index when it was written, uvarints
//	<prefix>e/<index>    one log entry, protobuf; <index> is 16 hex digits
//
// The log is the entries after the snapshot up to last. Entries above last
// are garbage left by a truncation (raft replaced a suffix with a shorter
// one) and are never read; entries at or below the snapshot's index are
// deleted (a tombstone: Store has no delete) once the snapshot is stored.
// Nothing written in a handler is relied on by another node before it is
// synced: the runtime syncs the store before the handler's messages leave
// (persist before send, raft's Ready contract). A crash may keep any
// prefix of the writes not yet synced (store.Mem.CrashTorn), so each kind
// of change writes its keys in an order whose every prefix loads as a
// consistent state:
//
//   - Appending: the entries, then last, then the hard state. No commit
//     index beyond the entries, no last index without its entries.
//   - Taking a snapshot (compaction): the snapshot, then a tombstone for
//     each entry it covers, in index order. Entries are deleted only once
//     the snapshot that replaces them is stored.
//   - Installing a leader's snapshot (installed set): the snapshot, then
//     last set to its index (raft discards a log that does not hold the
//     snapshot's last entry: the log after it is empty), then tombstones
//     for the old log and the garbage above it, in index order. A last
//     written before the snapshot (its snapshot index is older) is the
//     old log's: the log ends at the snapshot.
//
// Deletions go in index order, so a crash in the middle leaves a run of
// covered entries ending at the highest one deleted, top (the snapshot's
// index, or the old log's end if that is lower): load deletes that run.
//
// Without a stored snapshot the log starts after a bootstrap snapshot at
// index 1, term 1 with the configured members as voters, which every
// member derives from Config rather than storing: all members start from
// the same state.

// bootIndex and bootTerm are the bootstrap snapshot's position.
const bootIndex, bootTerm = 1, 1

func (g *Group) key(suffix string) string { return g.cfg.StorePrefix + suffix }

func (g *Group) entryKey(i uint64) string {
	return g.cfg.StorePrefix + fmt.Sprintf("e/%016x", i)
}

var marshal = proto.MarshalOptions{Deterministic: true}

// corrupt is a load error no store fault explains: the stored state
// contradicts the order in which the group writes it, a broken invariant.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{env.ErrInvariant}, args...)...)
}

// confState is the group's fixed membership as raft's ConfState.
func (g *Group) confState() *pb.ConfState {
	voters := make([]uint64, len(g.cfg.Members))
	for i, m := range g.cfg.Members {
		voters[i] = raftID(m)
	}
	return &pb.ConfState{Voters: voters}
}

// storedSnap is the <prefix>snap record.
type storedSnap struct {
	snap      *pb.Snapshot
	top       uint64 // the highest entry its deletions cover
	installed bool   // received from a leader: it replaced the log
}

// load rebuilds the in-memory raft storage from the store. It returns the
// stored snapshot the log starts after, or nil (the bootstrap snapshot),
// and the highest index whose entry key may hold an entry (g.hi). It may
// write: it finishes the deletions a crash cut short.
func (g *Group) load(st store.Store) (*raft.MemoryStorage, *pb.Snapshot, uint64, error) {
	ss, err := g.loadSnapshot(st)
	if err != nil {
		return nil, nil, 0, err
	}
	snap := &pb.Snapshot{Metadata: &pb.SnapshotMetadata{
		ConfState: g.confState(),
		Index:     new(uint64(bootIndex)),
		Term:      new(uint64(bootTerm)),
	}}
	if ss != nil {
		snap = ss.snap
	}
	ms := raft.NewMemoryStorage()
	if err := ms.ApplySnapshot(snap); err != nil {
		return nil, nil, 0, fmt.Errorf("snapshot: %w", err)
	}
	si := snap.GetMetadata().GetIndex()
	last, base := uint64(bootIndex), uint64(bootIndex)
	if rec, ok, err := st.Get(g.key("last")); err != nil {
		return nil, nil, 0, err
	} else if ok {
		d := wire.NewDecoder(rec.Value)
		last = d.Uvarint()
		if d.Len() > 0 {
			base = d.Uvarint()
		}
		if d.Err() != nil || d.Len() != 0 || last < bootIndex {
			return nil, nil, 0, corrupt("%s: bad last index", g.key("last"))
		}
	}
	switch {
	case ss != nil && ss.installed && base < si:
		last = si // the old log's last: a crash came before the new one
	case last < si:
		return nil, nil, 0, corrupt("last entry %d before the snapshot at %d", last, si)
	}
	if ss != nil {
		if err := g.deleteCovered(st, ss.top); err != nil {
			return nil, nil, 0, err
		}
	}
	ents := make([]*pb.Entry, 0, last-si)
	for i := si + 1; i <= last; i++ {
		e, ok, err := g.getEntry(st, i)
		if err != nil {
			return nil, nil, 0, err
		}
		if !ok {
			return nil, nil, 0, corrupt("entry %d of %d..%d missing", i, si+1, last)
		}
		ents = append(ents, e)
	}
	if err := ms.Append(ents); err != nil {
		return nil, nil, 0, fmt.Errorf("entries: %w", err)
	}
	// Garbage above last from a truncation is a run of entries right
	// above it: find its end, so a snapshot installed over it deletes it.
	hi := last
	for {
		_, live, err := g.getEntry(st, hi+1)
		if err != nil {
			return nil, nil, 0, err
		}
		if !live {
			break
		}
		hi++
	}
	if rec, ok, err := st.Get(g.key("hs")); err != nil {
		return nil, nil, 0, err
	} else if ok {
		hs := new(pb.HardState)
		if err := proto.Unmarshal(rec.Value, hs); err != nil {
			return nil, nil, 0, corrupt("hard state: %v", err)
		}
		if hs.GetCommit() > last {
			return nil, nil, 0, corrupt("commit %d beyond last entry %d", hs.GetCommit(), last)
		}
		// An installed snapshot is committed; a crash may have kept it
		// without the hard state that says so.
		hs.Commit = new(max(hs.GetCommit(), si))
		if err := ms.SetHardState(hs); err != nil {
			return nil, nil, 0, err
		}
	}
	if ss == nil {
		return ms, nil, hi, nil
	}
	return ms, ss.snap, hi, nil
}

// loadSnapshot reads the stored snapshot, if any.
func (g *Group) loadSnapshot(st store.Store) (*storedSnap, error) {
	rec, ok, err := st.Get(g.key("snap"))
	if err != nil || !ok || rec.Tombstone {
		return nil, err
	}
	d := wire.NewDecoder(rec.Value)
	ss := &storedSnap{top: d.Uvarint(), installed: d.Bool(), snap: new(pb.Snapshot)}
	if d.Err() != nil {
		return nil, corrupt("snapshot: %v", d.Err())
	}
	if err := proto.Unmarshal(rec.Value[len(rec.Value)-d.Len():], ss.snap); err != nil {
		return nil, corrupt("snapshot: %v", err)
	}
	md := ss.snap.GetMetadata()
	if md.GetIndex() <= bootIndex || ss.top > md.GetIndex() || !sameVoters(md.GetConfState(), g.confState()) {
		return nil, corrupt("snapshot at %d (deleting to %d) of voters %v; want one after %d, of voters %v",
			md.GetIndex(), ss.top, md.GetConfState().GetVoters(), bootIndex, g.confState().GetVoters())
	}
	return ss, nil
}

func sameVoters(a, b *pb.ConfState) bool {
	x, y := slices.Clone(a.GetVoters()), slices.Clone(b.GetVoters())
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y) && len(a.GetLearners()) == 0 && len(a.GetVotersOutgoing()) == 0
}

// putSnapshot writes the snapshot record.
func (g *Group) putSnapshot(st store.Store, ss storedSnap) error {
	b := wire.AppendBool(wire.AppendUvarint(nil, ss.top), ss.installed)
	b, err := marshal.MarshalAppend(b, ss.snap)
	if err != nil {
		return err
	}
	return st.Put(g.key("snap"), store.Record{Value: b})
}

// deleteCovered deletes the run of entries ending at top that a crash left
// undeleted (see the comment at the top).
func (g *Group) deleteCovered(st store.Store, top uint64) error {
	for i := top; i > bootIndex; i-- {
		_, live, err := g.getEntry(st, i)
		if err != nil || !live {
			return err
		}
		if err := st.Put(g.entryKey(i), store.Record{Tombstone: true}); err != nil {
			return err
		}
	}
	return nil
}

// getEntry reads entry i: false if it is absent or deleted.
func (g *Group) getEntry(st store.Store, i uint64) (*pb.Entry, bool, error) {
	rec, ok, err := st.Get(g.entryKey(i))
	if err != nil || !ok || rec.Tombstone {
		return nil, false, err
	}
	e := new(pb.Entry)
	if err := proto.Unmarshal(rec.Value, e); err != nil {
		return nil, false, corrupt("entry %d: %v", i, err)
	}
	if e.GetIndex() != i {
		return nil, false, corrupt("entry %d stored under %d", e.GetIndex(), i)
	}
	return e, true, nil
}

// putLast writes the log's last index, with the snapshot's.
func (g *Group) putLast(st store.Store, last uint64) error {
	return st.Put(g.key("last"), store.Record{Value: binary.AppendUvarint(binary.AppendUvarint(nil, last), g.snapIndex)})
}

// deleteEntries deletes the entries in (from, to], in index order.
func (g *Group) deleteEntries(st store.Store, from, to uint64) error {
	for i := from + 1; i <= to; i++ {
		if err := st.Put(g.entryKey(i), store.Record{Tombstone: true}); err != nil {
			return err
		}
	}
	return nil
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
		if err := g.putLast(st, last); err != nil {
			return err
		}
		if err := g.ms.Append(ents); err != nil {
			return err
		}
		g.hi = max(g.hi, last)
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

// install stores snapshot snap, which raft received from the leader, and
// makes it the raft storage's, in the order the comment above explains:
// the snapshot, the log's end at its index, then tombstones for the old
// log and the garbage above it.
func (g *Group) install(st store.Store, snap *pb.Snapshot) error {
	si := snap.GetMetadata().GetIndex()
	if err := g.putSnapshot(st, storedSnap{snap: snap, top: min(g.hi, si), installed: true}); err != nil {
		return err
	}
	old := g.snapIndex
	g.snapIndex = si
	if err := g.putLast(st, si); err != nil {
		return err
	}
	if err := g.deleteEntries(st, old, g.hi); err != nil {
		return err
	}
	if err := g.ms.ApplySnapshot(snap); err != nil {
		return err
	}
	g.hi = si
	return nil
}

// compact stores a snapshot of the state machine at the applied index and
// compacts the log up to it, in the order the comment above explains: the
// snapshot, then tombstones for the entries it covers, and only then the
// in-memory raft log.
func (g *Group) compact(e env.Env) error {
	i := g.applied
	term, err := g.ms.Term(i)
	if err != nil {
		return err
	}
	data := g.sm.Snapshot(e)
	snap := &pb.Snapshot{Data: data, Metadata: &pb.SnapshotMetadata{ConfState: g.confState(), Index: new(i), Term: new(term)}}
	put := func() error { return g.putSnapshot(e.Store(), storedSnap{snap: snap, top: i}) }
	if !g.cfg.unsafeCompactFirst {
		if err := put(); err != nil {
			return err
		}
	}
	if err := g.deleteEntries(e.Store(), g.snapIndex, i); err != nil {
		return err
	}
	if g.cfg.unsafeCompactFirst {
		if err := put(); err != nil {
			return err
		}
	}
	if _, err := g.ms.CreateSnapshot(i, snap.GetMetadata().GetConfState(), data); err != nil {
		return err
	}
	if err := g.ms.Compact(i); err != nil {
		return err
	}
	g.snapIndex = i
	return nil
}
