// Package svctest is the conformance suite of the storage-service layer:
// one set of tests, run against every storagesvc.Service implementation
// (the reference Mem, the hosted service of the real runtime, and the S3
// adapter against a real MinIO server), so that they all give the
// semantics storagesvc's doc.go states. It also starts MinIO for tests
// (minio.go).
package svctest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lightcone/lightcone/internal/storagesvc"
)

// Run runs the suite against svc. Every subtest keeps its objects under
// its own key prefix ("<prefix>/<subtest>/"), so one service may serve them
// all, and a service shared with other suites is fine if prefix is unique.
// svc must be safe for concurrent use (Race calls it from several
// goroutines).
func Run(t *testing.T, svc storagesvc.Service, prefix string) {
	tests := []struct {
		name string
		f    func(t *testing.T, c *checker)
	}{
		{"NotFound", testNotFound},
		{"PutGetHead", testPutGetHead},
		{"EveryWriteNewETag", testEveryWriteNewETag},
		{"CreateOnly", testCreateOnly},
		{"IfMatch", testIfMatch},
		{"MetadataCAS", testMetadataCAS},
		{"DeleteConditions", testDeleteConditions},
		{"ListPagination", testListPagination},
		{"Invalid", testInvalid},
		{"Race", testRace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.f(t, &checker{t: t, svc: svc, ctx: context.Background(), prefix: prefix + "/" + tc.name + "/"})
		})
	}
}

type checker struct {
	t      *testing.T
	svc    storagesvc.Service
	ctx    context.Context
	prefix string
}

func (c *checker) key(k string) string { return c.prefix + k }

// is fails the test unless err is want (nil: no error).
func (c *checker) is(what string, err, want error) {
	c.t.Helper()
	if want == nil && err != nil || want != nil && !errors.Is(err, want) {
		c.t.Fatalf("%s: err %v; want %v", what, err, want)
	}
}

func (c *checker) put(k string, data []byte, meta storagesvc.Meta, cond storagesvc.Cond) storagesvc.ETag {
	c.t.Helper()
	e, err := c.svc.Put(c.ctx, c.key(k), data, meta, cond)
	c.is(fmt.Sprintf("Put(%q, %s)", k, cond), err, nil)
	if e == "" {
		c.t.Fatalf("Put(%q) returned an empty ETag", k)
	}
	return e
}

// get reads k and checks it holds data, meta and etag (etag "" is not
// checked).
func (c *checker) get(k string, data []byte, meta storagesvc.Meta, etag storagesvc.ETag) *storagesvc.Object {
	c.t.Helper()
	o, err := c.svc.Get(c.ctx, c.key(k))
	c.is(fmt.Sprintf("Get(%q)", k), err, nil)
	if !bytes.Equal(o.Data, data) || !o.Meta.Equal(meta) || etag != "" && o.ETag != etag || o.Size != int64(len(data)) {
		c.t.Fatalf("Get(%q) = data %q meta %v etag %s size %d; want %q %v %s %d", k, o.Data, o.Meta, o.ETag, o.Size, data, meta, etag, len(data))
	}
	h, err := c.svc.Head(c.ctx, c.key(k))
	c.is(fmt.Sprintf("Head(%q)", k), err, nil)
	if h.Data != nil || !h.Meta.Equal(meta) || h.ETag != o.ETag || h.Size != int64(len(data)) {
		c.t.Fatalf("Head(%q) = data %q meta %v etag %s size %d; want no data, %v %s %d", k, h.Data, h.Meta, h.ETag, h.Size, meta, o.ETag, len(data))
	}
	return o
}

func (c *checker) absent(k string) {
	c.t.Helper()
	_, err := c.svc.Get(c.ctx, c.key(k))
	c.is(fmt.Sprintf("Get(%q) of an absent object", k), err, storagesvc.ErrNotFound)
	_, err = c.svc.Head(c.ctx, c.key(k))
	c.is(fmt.Sprintf("Head(%q) of an absent object", k), err, storagesvc.ErrNotFound)
}

func testNotFound(t *testing.T, c *checker) {
	c.absent("nothing")
	_, err := c.svc.PutMeta(c.ctx, c.key("nothing"), storagesvc.Meta{"a": "b"}, storagesvc.Cond{})
	c.is("PutMeta of an absent object", err, storagesvc.ErrNotFound)
	_, err = c.svc.PutMeta(c.ctx, c.key("nothing"), storagesvc.Meta{"a": "b"}, storagesvc.Cond{IfMatch: "x"})
	c.is("PutMeta if-match of an absent object", err, storagesvc.ErrPreconditionFailed)
	_, err = c.svc.Put(c.ctx, c.key("nothing"), []byte("v"), nil, storagesvc.Cond{IfMatch: "x"})
	c.is("Put if-match of an absent object", err, storagesvc.ErrPreconditionFailed)
	c.is("Delete of an absent object", c.svc.Delete(c.ctx, c.key("nothing"), storagesvc.Cond{}), nil)
	c.is("Delete if-match of an absent object", c.svc.Delete(c.ctx, c.key("nothing"), storagesvc.Cond{IfMatch: "x"}), storagesvc.ErrPreconditionFailed)
	c.absent("nothing") // none of the failed writes created it
	l, err := c.svc.List(c.ctx, c.prefix, "", 0)
	c.is("List", err, nil)
	if len(l.Entries) != 0 || l.Truncated {
		t.Fatalf("List of an empty prefix = %+v; want nothing", l)
	}
}

func testPutGetHead(t *testing.T, c *checker) {
	binary := string([]byte{0, 1, 2, 0xff, '\n', ' '})
	meta := storagesvc.Meta{"ballot": "3.1", "Mixed-Case": "v", "bin": binary, "empty": ""}
	e1 := c.put("a/b c/ü", []byte("hello"), meta, storagesvc.Cond{})
	c.get("a/b c/ü", []byte("hello"), meta, e1)
	e2 := c.put("a/b c/ü", nil, nil, storagesvc.Cond{})
	if e2 == e1 {
		t.Fatalf("overwrite kept ETag %s", e1)
	}
	c.get("a/b c/ü", nil, nil, e2) // read-after-write of an overwrite
	big := bytes.Repeat([]byte{0xab}, 70_000)
	e3 := c.put("big", big, storagesvc.Meta{"k": strings.Repeat("v", 4000)}, storagesvc.Cond{})
	c.get("big", big, storagesvc.Meta{"k": strings.Repeat("v", 4000)}, e3)
}

func testEveryWriteNewETag(t *testing.T, c *checker) {
	data, meta := []byte("same"), storagesvc.Meta{"m": "same"}
	seen := map[storagesvc.ETag]string{}
	note := func(e storagesvc.ETag, what string) {
		t.Helper()
		if prev, dup := seen[e]; dup {
			t.Fatalf("%s returned ETag %s, already returned by %s", what, e, prev)
		}
		seen[e] = what
	}
	e := c.put("k", data, meta, storagesvc.Cond{})
	note(e, "put 1")
	for i := 2; i <= 3; i++ {
		e = c.put("k", data, meta, storagesvc.Cond{IfMatch: e})
		note(e, fmt.Sprintf("put %d of the same bytes", i))
	}
	for i := 1; i <= 2; i++ {
		var err error
		e, err = c.svc.PutMeta(c.ctx, c.key("k"), meta, storagesvc.Cond{IfMatch: e})
		c.is("PutMeta of the same metadata", err, nil)
		note(e, fmt.Sprintf("put_meta %d of the same metadata", i))
	}
	// A key deleted and created again with the same bytes gets a fresh
	// ETag too: an ETag read before the delete must not match.
	c.is("Delete", c.svc.Delete(c.ctx, c.key("k"), storagesvc.Cond{}), nil)
	note(c.put("k", data, meta, storagesvc.Cond{IfNoneMatch: true}), "put after delete")
	note(c.put("other", data, meta, storagesvc.Cond{}), "put of another key")
}

func testCreateOnly(t *testing.T, c *checker) {
	create := storagesvc.Cond{IfNoneMatch: true}
	e := c.put("k", []byte("first"), nil, create)
	_, err := c.svc.Put(c.ctx, c.key("k"), []byte("second"), nil, create)
	c.is("second create-only Put", err, storagesvc.ErrPreconditionFailed)
	c.get("k", []byte("first"), nil, e)
	// After an unconditional delete and after a conditional one, create
	// works again.
	c.is("Delete", c.svc.Delete(c.ctx, c.key("k"), storagesvc.Cond{}), nil)
	e = c.put("k", []byte("third"), nil, create)
	c.is("Delete if-match", c.svc.Delete(c.ctx, c.key("k"), storagesvc.Cond{IfMatch: e}), nil)
	c.absent("k")
	e = c.put("k", []byte("fourth"), storagesvc.Meta{"m": "4"}, create)
	c.get("k", []byte("fourth"), storagesvc.Meta{"m": "4"}, e)
	_, err = c.svc.Put(c.ctx, c.key("k"), []byte("fifth"), nil, create)
	c.is("create-only Put over a recreated object", err, storagesvc.ErrPreconditionFailed)
}

func testIfMatch(t *testing.T, c *checker) {
	e0 := c.put("k", []byte("v0"), nil, storagesvc.Cond{})
	// Two writers both read e0; the first to write wins, the second fails
	// and leaves the first's write in place.
	e1 := c.put("k", []byte("w1"), storagesvc.Meta{"by": "1"}, storagesvc.Cond{IfMatch: e0})
	_, err := c.svc.Put(c.ctx, c.key("k"), []byte("w2"), storagesvc.Meta{"by": "2"}, storagesvc.Cond{IfMatch: e0})
	c.is("second writer's Put if-match a stale ETag", err, storagesvc.ErrPreconditionFailed)
	c.get("k", []byte("w1"), storagesvc.Meta{"by": "1"}, e1)
	_, err = c.svc.Put(c.ctx, c.key("k"), []byte("w3"), nil, storagesvc.Cond{IfMatch: "no-such-etag"})
	c.is("Put if-match a made-up ETag", err, storagesvc.ErrPreconditionFailed)
	_, err = c.svc.Put(c.ctx, c.key("other"), []byte("w"), nil, storagesvc.Cond{IfMatch: e1})
	c.is("Put if-match another object's ETag", err, storagesvc.ErrPreconditionFailed)
	c.put("k", []byte("w4"), nil, storagesvc.Cond{IfMatch: e1})
}

func testMetadataCAS(t *testing.T, c *checker) {
	data := []byte("the value, written once")
	e1 := c.put("k", data, storagesvc.Meta{"log": "1"}, storagesvc.Cond{})
	e2, err := c.svc.PutMeta(c.ctx, c.key("k"), storagesvc.Meta{"log": "2", "commit": "y"}, storagesvc.Cond{IfMatch: e1})
	c.is("PutMeta if-match", err, nil)
	if e2 == e1 || e2 == "" {
		t.Fatalf("PutMeta returned ETag %q after %q; want a new one", e2, e1)
	}
	c.get("k", data, storagesvc.Meta{"log": "2", "commit": "y"}, e2) // data untouched
	// A writer that read e1 must now fail, for metadata and for data:
	// the metadata-only change is visible to CAS.
	_, err = c.svc.PutMeta(c.ctx, c.key("k"), storagesvc.Meta{"log": "stale"}, storagesvc.Cond{IfMatch: e1})
	c.is("PutMeta if-match the ETag before a metadata-only change", err, storagesvc.ErrPreconditionFailed)
	_, err = c.svc.Put(c.ctx, c.key("k"), []byte("x"), nil, storagesvc.Cond{IfMatch: e1})
	c.is("Put if-match the ETag before a metadata-only change", err, storagesvc.ErrPreconditionFailed)
	_, err = c.svc.PutMeta(c.ctx, c.key("k"), nil, storagesvc.Cond{IfNoneMatch: true})
	c.is("PutMeta if-none-match", err, storagesvc.ErrInvalid)
	// Unconditional PutMeta, and clearing the metadata.
	e3, err := c.svc.PutMeta(c.ctx, c.key("k"), nil, storagesvc.Cond{})
	c.is("PutMeta unconditional", err, nil)
	c.get("k", data, nil, e3)
}

func testDeleteConditions(t *testing.T, c *checker) {
	e1 := c.put("k", []byte("v"), storagesvc.Meta{"m": "1"}, storagesvc.Cond{})
	e2, err := c.svc.PutMeta(c.ctx, c.key("k"), storagesvc.Meta{"m": "2"}, storagesvc.Cond{})
	c.is("PutMeta", err, nil)
	c.is("Delete if-match a stale ETag", c.svc.Delete(c.ctx, c.key("k"), storagesvc.Cond{IfMatch: e1}), storagesvc.ErrPreconditionFailed)
	c.get("k", []byte("v"), storagesvc.Meta{"m": "2"}, e2)
	c.is("Delete if-none-match", c.svc.Delete(c.ctx, c.key("k"), storagesvc.Cond{IfNoneMatch: true}), storagesvc.ErrInvalid)
	c.is("Delete if-match", c.svc.Delete(c.ctx, c.key("k"), storagesvc.Cond{IfMatch: e2}), nil)
	c.absent("k")
	c.is("second Delete if-match", c.svc.Delete(c.ctx, c.key("k"), storagesvc.Cond{IfMatch: e2}), storagesvc.ErrPreconditionFailed)
	_, err = c.svc.Put(c.ctx, c.key("k"), []byte("v"), nil, storagesvc.Cond{IfMatch: e2})
	c.is("Put if-match the deleted object's ETag", err, storagesvc.ErrPreconditionFailed)
	_, err = c.svc.PutMeta(c.ctx, c.key("k"), nil, storagesvc.Cond{})
	c.is("PutMeta of the deleted object", err, storagesvc.ErrNotFound)
	l, err := c.svc.List(c.ctx, c.prefix, "", 0)
	c.is("List", err, nil)
	if len(l.Entries) != 0 {
		t.Fatalf("List after deletes = %+v; want nothing", l.Entries)
	}
	c.is("unconditional Delete of the deleted object", c.svc.Delete(c.ctx, c.key("k"), storagesvc.Cond{}), nil)
}

func testListPagination(t *testing.T, c *checker) {
	// No key is another's prefix followed by "/" ("d" beside "d/a"):
	// MinIO refuses that pair (an object cannot also be a directory on
	// its disks), though S3 allows it.
	names := []string{"d/a", "d/b", "d/bx", "d/c", "d/c0", "d/e", "d/z", "e", "d0", "c"}
	want := map[string]storagesvc.Entry{}
	for i, n := range names {
		data := bytes.Repeat([]byte{'x'}, i)
		e := c.put(n, data, storagesvc.Meta{"i": fmt.Sprint(i)}, storagesvc.Cond{})
		want[c.key(n)] = storagesvc.Entry{Key: c.key(n), ETag: e}
	}
	c.is("Delete d/c0", c.svc.Delete(c.ctx, c.key("d/c0"), storagesvc.Cond{}), nil)
	delete(want, c.key("d/c0"))
	under := func(p string) []string {
		var out []string
		for k := range want { // lint:order-independent: sorted below
			if strings.HasPrefix(k, p) {
				out = append(out, k)
			}
		}
		slices.Sort(out)
		return out
	}
	// Every page size walks the same keys, in order, each once.
	for _, limit := range []int{1, 2, 3, 5, 0} {
		for _, p := range []string{c.key("d/"), c.key(""), c.key("d/b"), c.key("none")} {
			var got []string
			after := ""
			for pages := 0; ; pages++ {
				if pages > 20 {
					t.Fatalf("List(%q, limit %d) did not end", p, limit)
				}
				l, err := c.svc.List(c.ctx, p, after, limit)
				c.is(fmt.Sprintf("List(%q, %q, %d)", p, after, limit), err, nil)
				if limit > 0 && len(l.Entries) > limit {
					t.Fatalf("List(%q, %q, %d) returned %d entries", p, after, limit, len(l.Entries))
				}
				for _, e := range l.Entries {
					if w := want[e.Key]; e != w {
						t.Fatalf("List(%q) entry %+v; want %+v", p, e, w)
					}
					got = append(got, e.Key)
				}
				if !l.Truncated {
					break
				}
				if len(l.Entries) == 0 {
					t.Fatalf("List(%q, %q, %d) is truncated with no entries", p, after, limit)
				}
				after = l.Entries[len(l.Entries)-1].Key
			}
			if w := under(p); !slices.Equal(got, w) {
				t.Fatalf("List(%q) in pages of %d = %q; want %q", p, limit, got, w)
			}
		}
	}
	// StartAfter need not be a key, and may sort before the prefix.
	l, err := c.svc.List(c.ctx, c.key("d/"), c.key("d/bz"), 2)
	c.is("List after a non-key", err, nil)
	if len(l.Entries) != 2 || l.Entries[0].Key != c.key("d/c") || l.Entries[1].Key != c.key("d/e") || !l.Truncated {
		t.Fatalf("List(d/, after d/bz, 2) = %+v; want d/c, d/e, truncated", l)
	}
	l, err = c.svc.List(c.ctx, c.key("d/"), c.key("a"), 1)
	c.is("List after a key before the prefix", err, nil)
	if len(l.Entries) != 1 || l.Entries[0].Key != c.key("d/a") {
		t.Fatalf("List(d/, after a, 1) = %+v; want d/a", l)
	}
	// An exact fit is not truncated... or is, harmlessly: a service may
	// not know. S3 reports it exactly, and so must every backend here.
	l, err = c.svc.List(c.ctx, c.key("d/b"), "", 2)
	c.is("List of an exact page", err, nil)
	if len(l.Entries) != 2 || l.Truncated {
		t.Fatalf("List(d/b, 2) = %+v; want 2 entries, not truncated", l)
	}
}

func testInvalid(t *testing.T, c *checker) {
	long := c.key(strings.Repeat("k", storagesvc.MaxKeyBytes))
	_, err := c.svc.Put(c.ctx, long, nil, nil, storagesvc.Cond{})
	c.is("Put of a too long key", err, storagesvc.ErrInvalid)
	_, err = c.svc.Put(c.ctx, "", nil, nil, storagesvc.Cond{})
	c.is("Put of an empty key", err, storagesvc.ErrInvalid)
	_, err = c.svc.Put(c.ctx, c.key("k"), nil, storagesvc.Meta{"m": strings.Repeat("v", storagesvc.MaxMetaBytes)}, storagesvc.Cond{})
	c.is("Put of too much metadata", err, storagesvc.ErrInvalid)
	_, err = c.svc.Put(c.ctx, c.key("k"), nil, nil, storagesvc.Cond{IfMatch: "x", IfNoneMatch: true})
	c.is("Put with both conditions", err, storagesvc.ErrInvalid)
	_, err = c.svc.List(c.ctx, c.prefix, "", storagesvc.MaxListLimit+1)
	c.is("List beyond the limit", err, storagesvc.ErrInvalid)
	c.absent("k")
}

// testRace runs writers at once, as separate goroutines: of those that
// CAS from one ETag exactly one wins, and increments retried under CAS
// lose none.
func testRace(t *testing.T, c *checker) {
	const writers = 8
	e0 := c.put("k", []byte("0"), nil, storagesvc.Cond{})
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				_, errs[i] = c.svc.Put(c.ctx, c.key("k"), []byte(fmt.Sprint(i)), nil, storagesvc.Cond{IfMatch: e0})
			} else {
				_, errs[i] = c.svc.PutMeta(c.ctx, c.key("k"), storagesvc.Meta{"w": fmt.Sprint(i)}, storagesvc.Cond{IfMatch: e0})
			}
		}()
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, storagesvc.ErrPreconditionFailed):
			t.Fatalf("writer %d: %v; want success or ErrPreconditionFailed", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d CAS writers from one ETag won; want exactly 1 (errors %v)", won, writers, errs)
	}
	// Create-only from many writers: one wins.
	won = 0
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.svc.Put(c.ctx, c.key("new"), []byte(fmt.Sprint(i)), nil, storagesvc.Cond{IfNoneMatch: true})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err == nil {
			won++
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d create-only writers won; want exactly 1 (errors %v)", won, writers, errs)
	}
	// Counter increments: read, CAS, retry on a failed condition.
	const perWriter = 5
	c.put("n", []byte("0"), nil, storagesvc.Cond{})
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < perWriter; {
				o, err := c.svc.Get(c.ctx, c.key("n"))
				if err != nil {
					errs[i] = err
					return
				}
				var n int
				fmt.Sscan(string(o.Data), &n)
				// Alternate data and metadata writes: a metadata-only
				// write in between must also make a stale CAS fail.
				if _, err = c.svc.Put(c.ctx, c.key("n"), []byte(fmt.Sprint(n+1)), storagesvc.Meta{"by": fmt.Sprint(i)}, storagesvc.Cond{IfMatch: o.ETag}); err == nil {
					done++
					if _, err = c.svc.PutMeta(c.ctx, c.key("n"), storagesvc.Meta{"touched": fmt.Sprint(i)}, storagesvc.Cond{}); err != nil {
						errs[i] = err
						return
					}
				} else if !errors.Is(err, storagesvc.ErrPreconditionFailed) {
					errs[i] = err
					return
				}
			}
			errs[i] = nil
		}()
	}
	wg.Wait()
	for i, err := range errs[:4] {
		if err != nil {
			t.Fatalf("incrementer %d: %v", i, err)
		}
	}
	o, err := c.svc.Get(c.ctx, c.key("n"))
	c.is("Get counter", err, nil)
	if string(o.Data) != fmt.Sprint(4*perWriter) {
		t.Fatalf("counter = %s after %d CAS increments; want %d", o.Data, 4*perWriter, 4*perWriter)
	}
}
