package rsm

import (
	"fmt"

	"go.etcd.io/raft/v3"
)

// quietLogger is the raft library's logger: raft logs every election at
// info level through a global logger by default; a group logs nothing but
// errors, and a raft panic or fatal error panics (a bug: the simulator
// reports the seed). Warnings are dropped: raft warns about ordinary
// events of a faulty network (a stale message, a rejected vote).
type quietLogger struct{}

var _ raft.Logger = quietLogger{}

func (quietLogger) Debug(...any)              {}
func (quietLogger) Debugf(string, ...any)     {}
func (quietLogger) Info(...any)               {}
func (quietLogger) Infof(string, ...any)      {}
func (quietLogger) Warning(...any)            {}
func (quietLogger) Warningf(string, ...any)   {}
func (quietLogger) Error(...any)              {}
func (quietLogger) Errorf(string, ...any)     {}
func (quietLogger) Fatal(v ...any)            { panic("rsm: raft: " + fmt.Sprint(v...)) }
func (quietLogger) Fatalf(f string, v ...any) { panic("rsm: raft: " + fmt.Sprintf(f, v...)) }
func (quietLogger) Panic(v ...any)            { panic("rsm: raft: " + fmt.Sprint(v...)) }
func (quietLogger) Panicf(f string, v ...any) { panic("rsm: raft: " + fmt.Sprintf(f, v...)) }
