// Package admin serves a Lightcone node's HTTP admin endpoint: the
// operator's and the monitoring system's view of one node, separate from the
// client protocols.
//
// Endpoints, all GET or HEAD only (other methods get 405):
//
//	/metrics  the node's Prometheus registry (see package metrics)
//	/healthz  200 "ok" while the process serves HTTP: liveness
//	/readyz   200 "ok" when Config.Ready reports no error, else 503 with
//	          the error text: readiness, e.g. "store not open", "not
//	          caught up with the ring"
//	/status   indented JSON of whatever Config.Status returns
//
// Any other path gets 404. Errors other than /readyz's are JSON objects
// {"error": "..."}.
//
// When Config.Token is set, every endpoint except /healthz and /readyz
// requires the header "Authorization: Bearer <token>" and answers 401
// otherwise. The probes stay open so that a load balancer or orchestrator
// (a Kubernetes readinessProbe) can check the node without the secret; they
// reveal nothing but that the process is up and ready. The
// token is compared in constant time, through SHA-256 digests so that not
// even its length leaks through timing.
package admin
