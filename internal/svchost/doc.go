// Package svchost routes protocols' storage-service requests in the real
// runtime (storagesvc's doc.go tells the whole layer's story).
//
// A protocol sends a storagesvc.Request to a region's service address; the
// node's event loop hands it, once the handler's writes are durable, to
// the Router (node.Config.Services), which never blocks the loop: it runs
// the request on a goroutine (at most 1024 at once; beyond, the answer is
// Unavailable at once) and delivers the answer back to the loop as a
// message from the service's address, inside the keyspace envelope the
// request came in.
//
// Each region's backend comes from the server YAML's storage_services,
// keyed by region name:
//
//		storage_services:
//		  us-east: {backend: s3, endpoint: "s3.us-east-1.amazonaws.com", tls: true,
//		            bucket: lc-us-east, access_key: ..., secret_key: ..., timeout: 5s}
//		  eu-west: {backend: hosted}     # the default for regions not listed
//
//	  - s3: every node sends its requests straight to the endpoint
//	    (internal/s3svc), each with the timeout (default 10s), past which the
//	    answer is Unavailable: outcome unknown.
//	  - hosted: a durable service (Disk: a Pebble store of its own in
//	    <data_dir>/services/<region>) on the region's first node,
//	    Topology.ByRegion[r][0]; one endpoint, like a cloud region's store,
//	    not replicated over the region's nodes. Other nodes forward
//	    requests to it as Calls over the peer transport and get Returns; a
//	    request or answer lost with a connection is simply never answered,
//	    as on a lossy network. Before answering, the host sleeps a service
//	    time drawn from the world's storage_services model for the region
//	    (the simulator applies the same model), so an emulated world on
//	    one machine shows the tails a cloud store would. Every write is
//	    fsynced before its answer: an acknowledged write survives a crash
//	    of the host, which restarts with its objects under a new ETag
//	    epoch (no ETag is ever given twice). While the host is down the
//	    region's service is unavailable. Without a data directory
//	    (Config.Dir empty, in tests) it is a storagesvc.Mem in memory.
//
// Faults (storage_services.<region>.faults, with the server's
// fault_injection) make a service refuse requests, hang them, or lose the
// answers of writes that took effect, for tests of the protocols on top.
package svchost
