package server

import (
	"context"
	"fmt"
	"slices"

	"github.com/lightcone/lightcone/internal/api"
	"github.com/lightcone/lightcone/internal/keyspace"
	"github.com/lightcone/lightcone/internal/node"
	"github.com/lightcone/lightcone/internal/protocol"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/wire"
)

// nodeScanner is a node process's api.Scanner: it walks a keyspace's spans
// of the engine (keyspace.Spans) on the node's event loop, a page at a
// time, and asks the keyspace's protocol (protocol.Lister) which stored
// keys are user keys and whether they are live.
type nodeScanner struct {
	nd  *node.Node
	eng store.Lister
	kss map[string]scanSpace
}

// scanSpace is one keyspace as the scanner sees it.
type scanSpace struct {
	spans    []keyspace.Span
	lister   protocol.Lister // nil: the protocol cannot list its keys
	protocol string
}

func newNodeScanner(nd *node.Node, eng store.Lister, kss []servedKeyspace) *nodeScanner {
	s := &nodeScanner{nd: nd, eng: eng, kss: make(map[string]scanSpace)}
	for i, k := range kss {
		s.kss[k.name] = scanSpace{spans: keyspace.Spans(i == 0, k.name), lister: k.lister, protocol: k.protocol}
	}
	return s
}

// Scan implements api.Scanner. The cursor is the stored key to examine
// next.
func (s *nodeScanner) Scan(ctx context.Context, ks, cursor string, count int) ([]api.KeyValue, string, error) {
	sp, ok := s.kss[ks]
	if !ok {
		return nil, "", &wire.Error{Code: wire.ErrInvalid, Msg: fmt.Sprintf("keyspace: unknown keyspace %q", ks)}
	}
	if sp.lister == nil {
		return nil, "", &wire.Error{Code: wire.ErrInvalid, Msg: fmt.Sprintf("keyspace %q: protocol %s keeps no key list on its nodes", ks, sp.protocol)}
	}
	var page []api.KeyValue
	var next string
	var err error
	if derr := s.nd.Do(ctx, func() { page, next, err = scanSpans(s.eng, sp.spans, sp.lister, cursor, max(count, 1)) }); derr != nil {
		return nil, "", &wire.Error{Code: wire.ErrUnavailable, Msg: "scan: " + derr.Error()}
	}
	if err != nil {
		return nil, "", &wire.Error{Code: wire.ErrUnavailable, Msg: "scan: " + err.Error()}
	}
	return page, next, nil
}

// scanSpans examines at most count stored keys of spans from cursor on,
// returning the live user keys among them and the stored key to examine
// next ("" when the spans are done).
func scanSpans(eng store.Lister, spans []keyspace.Span, l protocol.Lister, cursor string, count int) (page []api.KeyValue, next string, err error) {
	n := 0
	for _, span := range spans {
		from := max(span.From, cursor)
		if span.To != "" && from >= span.To {
			continue
		}
		err = eng.Scan(from, span.To, func(stored string, rec store.Record) bool {
			if n == count {
				next = stored
				return false
			}
			n++
			if key, val, live, ok := l.UserRecord(span.Key(stored), rec); ok && live {
				page = append(page, api.KeyValue{Key: key, Value: slices.Clone(val)})
			}
			return true
		})
		if err != nil || next != "" {
			return page, next, err
		}
	}
	return page, "", nil
}
