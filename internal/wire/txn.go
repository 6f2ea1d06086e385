package wire

import (
	"fmt"
	"strings"
)

// Transactions (issue 16, Catenae: seed 000 §4.3). A transaction is one
// Request with Op OpTxn and its operations in Request.Txn, declared up
// front in the order they run: the chainable model, where every key a
// transaction touches, and what it does there, is known before it starts.
// Protocols that do not run transactions refuse OpTxn with ErrInvalid.

// TxnKind is what a transaction does at one key.
type TxnKind uint8

const (
	// TxnRead reads the key: the reply's TxnResult holds its value and
	// the version read.
	TxnRead TxnKind = iota + 1
	// TxnWrite writes Value (a blind write; Delete: removes the key).
	TxnWrite
	// TxnAdd reads the key as a decimal int64 (absent: 0) and writes it
	// plus Delta: a read-modify-write every replica can run on its own
	// (a bank transfer is two Adds). The result holds the value read.
	TxnAdd
)

func (k TxnKind) String() string {
	switch k {
	case TxnRead:
		return "read"
	case TxnWrite:
		return "write"
	case TxnAdd:
		return "add"
	}
	return fmt.Sprintf("txnkind(%d)", uint8(k))
}

// TxnOp is one operation of a transaction.
type TxnOp struct {
	Kind   TxnKind
	Key    string
	Value  []byte // TxnWrite
	Delete bool   // TxnWrite: delete the key instead
	Delta  int64  // TxnAdd
}

// Txn is a transaction's declared operations, in order. A key appears at
// most once, except that a TxnRead may precede a TxnWrite of the same key.
type Txn struct {
	Ops []TxnOp
	// ReadOnly, set by the client, asks for the read-only path (protocols
	// may serve it locally); a read-only transaction with a write is
	// invalid.
	ReadOnly bool
}

// TxnResult is what one operation of a committed transaction observed:
// for a TxnRead or TxnAdd, the value read (Found false: absent) and the
// version of the write it read (zero for the initial absent value).
type TxnResult struct {
	Found   bool
	Value   []byte
	Version Version
}

// MaxTxnOps bounds a transaction's operations (Txn.Check).
const MaxTxnOps = 64

// MaxTxnBytes bounds the bytes of a transaction's keys and written values
// together (Txn.Check): a transaction is one request, held whole by the
// node that coordinates it, and by every message that carries it.
const MaxTxnBytes = 16 << 20

// Check validates t's shape, before anything is written: at least one and
// at most MaxTxnOps operations, at most MaxTxnBytes of keys and values,
// known kinds, non-empty keys, no key
// twice (but a read then a write of it), and no write in a read-only
// transaction. The error says which operation is wrong.
func (t *Txn) Check() error {
	if t == nil || len(t.Ops) == 0 {
		return fmt.Errorf("transaction has no operations")
	}
	if len(t.Ops) > MaxTxnOps {
		return fmt.Errorf("transaction has %d operations (at most %d)", len(t.Ops), MaxTxnOps)
	}
	size := 0
	for _, op := range t.Ops {
		size += len(op.Key) + len(op.Value)
	}
	if size > MaxTxnBytes {
		return fmt.Errorf("transaction has %d bytes of keys and values (at most %d)", size, MaxTxnBytes)
	}
	seen := map[string]TxnKind{}
	for i, op := range t.Ops {
		switch {
		case op.Kind < TxnRead || op.Kind > TxnAdd:
			return fmt.Errorf("operation %d: unknown kind %d", i, op.Kind)
		case op.Key == "":
			return fmt.Errorf("operation %d: empty key", i)
		case t.ReadOnly && op.Kind != TxnRead:
			return fmt.Errorf("operation %d: %s of %q in a read-only transaction", i, op.Kind, op.Key)
		}
		if prev, ok := seen[op.Key]; ok && !(prev == TxnRead && op.Kind == TxnWrite) {
			return fmt.Errorf("operation %d: key %q declared twice (%s then %s; only a read then a write may share a key)", i, op.Key, prev, op.Kind)
		}
		seen[op.Key] = op.Kind
	}
	return nil
}

// String is a short description: "read a, add b +5, write c".
func (t *Txn) String() string {
	var b strings.Builder
	for i, op := range t.Ops {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", op.Kind, op.Key)
		if op.Kind == TxnAdd {
			fmt.Fprintf(&b, " %+d", op.Delta)
		}
	}
	return b.String()
}

// AppendTxn appends t in the message encoding protocols share, for
// transactions carried in protocol messages.
func AppendTxn(b []byte, t Txn) []byte {
	b = AppendBool(b, t.ReadOnly)
	return AppendList(b, t.Ops, func(b []byte, op TxnOp) []byte {
		b = AppendUvarint(b, uint64(op.Kind))
		b = AppendString(b, op.Key)
		b = AppendBytes(b, op.Value)
		b = AppendBool(b, op.Delete)
		return AppendVarint(b, op.Delta)
	})
}

// DecodeTxn reads a transaction AppendTxn wrote.
func DecodeTxn(d *Decoder) Txn {
	var t Txn
	t.ReadOnly = d.Bool()
	t.Ops = DecodeList(d, func(d *Decoder) TxnOp {
		return TxnOp{Kind: TxnKind(d.Uvarint()), Key: d.String(), Value: d.Bytes(), Delete: d.Bool(), Delta: d.Varint()}
	})
	return t
}

// AppendTxnResults appends rs in the message encoding protocols share.
func AppendTxnResults(b []byte, rs []TxnResult) []byte {
	return AppendList(b, rs, func(b []byte, r TxnResult) []byte {
		return AppendVersion(AppendBytes(AppendBool(b, r.Found), r.Value), r.Version)
	})
}

// DecodeTxnResults reads results AppendTxnResults wrote.
func DecodeTxnResults(d *Decoder) []TxnResult {
	return DecodeList(d, func(d *Decoder) TxnResult {
		return TxnResult{Found: d.Bool(), Value: d.Bytes(), Version: d.Version()}
	})
}
