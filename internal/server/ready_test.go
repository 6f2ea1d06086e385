package server

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/node"
	"github.com/lightcone/lightcone/internal/store"
	"github.com/lightcone/lightcone/internal/topo"
	"github.com/lightcone/lightcone/internal/wire"
)

type idleReplica struct{}

func (idleReplica) Start(env.Env)                       {}
func (idleReplica) Step(env.Env, wire.NodeID, wire.Msg) {}
func (idleReplica) Request(env.Env, *wire.Request)      {}
func (idleReplica) Timer(env.Env, any)                  {}

// TestReadyzSeesAStalledLoop: /readyz's verdict is not ready while the
// node's event loop is stuck (as behind a commit that never returns), and
// ready again once it moves; a full disk is reported before the loop is
// asked.
func TestReadyzSeesAStalledLoop(t *testing.T) {
	w, err := topo.Parse([]byte("name: one\nnodes_per_region: 1\nregions: [{name: r}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	nd, err := node.New(node.Config{Topology: topo.NewTopology(w), Factory: func(wire.NodeID) env.Replica { return idleReplica{} }, Engine: store.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = nd.Run(ctx) }()
	writable := func() error { return nil }
	if err := ready(ctx, writable, nd); err != nil {
		t.Fatalf("idle node: %v; want ready", err)
	}
	full := errors.New("disk full")
	if err := ready(ctx, func() error { return full }, nd); !errors.Is(err, full) {
		t.Fatalf("full disk: %v; want the disk's error", err)
	}
	release, stalled := make(chan struct{}), make(chan struct{})
	go func() { _ = nd.Do(ctx, func() { close(stalled); <-release }) }()
	<-stalled
	err = ready(ctx, writable, nd)
	close(release)
	if err == nil || !strings.Contains(err.Error(), "event loop") {
		t.Fatalf("stalled loop: %v; want not ready naming the event loop", err)
	}
	if err := ready(ctx, writable, nd); err != nil {
		t.Fatalf("after the stall: %v; want ready", err)
	}
}
