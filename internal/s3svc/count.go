package s3svc

import (
	"net/http"
	"strings"
	"sync/atomic"
)

// RequestFunc is told the S3 API name of every HTTP request the adapter
// sends ("GetObject", "PutObject", "HeadObject", "DeleteObject",
// "CopyObject", "ListObjectsV2", "GetBucketLocation", "HeadBucket",
// "PutBucket"): the requests a provider bills, named as MinIO's
// minio_api_requests_total names them.
type RequestFunc func(api string)

// OnRequest sets f to be told of every request from now on (nil: none).
// The cost accountant uses it: one storagesvc operation is one to three
// S3 requests depending on its path (package doc), so an S3 backend is
// billed by what it sent, not by a fixed ratio.
func (s *Service) OnRequest(f RequestFunc) {
	if f == nil {
		s.onRequest.Store(nil)
		return
	}
	s.onRequest.Store(&f)
}

// counting is the adapter's HTTP transport: it names each request for
// OnRequest, then sends it.
type counting struct {
	base http.RoundTripper
	fn   *atomic.Pointer[RequestFunc]
}

func (c counting) RoundTrip(req *http.Request) (*http.Response, error) {
	if f := c.fn.Load(); f != nil {
		(*f)(apiOf(req))
	}
	return c.base.RoundTrip(req)
}

// apiOf names an S3 request by its method, path (path-style: /bucket or
// /bucket/key) and query, as S3 and MinIO name them.
func apiOf(req *http.Request) string {
	path := strings.TrimPrefix(req.URL.Path, "/")
	object := strings.Contains(path, "/") && !strings.HasSuffix(path, "/")
	q := req.URL.Query()
	switch req.Method {
	case http.MethodGet:
		switch {
		case q.Has("location"):
			return "GetBucketLocation"
		case object:
			return "GetObject"
		case q.Get("list-type") == "2":
			return "ListObjectsV2"
		default:
			return "ListObjects"
		}
	case http.MethodHead:
		if object {
			return "HeadObject"
		}
		return "HeadBucket"
	case http.MethodPut:
		switch {
		case !object:
			return "PutBucket"
		case req.Header.Get("X-Amz-Copy-Source") != "":
			return "CopyObject"
		default:
			return "PutObject"
		}
	case http.MethodDelete:
		if object {
			return "DeleteObject"
		}
		return "DeleteBucket"
	case http.MethodPost:
		if q.Has("delete") {
			return "DeleteMultipleObjects"
		}
	}
	return req.Method
}
