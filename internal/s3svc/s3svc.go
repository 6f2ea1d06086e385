// Package s3svc is a storagesvc.Service over any S3-compatible object store
// (AWS S3, MinIO, ...), through minio-go. It gives storagesvc's semantics
// exactly (the conformance suite, internal/svctest, runs it against a real
// MinIO server) on a store with strong read-after-write consistency and
// conditional PutObject (If-Match, If-None-Match: *).
//
// # Object layout, and why
//
// The layer's ETag must change on every Put and every PutMeta, so that a
// CAS on metadata sees a metadata-only change. S3's ETag is the MD5 of the
// object's body: replacing user metadata (CopyObject with REPLACE) keeps
// it, and a stale If-Match would then succeed — a lost update. So this
// adapter keeps the metadata in the body, beside a random nonce drawn for
// every write, and uses S3's ETag as the layer's:
//
//	live object:  0x01 | nonce (16 bytes) | metadata (storagesvc.AppendMeta) | data
//	tombstone:    nonce (16 bytes)        (exactly 16 bytes: absent to readers)
//
// Each operation is then one conditional S3 write on one object, so its
// atomicity is S3's own:
//   - Get: one GET. Head: one ranged GET of the first 4 KiB (a second one,
//     If-Match the first's ETag, when the metadata is longer).
//   - Put: one PUT, If-Match or If-None-Match: * as asked. A create-only
//     Put that finds a tombstone replaces it by If-Match on the tombstone's
//     ETag (a HEAD and a PUT more).
//   - PutMeta: a GET and a PUT of the same data with the new metadata,
//     If-Match the ETag just read: two requests and the data twice on the
//     wire, where the reference service does it in one. (The alternative,
//     metadata in a sibling object pointing at immutable data objects,
//     makes PutMeta one small PUT but every Get two sequential GETs and
//     leaves orphans to collect; CRIC reads far more than it writes.)
//   - Delete: unconditional, one DELETE. S3 has no conditional delete
//     (MinIO ignores If-Match on DELETE), so Delete If-Match writes a
//     tombstone with If-Match: readers and List treat it as absent; it
//     costs 16 bytes of storage until an unconditional Delete.
//   - List: ListObjectsV2 pages, skipping tombstones (by their size).
//
// Errors: S3's 412 PreconditionFailed, and 404 NoSuchKey or 409
// ConditionalRequestConflict on a conditional write, are
// ErrPreconditionFailed; NoSuchKey on a read is ErrNotFound; everything else
// (timeouts, resets, 5xx, a missing bucket, bad credentials) is
// ErrUnavailable with the cause: the outcome of a write is unknown.
package s3svc

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/lightcone/lightcone/internal/storagesvc"
	"github.com/lightcone/lightcone/internal/wire"
)

// Config is one S3 endpoint and bucket. YAML names are given (the server's
// storage_services section).
type Config struct {
	// Endpoint is host:port, no scheme ("s3.us-east-1.amazonaws.com",
	// "127.0.0.1:9000").
	Endpoint string `yaml:"endpoint"`
	// TLS says to use https. Default false (http).
	TLS bool `yaml:"tls"`
	// Bucket holds the objects; it must exist (EnsureBucket creates it).
	Bucket string `yaml:"bucket"`
	// Prefix is prepended to every key, so several services may share a
	// bucket; List strips it. Default none.
	Prefix string `yaml:"prefix"`
	// AccessKey and SecretKey are the credentials (static).
	AccessKey string `yaml:"access_key"`
	SecretKey string `yaml:"secret_key"`
	// Region is the bucket's S3 region name ("us-east-1"); default: ask
	// the endpoint.
	Region string `yaml:"region"`
}

// Validate reports the first missing field.
func (c Config) Validate() error {
	switch {
	case c.Endpoint == "":
		return errors.New("s3: endpoint: required (host:port)")
	case strings.Contains(c.Endpoint, "://"):
		return fmt.Errorf("s3: endpoint %q: give host:port without a scheme (set tls for https)", c.Endpoint)
	case c.Bucket == "":
		return errors.New("s3: bucket: required")
	}
	return nil
}

// Service is a storagesvc.Service on one bucket. It is safe for concurrent
// use.
type Service struct {
	core      *minio.Core
	bucket    string
	prefix    string
	onRequest atomic.Pointer[RequestFunc] // OnRequest
}

// New connects nothing yet: requests open connections as needed.
func New(c Config) (*Service, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	s := &Service{bucket: c.Bucket, prefix: c.Prefix}
	base, err := minio.DefaultTransport(c.TLS)
	if err != nil {
		return nil, fmt.Errorf("s3: %w", err)
	}
	cl, err := minio.NewCore(c.Endpoint, &minio.Options{
		Creds:     credentials.NewStaticV4(c.AccessKey, c.SecretKey, ""),
		Secure:    c.TLS,
		Region:    c.Region,
		Transport: counting{base: base, fn: &s.onRequest},
		// The layer's own retry is the protocol's: a request is one
		// attempt, so a timeout means exactly one unknown outcome.
		MaxRetries: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("s3: %w", err)
	}
	s.core = cl
	return s, nil
}

// EnsureBucket creates the bucket if it does not exist (tests, tools).
func (s *Service) EnsureBucket(ctx context.Context) error {
	ok, err := s.core.BucketExists(ctx, s.bucket)
	if err == nil && !ok {
		err = s.core.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{})
	}
	if err != nil {
		return fmt.Errorf("s3: bucket %s: %w", s.bucket, err)
	}
	return nil
}

const (
	formatLive   = 0x01
	nonceLen     = 16
	tombstoneLen = nonceLen
	// headBytes is what Head reads first: metadata shorter than this
	// (almost all) costs one request.
	headBytes = 4096
	// retries bounds the loops that re-read after a concurrent change
	// (an unconditional PutMeta, a create over a tombstone).
	retries = 8
)

func nonce() []byte {
	b := make([]byte, nonceLen)
	_, _ = crand.Read(b) // never fails (crypto/rand's contract)
	return b
}

// body is a live object's body.
func body(meta storagesvc.Meta, data []byte) []byte {
	b := make([]byte, 0, 1+nonceLen+16+storagesvc.MetaSize(meta)+len(data))
	b = append(b, formatLive)
	b = append(b, nonce()...)
	b = storagesvc.AppendMeta(b, meta)
	return append(b, data...)
}

// parseHeader reads a live body's header from its first bytes: the
// metadata and the header's length. ok false: b is too short to hold it.
func parseHeader(b []byte) (meta storagesvc.Meta, n int, ok bool, err error) {
	if len(b) < 1+nonceLen || b[0] != formatLive {
		return nil, 0, false, fmt.Errorf("%w: s3: not an object of this layer (format byte %x, %d bytes)", storagesvc.ErrUnavailable, b[:min(len(b), 1)], len(b))
	}
	d := wire.NewDecoder(b[1+nonceLen:])
	meta = storagesvc.DecodeMeta(d)
	if errors.Is(d.Err(), wire.ErrTruncated) {
		return nil, 0, false, nil
	}
	if d.Err() != nil {
		return nil, 0, false, fmt.Errorf("%w: s3: object header: %v", storagesvc.ErrUnavailable, d.Err())
	}
	return meta, len(b) - d.Len(), true, nil
}

func trimETag(e string) storagesvc.ETag { return storagesvc.ETag(strings.Trim(e, `"`)) }

// mapErr turns an S3 error into the layer's; conditional says the request
// carried a precondition.
func mapErr(err error, conditional bool) error {
	if err == nil {
		return nil
	}
	r := minio.ToErrorResponse(err)
	switch {
	case r.StatusCode == 412 || r.Code == "PreconditionFailed",
		conditional && (r.Code == "NoSuchKey" || r.StatusCode == 409):
		return fmt.Errorf("%w: s3: %s", storagesvc.ErrPreconditionFailed, r.Code)
	case r.Code == "NoSuchKey":
		return storagesvc.ErrNotFound
	case r.Code == "KeyTooLongError":
		return fmt.Errorf("%w: s3: %s", storagesvc.ErrInvalid, r.Code)
	}
	return fmt.Errorf("%w: s3: %v", storagesvc.ErrUnavailable, err)
}

// put writes a raw body under cond (IfMatch an S3 ETag, or IfNoneMatch).
func (s *Service) put(ctx context.Context, key string, b []byte, cond storagesvc.Cond) (storagesvc.ETag, error) {
	opts := minio.PutObjectOptions{DisableMultipart: true, ContentType: "application/octet-stream"}
	switch {
	case cond.IfMatch != "":
		opts.SetMatchETag(string(cond.IfMatch))
	case cond.IfNoneMatch:
		opts.SetMatchETagExcept("*")
	}
	info, err := s.core.PutObject(ctx, s.bucket, s.prefix+key, bytes.NewReader(b), int64(len(b)), "", "", opts)
	if err != nil {
		return "", mapErr(err, !cond.IsZero())
	}
	return trimETag(info.ETag), nil
}

// raw reads a whole body and its S3 ETag; a tombstone is ErrNotFound with
// its ETag (tomb true).
func (s *Service) raw(ctx context.Context, key string) (b []byte, etag storagesvc.ETag, tomb bool, err error) {
	rc, info, _, err := s.core.GetObject(ctx, s.bucket, s.prefix+key, minio.GetObjectOptions{})
	if err != nil {
		return nil, "", false, mapErr(err, false)
	}
	defer rc.Close()
	if b, err = io.ReadAll(io.LimitReader(rc, 1+nonceLen+16+storagesvc.MaxMetaBytes*5+storagesvc.MaxDataBytes)); err != nil {
		return nil, "", false, mapErr(err, false)
	}
	if len(b) == tombstoneLen {
		return nil, trimETag(info.ETag), true, storagesvc.ErrNotFound
	}
	return b, trimETag(info.ETag), false, nil
}

// Get implements storagesvc.Service.
func (s *Service) Get(ctx context.Context, key string) (*storagesvc.Object, error) {
	if err := storagesvc.CheckKey(key); err != nil {
		return nil, err
	}
	b, etag, _, err := s.raw(ctx, key)
	if err != nil {
		return nil, err
	}
	meta, n, ok, err := parseHeader(b)
	if err == nil && !ok {
		err = fmt.Errorf("%w: s3: %s: truncated object header", storagesvc.ErrUnavailable, key)
	}
	if err != nil {
		return nil, err
	}
	var data []byte
	if len(b) > n {
		data = b[n:]
	}
	return &storagesvc.Object{Key: key, Data: data, Meta: meta, ETag: etag, Size: int64(len(b) - n)}, nil
}

// Head implements storagesvc.Service.
func (s *Service) Head(ctx context.Context, key string) (*storagesvc.Object, error) {
	if err := storagesvc.CheckKey(key); err != nil {
		return nil, err
	}
	want := int64(headBytes)
	var match storagesvc.ETag
	for range retries {
		opts := minio.GetObjectOptions{}
		if err := opts.SetRange(0, want-1); err != nil {
			return nil, fmt.Errorf("%w: s3: %v", storagesvc.ErrInvalid, err)
		}
		if match != "" {
			_ = opts.SetMatchETag(string(match)) // never fails for a non-empty ETag
		}
		rc, info, hdr, err := s.core.GetObject(ctx, s.bucket, s.prefix+key, opts)
		if err != nil {
			if match != "" && errors.Is(mapErr(err, true), storagesvc.ErrPreconditionFailed) {
				match, want = "", headBytes // changed between the two reads: start again
				continue
			}
			return nil, mapErr(err, false)
		}
		b, err := io.ReadAll(io.LimitReader(rc, want))
		rc.Close()
		if err != nil {
			return nil, mapErr(err, false)
		}
		total, err := totalSize(hdr.Get("Content-Range"), int64(len(b)))
		if err != nil {
			return nil, err
		}
		if total == tombstoneLen {
			return nil, storagesvc.ErrNotFound
		}
		meta, n, ok, err := parseHeader(b)
		if err != nil {
			return nil, err
		}
		if !ok {
			if int64(len(b)) >= total {
				return nil, fmt.Errorf("%w: s3: %s: truncated object header", storagesvc.ErrUnavailable, key)
			}
			// Longer metadata: read its whole header, from the same
			// state of the object.
			match, want = trimETag(info.ETag), 1+nonceLen+16+storagesvc.MaxMetaBytes*5
			continue
		}
		return &storagesvc.Object{Key: key, Meta: meta, ETag: trimETag(info.ETag), Size: total - int64(n)}, nil
	}
	return nil, fmt.Errorf("%w: s3: %s kept changing while its metadata was read", storagesvc.ErrUnavailable, key)
}

// totalSize reads an object's size from a ranged GET's Content-Range
// ("bytes 0-4095/12345"); with none, the body was the whole object.
func totalSize(cr string, got int64) (int64, error) {
	if cr == "" {
		return got, nil
	}
	i := strings.LastIndexByte(cr, '/')
	n, err := strconv.ParseInt(cr[i+1:], 10, 64)
	if i < 0 || err != nil {
		return 0, fmt.Errorf("%w: s3: Content-Range %q", storagesvc.ErrUnavailable, cr)
	}
	return n, nil
}

// Put implements storagesvc.Service.
func (s *Service) Put(ctx context.Context, key string, data []byte, meta storagesvc.Meta, cond storagesvc.Cond) (storagesvc.ETag, error) {
	if err := storagesvc.CheckWrite(key, data, meta, cond, false); err != nil {
		return "", err
	}
	if !cond.IfNoneMatch {
		return s.put(ctx, key, body(meta, data), cond)
	}
	for range retries {
		etag, err := s.put(ctx, key, body(meta, data), cond)
		if !errors.Is(err, storagesvc.ErrPreconditionFailed) {
			return etag, err
		}
		// Something is there: a live object (the create fails) or a
		// tombstone (replace it, by CAS on its ETag).
		info, err := s.core.StatObject(ctx, s.bucket, s.prefix+key, minio.StatObjectOptions{})
		if err != nil {
			if errors.Is(mapErr(err, false), storagesvc.ErrNotFound) {
				continue // deleted meanwhile: create again
			}
			return "", mapErr(err, false)
		}
		if info.Size != tombstoneLen {
			return "", storagesvc.ErrPreconditionFailed
		}
		etag, err = s.put(ctx, key, body(meta, data), storagesvc.Cond{IfMatch: trimETag(info.ETag)})
		if !errors.Is(err, storagesvc.ErrPreconditionFailed) {
			return etag, err
		}
	}
	return "", fmt.Errorf("%w: s3: %s kept changing during a create", storagesvc.ErrUnavailable, key)
}

// PutMeta implements storagesvc.Service.
func (s *Service) PutMeta(ctx context.Context, key string, meta storagesvc.Meta, cond storagesvc.Cond) (storagesvc.ETag, error) {
	if err := storagesvc.CheckWrite(key, nil, meta, cond, true); err != nil {
		return "", err
	}
	for range retries {
		b, etag, _, err := s.raw(ctx, key)
		if errors.Is(err, storagesvc.ErrNotFound) && cond.IfMatch != "" {
			return "", storagesvc.ErrPreconditionFailed
		}
		if err != nil {
			return "", err
		}
		if cond.IfMatch != "" && etag != cond.IfMatch {
			return "", storagesvc.ErrPreconditionFailed
		}
		_, n, ok, err := parseHeader(b)
		if err == nil && !ok {
			err = fmt.Errorf("%w: s3: %s: truncated object header", storagesvc.ErrUnavailable, key)
		}
		if err != nil {
			return "", err
		}
		// The same data, the new metadata, a new nonce; If-Match the state
		// just read, so the data cannot have changed underneath.
		newETag, err := s.put(ctx, key, body(meta, b[n:]), storagesvc.Cond{IfMatch: etag})
		if !errors.Is(err, storagesvc.ErrPreconditionFailed) || cond.IfMatch != "" {
			return newETag, err
		}
		// Unconditional, and the object changed since the read: again.
	}
	return "", fmt.Errorf("%w: s3: %s kept changing during put_meta", storagesvc.ErrUnavailable, key)
}

// List implements storagesvc.Service. It asks for one ListObjectsV2 page
// at a time and no more than it needs: minio-go's ListObjects iterator
// fetches the next page as soon as it has handed over the last object of
// one, so a List that stopped there sent (and the cost accountant
// counted) a request its return then cancelled, which S3 may or may not
// have received (TestMinIORequestCounts saw MinIO count 1 ListObjectsV2
// against the adapter's 2).
func (s *Service) List(ctx context.Context, prefix, startAfter string, limit int) (*storagesvc.ListResult, error) {
	limit, err := storagesvc.CheckList(prefix, startAfter, limit)
	if err != nil {
		return nil, err
	}
	if startAfter != "" {
		startAfter = s.prefix + startAfter
	}
	res := &storagesvc.ListResult{}
	for token := ""; ; {
		page, err := s.listPage(ctx, s.prefix+prefix, startAfter, token, min(limit+1, storagesvc.MaxListLimit))
		if err != nil {
			return nil, mapErr(err, false)
		}
		for _, o := range page.Contents {
			if o.Size == tombstoneLen {
				continue
			}
			if len(res.Entries) == limit {
				res.Truncated = true
				return res, nil
			}
			res.Entries = append(res.Entries, storagesvc.Entry{Key: strings.TrimPrefix(o.Key, s.prefix), ETag: trimETag(o.ETag)})
		}
		if !page.IsTruncated || page.NextContinuationToken == "" {
			return res, nil
		}
		token = page.NextContinuationToken
	}
}

// listPage sends one ListObjectsV2 request. minio-go's Core sends it
// without a context: if ctx ends first, listPage returns and the request
// finishes unread.
func (s *Service) listPage(ctx context.Context, prefix, startAfter, token string, maxKeys int) (minio.ListBucketV2Result, error) {
	type page struct {
		r   minio.ListBucketV2Result
		err error
	}
	ch := make(chan page, 1)
	go func() {
		r, err := s.core.ListObjectsV2(s.bucket, prefix, startAfter, token, "", maxKeys)
		ch <- page{r, err}
	}()
	select {
	case p := <-ch:
		return p.r, p.err
	case <-ctx.Done():
		return minio.ListBucketV2Result{}, ctx.Err()
	}
}

// Delete implements storagesvc.Service.
func (s *Service) Delete(ctx context.Context, key string, cond storagesvc.Cond) error {
	if err := storagesvc.CheckDelete(key, cond); err != nil {
		return err
	}
	if cond.IfMatch == "" {
		return mapErr(s.core.RemoveObject(ctx, s.bucket, s.prefix+key, minio.RemoveObjectOptions{}), false)
	}
	_, err := s.put(ctx, key, nonce(), cond)
	return err
}

var _ storagesvc.Service = (*Service)(nil)
