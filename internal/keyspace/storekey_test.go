package keyspace

import (
	"testing"

	"github.com/lightcone/lightcone/internal/env"
	"github.com/lightcone/lightcone/internal/store"
)

// keyEnv is an Env whose store records the key of each Put.
type keyEnv struct {
	env.Env
	put string
}

func (e *keyEnv) Store() store.Store { return keyStore{e} }

type keyStore struct{ e *keyEnv }

func (s keyStore) Get(string) (store.Record, bool, error) { return store.Record{}, false, nil }
func (s keyStore) Put(key string, _ store.Record) error   { s.e.put = key; return nil }

// TestAppendStoreKeyIsTheViews: AppendStoreKey names the store key each
// keyspace's view writes, for plain keys and keys that need escaping.
func TestAppendStoreKeyIsTheViews(t *testing.T) {
	names := []string{"default", "other"}
	m := &Mux{defs: []Def{{Name: names[0]}, {Name: names[1]}}}
	m.makeEnvs()
	for _, ks := range []string{"", "default", "other"} {
		for _, key := range []string{"x", "k/x", "k//x", "kx", "k", ""} {
			i := 0
			if ks == "other" {
				i = 1
			}
			e := &keyEnv{}
			if err := m.sub(e, i).Store().Put(key, store.Record{}); err != nil {
				t.Fatal(err)
			}
			got, ok := AppendStoreKey([]byte("pre:"), names, ks, []byte(key))
			if !ok || string(got) != "pre:"+e.put {
				t.Errorf("AppendStoreKey(%q, %q) = %q, %v; the view wrote %q", ks, key, got, ok, e.put)
			}
		}
	}
	if _, ok := AppendStoreKey(nil, names, "nope", []byte("x")); ok {
		t.Error("AppendStoreKey of an unknown keyspace: ok; want false")
	}
}
