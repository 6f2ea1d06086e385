package wire

import (
	"strings"
	"testing"
)

func TestTxnCheck(t *testing.T) {
	ok := []Txn{
		{Ops: []TxnOp{{Kind: TxnRead, Key: "a"}}},
		{Ops: []TxnOp{{Kind: TxnRead, Key: "a"}, {Kind: TxnWrite, Key: "a", Value: []byte("v")}}},
		{Ops: []TxnOp{{Kind: TxnAdd, Key: "a", Delta: -5}, {Kind: TxnAdd, Key: "b", Delta: 5}}},
		{Ops: []TxnOp{{Kind: TxnRead, Key: "a"}, {Kind: TxnRead, Key: "b"}}, ReadOnly: true},
	}
	for _, tx := range ok {
		if err := tx.Check(); err != nil {
			t.Errorf("%s: %v", tx.String(), err)
		}
	}
	bad := map[string]Txn{
		"no operations":  {},
		"empty key":      {Ops: []TxnOp{{Kind: TxnRead}}},
		"unknown kind":   {Ops: []TxnOp{{Kind: 9, Key: "a"}}},
		"declared twice": {Ops: []TxnOp{{Kind: TxnWrite, Key: "a"}, {Kind: TxnRead, Key: "a"}}},
		"read-only":      {Ops: []TxnOp{{Kind: TxnAdd, Key: "a"}}, ReadOnly: true},
		"at most":        {Ops: make([]TxnOp, MaxTxnOps+1)},
		"bytes of keys":  {Ops: []TxnOp{{Kind: TxnWrite, Key: "a", Value: make([]byte, MaxTxnBytes)}}},
	}
	for want, tx := range bad {
		if err := tx.Check(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: err = %v; want one saying %q", tx, err, want)
		}
	}
}
