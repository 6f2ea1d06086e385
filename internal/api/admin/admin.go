package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/lightcone/lightcone/internal/metrics"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Config configures the admin endpoint. The zero Config is valid: no
// metrics, no authentication, always ready, empty status, no logging.
type Config struct {
	// Metrics is the node's metrics, served on /metrics. If nil, /metrics
	// serves an empty registry.
	Metrics *metrics.Metrics
	// Token, if not empty, is the bearer token every endpoint except
	// /healthz and /readyz requires.
	Token string
	// Ready reports whether the node is ready to serve clients: nil when
	// ready, else why not. It is called on every /readyz request, so it
	// must be cheap and must not block. If nil, the node is always ready.
	Ready func() error
	// Status returns the node's status, served on /status as JSON; it must
	// be safe to call from the HTTP server's goroutines. If nil, or if it
	// returns nil, /status serves {}.
	Status func() any
	// Log receives errors and rejected requests. If nil, nothing is logged.
	Log *slog.Logger
}

// Server timeouts and limits used by NewServer.
const (
	// readHeaderTimeout bounds how long a client may take to send its
	// request headers, against slow-loris connections.
	readHeaderTimeout = 5 * time.Second
	// readTimeout bounds reading a whole request; admin requests have no
	// body worth waiting for.
	readTimeout = 10 * time.Second
	// writeTimeout bounds writing a response, a scrape of the whole
	// registry included.
	writeTimeout = 30 * time.Second
	// idleTimeout bounds how long a keep-alive connection may sit idle
	// between a scraper's requests.
	idleTimeout = 2 * time.Minute
	// maxHeaderBytes bounds request headers; a bearer token is small.
	maxHeaderBytes = 64 << 10
	// metricsInflightMax bounds concurrent scrapes; more get 503 rather
	// than queueing behind a slow gather.
	metricsInflightMax = 4
	// metricsTimeout bounds one gather, below writeTimeout so a slow
	// gather gets a 503 rather than a cut connection.
	metricsTimeout = 20 * time.Second
)

// NewServer returns an HTTP server, not yet started, that serves the admin
// endpoint of cfg on addr with timeouts that suit it.
func NewServer(addr string, cfg Config) *http.Server {
	log := logger(cfg.Log)
	return &http.Server{
		Addr:              addr,
		Handler:           NewHandler(cfg),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// NewHandler returns the handler of the admin endpoint of cfg; see the
// package documentation for what it serves.
func NewHandler(cfg Config) http.Handler {
	h := &handler{
		ready:  cfg.Ready,
		status: cfg.Status,
		log:    logger(cfg.Log),
	}
	if cfg.Token != "" {
		sum := sha256.Sum256([]byte(cfg.Token))
		h.tokenSum = &sum
	}
	reg := cfg.Metrics.Registry()
	h.routes = map[string]http.HandlerFunc{
		"/metrics": promhttp.HandlerFor(reg, promhttp.HandlerOpts{
			ErrorLog:            printer{h.log},
			ErrorHandling:       promhttp.ContinueOnError,
			EnableOpenMetrics:   true,
			MaxRequestsInFlight: metricsInflightMax,
			Timeout:             metricsTimeout,
		}).ServeHTTP,
		"/healthz": h.serveHealthz,
		"/readyz":  h.serveReadyz,
		"/status":  h.serveStatus,
	}
	return h
}

// open lists the paths that need no token.
var open = map[string]bool{"/healthz": true, "/readyz": true}

type handler struct {
	tokenSum *[sha256.Size]byte // nil: no authentication
	ready    func() error
	status   func() any
	log      *slog.Logger
	routes   map[string]http.HandlerFunc
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// Authentication comes first, so that without the token every path
	// but /healthz looks alike, existing or not.
	if !open[r.URL.Path] {
		if msg := h.authenticate(r); msg != "" {
			h.log.Debug("admin: unauthorized request", "path", r.URL.Path, "remote", r.RemoteAddr, "reason", msg)
			w.Header().Set("WWW-Authenticate", `Bearer realm="lightcone-admin"`)
			writeError(w, http.StatusUnauthorized, msg)
			return
		}
	}
	route, ok := h.routes[r.URL.Path]
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("admin: no endpoint %q", r.URL.Path))
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("admin: method %s not allowed", r.Method))
		return
	}
	route(w, r)
}

// authenticate returns why r is not authorized, or "" if it is.
func (h *handler) authenticate(r *http.Request) string {
	if h.tokenSum == nil {
		return ""
	}
	header := r.Header.Get("Authorization")
	if header == "" {
		return "admin: missing bearer token"
	}
	scheme, token, _ := strings.Cut(header, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "admin: authorization is not a bearer token"
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	if subtle.ConstantTimeCompare(sum[:], h.tokenSum[:]) != 1 {
		return "admin: invalid bearer token"
	}
	return ""
}

func (h *handler) serveHealthz(w http.ResponseWriter, _ *http.Request) {
	writeText(w, http.StatusOK, "ok")
}

func (h *handler) serveReadyz(w http.ResponseWriter, _ *http.Request) {
	if h.ready != nil {
		if err := h.ready(); err != nil {
			writeText(w, http.StatusServiceUnavailable, err.Error())
			return
		}
	}
	writeText(w, http.StatusOK, "ok")
}

func (h *handler) serveStatus(w http.ResponseWriter, _ *http.Request) {
	var v any
	if h.status != nil {
		v = h.status()
	}
	if v == nil {
		v = struct{}{}
	}
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		h.log.Error("admin: encoding status", "err", err)
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("admin: encoding status: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	// A write error means the client went away; there is no one to tell.
	_, _ = w.Write(append(body, '\n'))
}

func writeText(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	// A write error means the client went away; there is no one to tell.
	_, _ = w.Write([]byte(msg + "\n"))
}

func writeError(w http.ResponseWriter, code int, msg string) {
	body, err := json.Marshal(struct {
		Error string `json:"error"`
	}{msg})
	if err != nil {
		// Marshalling a struct of one string cannot fail.
		panic(fmt.Sprintf("admin: encoding error body: %v", err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	// A write error means the client went away; there is no one to tell.
	_, _ = w.Write(append(body, '\n'))
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// printer adapts a slog.Logger to promhttp.Logger.
type printer struct{ log *slog.Logger }

func (p printer) Println(v ...any) {
	p.log.Error("admin: serving metrics", "err", strings.TrimSuffix(fmt.Sprintln(v...), "\n"))
}
