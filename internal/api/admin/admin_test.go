package admin

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/metrics"
)

// do serves one request to h and returns the response's code, headers and
// body.
func do(t *testing.T, h http.Handler, method, path, auth string) (int, http.Header, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Header(), rec.Body.String()
}

// jsonError decodes an error body, failing the test if it is not one.
func jsonError(t *testing.T, body string) string {
	t.Helper()
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == "" {
		t.Fatalf("body %q is not a JSON error (%v)", body, err)
	}
	return e.Error
}

func TestMetricsEndpoint(t *testing.T) {
	m := metrics.New(metrics.Labels{Node: "n1", Region: "eu", Keyspace: "ks", Protocol: "globlease"})
	m.Request("get", "strong", 4*time.Millisecond, metrics.CodeOK)
	m.MessageSent("lease_renew", 64)
	h := NewHandler(Config{Metrics: m})
	code, hdr, body := do(t, h, http.MethodGet, "/metrics", "")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics = %d; want 200; body:\n%s", code, body)
	}
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("GET /metrics Content-Type = %q; want text/plain", ct)
	}
	for _, want := range []string{
		`lightcone_requests_total{code="ok",keyspace="ks",level="strong",node="n1",op="get",protocol="globlease",region="eu"} 1`,
		`lightcone_message_bytes_sent_total{keyspace="ks",kind="lease_renew",node="n1",protocol="globlease",region="eu"} 64`,
		`lightcone_request_duration_seconds_bucket{`,
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /metrics lacks %q", want)
		}
	}
}

func TestMetricsEndpointWithoutMetrics(t *testing.T) {
	h := NewHandler(Config{})
	code, _, body := do(t, h, http.MethodGet, "/metrics", "")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics = %d; want 200", code)
	}
	if strings.Contains(body, "lightcone_") || strings.Contains(body, "go_") {
		t.Errorf("GET /metrics with nil Metrics = %q; want an empty registry", body)
	}
}

func TestAuth(t *testing.T) {
	h := NewHandler(Config{Token: "s3cret", Metrics: metrics.New(metrics.Labels{Node: "n1"})})
	tests := []struct {
		path, auth string
		want       int
	}{
		{"/metrics", "", http.StatusUnauthorized},
		{"/metrics", "Bearer wrong", http.StatusUnauthorized},
		{"/metrics", "Bearer s3cre", http.StatusUnauthorized},
		{"/metrics", "Bearer s3crett", http.StatusUnauthorized},
		{"/metrics", "Basic s3cret", http.StatusUnauthorized},
		{"/metrics", "s3cret", http.StatusUnauthorized},
		{"/metrics", "Bearer s3cret", http.StatusOK},
		{"/metrics", "bearer s3cret", http.StatusOK},
		{"/readyz", "", http.StatusOK},
		{"/readyz", "Bearer s3cret", http.StatusOK},
		{"/status", "", http.StatusUnauthorized},
		{"/status", "Bearer s3cret", http.StatusOK},
		{"/nope", "", http.StatusUnauthorized},
		{"/nope", "Bearer s3cret", http.StatusNotFound},
		{"/healthz", "", http.StatusOK},
		{"/healthz", "Bearer wrong", http.StatusOK},
	}
	for _, tt := range tests {
		code, hdr, body := do(t, h, http.MethodGet, tt.path, tt.auth)
		if code != tt.want {
			t.Errorf("GET %s with Authorization %q = %d; want %d", tt.path, tt.auth, code, tt.want)
			continue
		}
		if code == http.StatusUnauthorized {
			if msg := jsonError(t, body); !strings.HasPrefix(msg, "admin: ") {
				t.Errorf("GET %s with Authorization %q error = %q; want an admin: error", tt.path, tt.auth, msg)
			}
			if hdr.Get("WWW-Authenticate") == "" {
				t.Errorf("GET %s with Authorization %q: 401 without WWW-Authenticate", tt.path, tt.auth)
			}
		}
	}
}

func TestHealthz(t *testing.T) {
	h := NewHandler(Config{Ready: func() error { return errors.New("not ready") }})
	code, _, body := do(t, h, http.MethodGet, "/healthz", "")
	if code != http.StatusOK || strings.TrimSpace(body) != "ok" {
		t.Errorf("GET /healthz = %d %q; want 200 \"ok\"", code, body)
	}
}

func TestReadyz(t *testing.T) {
	var readyErr error
	tests := []struct {
		name     string
		cfg      Config
		err      error
		wantCode int
		wantBody string
	}{
		{"nil func", Config{}, nil, http.StatusOK, "ok"},
		{"ready", Config{Ready: func() error { return readyErr }}, nil, http.StatusOK, "ok"},
		{"not ready", Config{Ready: func() error { return readyErr }}, errors.New("store: not open"), http.StatusServiceUnavailable, "store: not open"},
	}
	for _, tt := range tests {
		readyErr = tt.err
		code, _, body := do(t, NewHandler(tt.cfg), http.MethodGet, "/readyz", "")
		if code != tt.wantCode || strings.TrimSpace(body) != tt.wantBody {
			t.Errorf("%s: GET /readyz = %d %q; want %d %q", tt.name, code, body, tt.wantCode, tt.wantBody)
		}
	}
}

func TestStatus(t *testing.T) {
	type leaseStatus struct {
		Master string `json:"master"`
		Epoch  int    `json:"epoch"`
	}
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"nil func", Config{}, "{}"},
		{"nil value", Config{Status: func() any { return nil }}, "{}"},
		{"value", Config{Status: func() any { return leaseStatus{"n2", 7} }}, "{\n  \"master\": \"n2\",\n  \"epoch\": 7\n}"},
	}
	for _, tt := range tests {
		code, hdr, body := do(t, NewHandler(tt.cfg), http.MethodGet, "/status", "")
		if code != http.StatusOK || strings.TrimSpace(body) != tt.want {
			t.Errorf("%s: GET /status = %d %q; want 200 %q", tt.name, code, body, tt.want)
		}
		if ct := hdr.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: GET /status Content-Type = %q; want application/json", tt.name, ct)
		}
	}
}

func TestStatusEncodingError(t *testing.T) {
	h := NewHandler(Config{Status: func() any { return func() {} }})
	code, _, body := do(t, h, http.MethodGet, "/status", "")
	if code != http.StatusInternalServerError {
		t.Fatalf("GET /status of a func = %d; want 500", code)
	}
	jsonError(t, body)
}

func TestNotFound(t *testing.T) {
	h := NewHandler(Config{})
	for _, path := range []string{"/", "/metrics/", "/debug/pprof/", "/statusx"} {
		code, hdr, body := do(t, h, http.MethodGet, path, "")
		if code != http.StatusNotFound {
			t.Errorf("GET %s = %d; want 404", path, code)
			continue
		}
		if ct := hdr.Get("Content-Type"); ct != "application/json" {
			t.Errorf("GET %s Content-Type = %q; want application/json", path, ct)
		}
		jsonError(t, body)
	}
}

func TestMethods(t *testing.T) {
	h := NewHandler(Config{})
	for _, path := range []string{"/metrics", "/healthz", "/readyz", "/status"} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			code, hdr, body := do(t, h, method, path, "")
			if code != http.StatusMethodNotAllowed {
				t.Errorf("%s %s = %d; want 405", method, path, code)
				continue
			}
			if allow := hdr.Get("Allow"); allow != "GET, HEAD" {
				t.Errorf("%s %s Allow = %q; want \"GET, HEAD\"", method, path, allow)
			}
			jsonError(t, body)
		}
		if code, _, _ := do(t, h, http.MethodHead, path, ""); code != http.StatusOK {
			t.Errorf("HEAD %s = %d; want 200", path, code)
		}
	}
}

func TestNewServer(t *testing.T) {
	srv := NewServer("127.0.0.1:0", Config{Token: "t"})
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Errorf("NewServer timeouts = header %v, read %v, write %v, idle %v; want all set",
			srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout)
	}
	ln, err := net.Listen("tcp", srv.Addr)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve = %v; want http.ErrServerClosed", err)
		}
	}()
	resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
		t.Errorf("GET /healthz = %d %q (%v); want 200 \"ok\"", resp.StatusCode, body, err)
	}
}
