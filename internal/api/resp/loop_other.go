//go:build !linux

package resp

import "errors"

// loop is an event loop; only Linux has one (loop_linux.go). Elsewhere
// every connection is served by a goroutine of its own.
type loop struct{}

// haveLoops: this platform has event loops.
const haveLoops = false

func newLoop(*Server) (*loop, error) { return nil, errors.New("no event loop on this platform") }

func (*loop) adopt(*conn) bool { return false }
func (*loop) wake(*conn)       {}
func (*loop) kick()            {}
func (*loop) run()             {}

func (c *conn) loopRead([]byte) (int, error)  { panic("resp: no event loop") }
func (c *conn) loopWrite([]byte) (int, error) { panic("resp: no event loop") }
