package grpcapi

import (
	"context"

	"github.com/lightcone/lightcone/internal/api/grpcapi/lightconev1"
)

// Client helpers for transactions: a caller builds the declared operations
// with Read, Write, Delete and Add, in the order they run, and runs them
// with RunTxn.
//
//	res, err := grpcapi.RunTxn(ctx, kv, "", grpcapi.Add("alice", -5), grpcapi.Add("bob", 5))

// Read declares a read of key.
func Read(key string) *lightconev1.TxnOp {
	return &lightconev1.TxnOp{Kind: lightconev1.TxnOp_KIND_READ, Key: []byte(key)}
}

// Write declares a write of value to key.
func Write(key string, value []byte) *lightconev1.TxnOp {
	return &lightconev1.TxnOp{Kind: lightconev1.TxnOp_KIND_WRITE, Key: []byte(key), Value: value}
}

// Delete declares a delete of key.
func Delete(key string) *lightconev1.TxnOp {
	return &lightconev1.TxnOp{Kind: lightconev1.TxnOp_KIND_WRITE, Key: []byte(key), Delete: true}
}

// Add declares adding delta to key's decimal int64 value (absent: 0).
func Add(key string, delta int64) *lightconev1.TxnOp {
	return &lightconev1.TxnOp{Kind: lightconev1.TxnOp_KIND_ADD, Key: []byte(key), Delta: delta}
}

// RunTxn runs ops as one transaction in keyspace ("": the server's
// default). It is read-only if every op is a read.
func RunTxn(ctx context.Context, kv lightconev1.KVClient, keyspace string, ops ...*lightconev1.TxnOp) (*lightconev1.TxnResponse, error) {
	readOnly := len(ops) > 0
	for _, op := range ops {
		readOnly = readOnly && op.GetKind() == lightconev1.TxnOp_KIND_READ
	}
	return kv.Txn(ctx, &lightconev1.TxnRequest{Keyspace: keyspace, Ops: ops, ReadOnly: readOnly})
}
