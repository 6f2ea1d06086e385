package resp

import (
	"fmt"
	"strings"

	"github.com/lightcone/lightcone/internal/wire"
)

// Transactions (doc.go, "Transactions"): LC.TXN and MULTI/EXEC build one
// wire.OpTxn request of declared operations; the keyspace's protocol runs
// it, or refuses it.

const (
	msgExecAbort     = "EXECABORT Transaction discarded because of previous errors."
	msgMultiNested   = "ERR MULTI calls can not be nested"
	msgExecNoMulti   = "ERR EXEC without MULTI"
	msgDiscardNoMult = "ERR DISCARD without MULTI"
	msgWatch         = "ERR WATCH is not supported by lightcone: a transaction declares its keys up front (MULTI/EXEC, LC.TXN)"
)

// txnReply says how one command of a transaction is answered from the
// results of its operations.
type txnReply uint8

const (
	replyOK     txnReply = iota + 1 // +OK
	replyRaw                        // the value read, raw (LC.TXN READ), or nil
	replyString                     // the value read, a string decoded from its envelope (GET), or nil
	replyAdded                      // the value read plus the delta, an integer
	replyCount                      // 1 if the key existed, else 0 (DEL)
)

// txnCmd is one command of a transaction: how it is answered, and the
// operation whose result it reads (-1: none).
type txnCmd struct {
	reply txnReply
	read  int
	delta int64
}

// txnBuilder collects a transaction's declared operations.
type txnBuilder struct {
	txn  wire.Txn
	cmds []txnCmd
	// bytes of keys and values so far, against wire.MaxTxnBytes.
	bytes int
}

// read declares a read of key, or reuses the read declared last on key
// when no write of it follows (DEL after GET of one key).
func (b *txnBuilder) read(key string) int {
	for i := len(b.txn.Ops) - 1; i >= 0; i-- {
		if op := b.txn.Ops[i]; op.Key == key {
			if op.Kind == wire.TxnRead {
				return i
			}
			break
		}
	}
	b.txn.Ops = append(b.txn.Ops, wire.TxnOp{Kind: wire.TxnRead, Key: key})
	return len(b.txn.Ops) - 1
}

// add declares op for cmd. An add of a key whose last declared operation
// is a read becomes that operation (an add reads the key too, and its
// result is the value read), so GET then INCR of one key is one add.
func (b *txnBuilder) add(op wire.TxnOp, cmd txnCmd) {
	b.bytes += len(op.Key) + len(op.Value)
	if op.Kind == wire.TxnAdd {
		for i := len(b.txn.Ops) - 1; i >= 0; i-- {
			if prev := &b.txn.Ops[i]; prev.Key == op.Key {
				if prev.Kind == wire.TxnRead {
					prev.Kind, prev.Delta = wire.TxnAdd, op.Delta
					cmd.read = i
					b.cmds = append(b.cmds, cmd)
					return
				}
				break
			}
		}
	}
	b.txn.Ops = append(b.txn.Ops, op)
	if cmd.reply == replyAdded {
		cmd.read = len(b.txn.Ops) - 1
	}
	b.cmds = append(b.cmds, cmd)
}

// lcTxnOps are LC.TXN's operations and their argument counts (the name
// included).
var lcTxnOps = map[string]int{"read": 2, "write": 3, "del": 2, "add": 3}

// cmdLCTxn implements LC.TXN [READONLY] op...: with ops READ key, WRITE
// key value, DEL key and ADD key delta, on raw stored bytes (no value
// envelope), replying one element per op.
func cmdLCTxn(c *conn, args [][]byte) {
	var b txnBuilder
	rest := args[1:]
	if len(rest) > 0 && strings.EqualFold(string(rest[0]), "readonly") {
		b.txn.ReadOnly = true
		rest = rest[1:]
	}
	for len(rest) > 0 {
		name := strings.ToLower(string(rest[0]))
		n, ok := lcTxnOps[name]
		if !ok {
			c.replyError(fmt.Sprintf("ERR lc.txn: unknown operation '%s' (valid: READ key, WRITE key value, DEL key, ADD key delta)", clip(rest[0], 64)))
			return
		}
		if len(rest) < n {
			c.replyError(fmt.Sprintf("ERR lc.txn: %s needs %d argument(s)", strings.ToUpper(name), n-1))
			return
		}
		if len(b.txn.Ops) >= wire.MaxTxnOps {
			c.replyError(fmt.Sprintf("ERR lc.txn: more than %d operations", wire.MaxTxnOps))
			return
		}
		key, ok := c.key(rest[1])
		if !ok {
			return
		}
		switch name {
		case "read":
			b.cmds = append(b.cmds, txnCmd{reply: replyRaw, read: b.read(key)})
			b.bytes += len(key)
		case "write":
			if !c.valueFits(len(rest[2])) {
				return
			}
			b.add(wire.TxnOp{Kind: wire.TxnWrite, Key: key, Value: rest[2]}, txnCmd{reply: replyOK, read: -1})
		case "del":
			b.add(wire.TxnOp{Kind: wire.TxnWrite, Key: key, Delete: true}, txnCmd{reply: replyOK, read: -1})
		case "add":
			d, ok := parseInt(rest[2])
			if !ok {
				c.replyError(msgNotInteger)
				return
			}
			b.add(wire.TxnOp{Kind: wire.TxnAdd, Key: key, Delta: d}, txnCmd{reply: replyAdded, delta: d})
		}
		rest = rest[n:]
	}
	c.runTxn(&b)
}

// runTxn checks the transaction's shape and submits it; the reply is an
// array with one element per command.
func (c *conn) runTxn(b *txnBuilder) {
	if err := b.txn.Check(); err != nil {
		c.replyError("ERR " + err.Error())
		return
	}
	txn := b.txn
	c.await([]*wire.Request{{Op: wire.OpTxn, Txn: &txn}}, func(w *Writer, reps []*wire.Reply) {
		r := reps[0]
		if r.Err != nil {
			w.WriteError(backendError(r.Err))
			return
		}
		if len(r.Txn) != len(txn.Ops) {
			w.WriteError(fmt.Sprintf("ERR backend answered %d results for %d operations", len(r.Txn), len(txn.Ops)))
			return
		}
		w.WriteArray(len(b.cmds))
		for _, cmd := range b.cmds {
			c.writeTxnResult(w, cmd, r.Txn)
		}
	})
}

func (c *conn) writeTxnResult(w *Writer, cmd txnCmd, res []wire.TxnResult) {
	var rr wire.TxnResult
	if cmd.read >= 0 {
		rr = res[cmd.read]
	}
	switch cmd.reply {
	case replyOK:
		w.WriteSimple("OK")
	case replyRaw:
		if rr.Found {
			w.WriteBulk(rr.Value)
		} else {
			w.WriteNull()
		}
	case replyString:
		v, found, msg := c.decode(&wire.Reply{Found: rr.Found, Value: rr.Value})
		switch {
		case msg != "":
			w.WriteError(msg)
		case !found:
			w.WriteNull()
		case v.kind != kindString:
			w.WriteError(msgWrongType)
		default:
			w.WriteBulk(v.str)
		}
	case replyAdded:
		var n int64
		if rr.Found {
			n, _ = parseInt(rr.Value) // the protocol parsed it to add
		}
		w.WriteInt(n + cmd.delta)
	case replyCount:
		_, found, _ := c.decode(&wire.Reply{Found: rr.Found, Value: rr.Value})
		if found {
			w.WriteInt(1)
		} else {
			w.WriteInt(0)
		}
	}
}

// multiState is a connection's open MULTI: the commands queued so far.
type multiState struct {
	b       txnBuilder
	aborted bool // a command was refused while queuing: EXEC fails
}

// cmdMulti implements MULTI.
func cmdMulti(c *conn, _ [][]byte) {
	if c.multi != nil {
		c.replyError(msgMultiNested)
		return
	}
	c.multi = &multiState{}
	c.reply(func(w *Writer) { w.WriteSimple("OK") })
}

// cmdDiscard implements DISCARD.
func cmdDiscard(c *conn, _ [][]byte) {
	if c.multi == nil {
		c.replyError(msgDiscardNoMult)
		return
	}
	c.multi = nil
	c.reply(func(w *Writer) { w.WriteSimple("OK") })
}

// cmdExec implements EXEC: the queued commands as one transaction.
func cmdExec(c *conn, _ [][]byte) {
	m := c.multi
	if m == nil {
		c.replyError(msgExecNoMulti)
		return
	}
	c.multi = nil
	switch {
	case m.aborted:
		c.replyError(msgExecAbort)
	case len(m.b.cmds) == 0:
		// Redis answers an empty transaction with an empty array.
		c.reply(func(w *Writer) { w.WriteArray(0) })
	default:
		c.runTxn(&m.b)
	}
}

func cmdWatch(c *conn, _ [][]byte) { c.replyError(msgWatch) }

// queue handles a command sent inside MULTI: a command a transaction can
// declare is queued (+QUEUED); any other is refused and makes EXEC fail,
// as Redis does for a command it cannot queue.
func (c *conn) queue(name string, args [][]byte) {
	refuse := func(msg string) {
		c.multi.aborted = true
		c.replyError(msg)
	}
	b := &c.multi.b
	if len(b.txn.Ops) >= wire.MaxTxnOps {
		refuse(fmt.Sprintf("ERR a transaction holds at most %d operations", wire.MaxTxnOps))
		return
	}
	for _, a := range args[1:2] {
		if len(a) > c.s.cfg.MaxKeyBytes {
			refuse(c.keyTooLarge(len(a)))
			return
		}
	}
	switch name {
	case "get":
		b.cmds = append(b.cmds, txnCmd{reply: replyString, read: b.read(string(args[1]))})
		b.bytes += len(args[1])
	case "set":
		if len(args) != 3 {
			refuse("ERR SET with options is not supported inside MULTI: a transaction declares plain writes")
			return
		}
		v := value{kind: kindString, str: args[2]}
		enc := v.encode()
		if len(enc) > c.s.cfg.MaxValueBytes {
			refuse(c.valueTooLarge(len(enc)))
			return
		}
		b.add(wire.TxnOp{Kind: wire.TxnWrite, Key: string(args[1]), Value: enc}, txnCmd{reply: replyOK, read: -1})
	case "del":
		if len(args) != 2 {
			refuse("ERR DEL of several keys is not supported inside MULTI: send one DEL per key")
			return
		}
		key := string(args[1])
		read := b.read(key)
		b.add(wire.TxnOp{Kind: wire.TxnWrite, Key: key, Delete: true}, txnCmd{reply: replyCount, read: read})
	case "incr", "decr", "incrby", "decrby":
		delta := int64(1)
		if name == "decr" {
			delta = -1
		}
		if len(args) == 3 {
			d, ok := parseInt(args[2])
			if !ok || name == "decrby" && d == -1<<63 {
				refuse(msgNotInteger)
				return
			}
			if name == "decrby" {
				d = -d
			}
			delta = d
		}
		b.add(wire.TxnOp{Kind: wire.TxnAdd, Key: string(args[1]), Delta: delta}, txnCmd{reply: replyAdded, delta: delta})
	default:
		refuse(fmt.Sprintf("ERR %s is not supported inside MULTI: lightcone transactions take GET, SET, DEL, INCR, DECR, INCRBY and DECRBY", strings.ToUpper(name)))
		return
	}
	if b.bytes > wire.MaxTxnBytes {
		refuse(fmt.Sprintf("ERR a transaction holds at most %d bytes of keys and values", wire.MaxTxnBytes))
		return
	}
	c.reply(func(w *Writer) { w.WriteSimple("QUEUED") })
}
