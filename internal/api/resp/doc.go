// Package resp serves the Redis protocol (RESP2) over an api.Backend, so
// that redis-cli, redis-benchmark, go-redis and YCSB's Redis binding talk
// to a Lightcone node unmodified.
//
// # Protocol
//
// Reader parses commands: RESP arrays of bulk strings, and inline commands
// (space-separated words with Redis's quoting rules, as telnet and
// redis-cli send). Its limits are checked before the memory they guard is
// allocated: a bulk string of at most MaxBulkBytes (default 512 MiB, Redis's
// proto-max-bulk-len), at most MaxMultibulkLen arguments (default
// 1,048,576), and lines of at most MaxInlineBytes (64 KiB). A bulk's buffer
// grows as its bytes arrive, so an announced length costs nothing until the
// data comes. Malformed input yields a *ProtocolError worded as Redis words
// it ("ERR Protocol error: invalid bulk length"); the server replies it and
// closes that connection, as Redis does. Writer writes RESP2 replies.
//
// # Memory and connection limits
//
// What a client can make the server hold is bounded before it is held
// (docs/limits.md has the settings and the measurements):
//
//   - An argument longer than both the value and key limits is read and
//     discarded as it arrives, and its command refused with "ERR argument
//     too large (N bytes; max M)"; the connection stays in step and open.
//   - A connection holds at most Config.QueryBufferLimit bytes of
//     arguments (Redis's client-query-buffer-limit; default 128 MiB, each
//     argument counted as its length plus ArgOverheadBytes). A pipeline
//     reaching it first writes the replies it is owed; a single command
//     over it is discarded and refused with "ERR command too large: ...".
//   - A connection whose unwritten replies reach Config.OutputBufferLimit
//     (default 128 MiB) stops reading until it has written them.
//   - All connections together hold at most Config.BufferBudget bytes of
//     arguments and replies (default 1 GiB); a command that does not fit
//     is discarded and refused with "OOM command not allowed: ...; retry
//     later". INFO memory reports the bytes held (mem_clients_normal).
//   - MGET, EXISTS, DEL and MSET of more than 1024 keys run in slices of
//     1024, each one hand-off to the node: other clients' requests are
//     served between them, and a large MGET's reply is written as its
//     slices arrive. A key that fails after the first slice is an error
//     element of MGET's array (the first slice failing is an error reply,
//     as for a small MGET).
//   - At most Config.MaxClients connections (Redis's maxclients, default
//     10,000; the server lowers it to the open file limit less
//     ReservedFDs and logs that). One more is answered "ERR max number of
//     clients reached" and closed; INFO stats counts them
//     (rejected_connections).
//
// # Connections and pipelining
//
// Each connection has a ClientID from Backend.NewClientID and increasing
// request IDs. It is served either by an event loop (loop_linux.go; Linux,
// plain TCP, Config.EventLoops: by default one with GOMAXPROCS=1) or by a
// goroutine of its own (TLS, other platforms, no loops, and a connection
// that left its loop). An event loop waits on an epoll set of its own, as
// Redis's ae loop does, reads each ready socket once, runs the complete
// commands read and writes the replies in hand; it never waits for a
// reply, and the backend's reply wakes it (a read deadline in the past on
// the epoll descriptor it sleeps on in Go's poller). A connection leaves its
// loop for a goroutine, for good, before a command that waits for replies
// while it runs (the * commands below, MULTI, a SET with options, an MGET
// of more than 1024 keys, SCAN), an inline or malformed command, one
// larger than the 16 KiB read buffer or the buffer budgets' room, or when
// its socket will not take its replies at once. Both serve the same
// commands with the same replies; the package's tests run both ways
// (TestGoroutinePerConnection). While the connection's read buffer holds
// input, commands are parsed and submitted without waiting for replies, so
// a pipeline's requests are in flight together; when the buffer runs dry
// (or 1024 commands are waiting) the replies are written in command order
// and flushed. Pipelined single-step commands reach the backend in command
// order but run concurrently: whether a GET observes the SET pipelined
// just before it is up to the backend and the consistency level. Multi-step
// commands (marked * below) first wait for all of the connection's earlier
// commands, so they observe them.
//
// # Commands
//
//	PING [msg]  ECHO msg  QUIT  SELECT 0
//	HELLO [2 [AUTH user pass] [SETNAME name]]   RESP2 only; HELLO 3 → NOPROTO
//	AUTH [user] pass                            user "default", Config.RequirePass
//	CLIENT SETNAME|GETNAME|ID|SETINFO
//	COMMAND [COUNT|DOCS|INFO|LIST]              no metadata: DOCS is empty
//	CONFIG GET pattern...                       save, appendonly, databases only
//	INFO [section...]                           server, clients, keyspace, lightcone
//	GET key  STRLEN key  TTL, PTTL key  TYPE key
//	SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL]
//	                                            * with NX, XX, GET or KEEPTTL
//	SETEX, PSETEX key n value   SETNX key value  GETSET key value *
//	GETDEL key *   GETEX key [EX s|PX ms|EXAT s|PXAT ms|PERSIST] * with an option
//	APPEND key value *   INCRBYFLOAT key incr * (long double, as Redis)
//	DEL, UNLINK key...                          * reads to count, then deletes
//	EXISTS key...  MGET key...  MSET key value...
//	INCR, DECR, INCRBY, DECRBY key              * keeps the TTL
//	EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT key n [NX|XX|GT|LT] *   PERSIST key *
//	HSET, HMSET key field value...              * get, merge, put
//	HDEL key field...                           * an emptied hash is deleted
//	HINCRBY, HINCRBYFLOAT key field incr *   HSETNX key field value *
//	HGET, HMGET, HGETALL, HEXISTS, HLEN, HKEYS, HVALS, HSTRLEN
//	LPUSH, RPUSH, LPUSHX, RPUSHX key element... *
//	LPOP, RPOP key [count] *   LRANGE key start stop   LLEN key   LINDEX key i
//	SADD, SREM key member... *   SPOP key [count] *
//	SMEMBERS, SCARD, SISMEMBER   SRANDMEMBER key [count]
//	ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member... *   ZINCRBY *
//	ZREM key member... *   ZPOPMIN, ZPOPMAX key [count] *   ZSCORE, ZCARD
//	ZRANGE key start stop [BYSCORE] [REV] [LIMIT off n] [WITHSCORES]
//	ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE (no BYLEX)
//
// These commands follow Redis 7.0's semantics and replies, errors included
// (WRONGTYPE on a key of another type), except where this comment says
// otherwise (atomicity below; key listing): oracle_test.go and
// oracle_random_test.go run command scripts, written and random, against
// redis-server and Lightcone and compare every reply. An emptied hash,
// list, set or sorted set is deleted, as in Redis. SMEMBERS replies members in
// bytewise order, HKEYS in field order (Redis's orders are unspecified).
//
//	SCAN cursor [MATCH pattern] [COUNT n] [TYPE type]   KEYS pattern   DBSIZE
//	                                            this node's keys: see Key listing
//
// FLUSHALL, FLUSHDB and RANDOMKEY reply "ERR not supported by lightcone":
// a geo-distributed keyspace has no cheap global view. Other commands
// reply Redis's "ERR unknown command" error. Before
// AUTH (when RequirePass is set) only AUTH, HELLO and QUIT run; the rest
// reply "NOAUTH Authentication required.".
//
// # Key listing
//
// SCAN, KEYS and DBSIZE list the keys of the connection's keyspace that
// this node holds, read from its own store (Config.Scanner, an
// api.Scanner; without one they reply "ERR not supported by lightcone"),
// not the cluster's: a geo-distributed keyspace has no cheap global view,
// and a node that holds only some of the keyspace's keys lists only those.
// MATCH and KEYS take Redis's glob patterns (*, ?, [abc], [^a-z], \*), as
// Redis 7.0 matches them, quirks included. COUNT (default 10) is how many
// stored keys one SCAN call examines, so a page may hold fewer keys, or
// none, before the cursor comes back 0. A value whose TTL has passed is
// not listed, and not counted by DBSIZE (Redis counts it until it deletes
// it). KEYS and DBSIZE walk the whole keyspace, 1024 stored keys per
// hand-off to the node. A cursor is a number the server maps to a
// position in the store; each is good once, in its keyspace, and the
// server remembers the latest 10,000: an unknown one is "ERR invalid
// cursor", never a silent end of the scan.
//
// What a full scan (cursor 0 back to 0), KEYS and DBSIZE return on a node:
// the store is walked once in key order, and a key is listed if, when the
// walk passes it, its latest version on this node is a live value. So each
// key is listed at most once (Redis promises at least once); a key stored
// and live on this node throughout the scan is listed; a key deleted on
// this node throughout it is not; one written or deleted during it may or
// may not be. What "stored on this node" means depends on the keyspace's
// protocol (protocol.Lister):
//
//   - quorum (the default): a node stores the keys whose replicas include
//     it. On one node (a plain `lightcone server`), or where every region's
//     replica count equals its node count, every node holds every key, and
//     every key written before the scan began and not deleted is listed
//     exactly once (internal/server TestKeyListing). A write acknowledged
//     at ALL is on every replica when acknowledged; one acknowledged at a
//     lower level (ONE, QUORUM, LOCAL_*) may not have reached this node
//     yet, so until it does the key may be missing here, or a deleted key
//     still listed. With fewer replicas than nodes, a node lists only the
//     keys it is a replica of (internal/server TestKeyListingCluster:
//     three regions of one node, writes at ALL, every node lists every
//     key; TestKeyListingPartial: two nodes of one region, each lists its
//     half).
//   - lease (GlobLease): each region has one replica of every key (its
//     ring's node), so a region of one node holds every key. A replica's
//     copy can lag the key's master (passive updates), with the same
//     consequence as quorum's lower levels until the update arrives.
//   - meteor, dirsc, dirrc, cric, fastpaxos and ppaxos keep version chains,
//     directory rows or storage-service objects rather than one record per
//     key on the node: listing replies (TestKeyListingCluster) `ERR keyspace "<name>": protocol
//     <p> keeps no key list on its nodes`.
//
// # Lightcone extensions
//
//	LC.CONSISTENCY [READ level] [WRITE level]
//	    Sets this connection's default levels (wire.ParseLevel names, or
//	    DEFAULT for the keyspace's); with no arguments replies
//	    [READ, level, WRITE, level]. Initially Config.Read and Config.Write.
//	    The keyspace's protocol decides which levels it accepts: a quorum
//	    keyspace with write_order query refuses a level whose replicas can
//	    miss a set of its read level (quorum doc.go, "Write order").
//	LC.KEYSPACE [name]
//	    Sets this connection's keyspace, or replies it. Initially
//	    Config.Keyspace. A name not in Config.Keyspaces (when set) is
//	    refused at once, naming the valid ones.
//	LC.GET key [LEVEL level]           → [value, version] or nil
//	LC.GETAT key [LEVEL level]         → [value or nil, version, read_at]
//	    LC.GET that also replies where the protocol's total order places
//	    the read (wire.Reply.ReadAt, ns; 0 if it places reads at no time),
//	    for checkers (the nemesis).
//	LC.SET key value [LEVEL level] [UPDATE ACTIVE|PASSIVE] → version
//	LC.DEL key [LEVEL level] [UPDATE ACTIVE|PASSIVE]       → version
//	LC.CAS key expected_version value [LEVEL l] [UPDATE m] → version
//	LC.CAD key expected_version [LEVEL l] [UPDATE m]       → version
//	                                     (UPDATE: GlobLease's update mode
//	                                     for this write; other protocols
//	                                     ignore it)
//	    One backend operation on the raw stored bytes, without the value
//	    envelope below; version is wire.Version's string ("<wall>.<logical>@n<node>").
//	    LC.CAS and LC.CAD are conditional (compare-and-set, -delete): they
//	    write only if key is at expected_version (as LC.GET replies it; 0:
//	    absent or deleted). Otherwise they reply "CONFLICT <current
//	    version> <msg>" and wrote nothing. Keyspaces that cannot apply
//	    conditional writes reply an ERR naming those that can (see
//	    "Atomic read-modify-write").
//	LC.ACQUIRE key                     → OK
//	LC.RELEASE key                     → OK
//	    Take and give back this connection's hold on key (wire.OpAcquire,
//	    wire.OpRelease) in protocols with holds (rc: reads and writes of a
//	    key need a hold; a release without one, or after the hold was
//	    released for an idle client, is an ERR saying so). Others reply
//	    "ERR <protocol>: unknown operation acquire". Closing the
//	    connection releases the rows it holds; a client that stays
//	    connected but silent is released by the protocol (rc's
//	    hold_timeout).
//	LC.MIGRATE key region              → region
//	    Moves key's write mastership to region (wire.OpMigrate) in this
//	    connection's keyspace, and replies the region of its master after
//	    the move. Only protocols with per-key masters (lease) support it;
//	    others reply "ERR <protocol>: unknown operation migrate". An
//	    unknown region is an ERR naming the valid ones; UNAVAILABLE (the
//	    key is busy: a write, election or other migration in progress) is
//	    safe to retry.
//
// # Transactions
//
//	LC.TXN [READONLY] op...            → one element per op
//	    op: READ key → value or nil;  WRITE key value → OK;  DEL key → OK;
//	        ADD key delta → the new value, an integer
//	MULTI  GET, SET, DEL, INCR, DECR, INCRBY, DECRBY ...  EXEC   DISCARD
//
// Both build one transaction (wire.OpTxn) whose operations are declared
// up front, in order (the chainable model): the node checks its shape
// before anything is written and the keyspace's protocol runs it whole
// or not at all. What it guarantees is the protocol's: quorum on a
// single-node cluster (a plain `lightcone server`'s default keyspace)
// runs it in one step of the node's event loop, strictly serializable;
// a keyspace whose protocol runs no transactions replies "ERR <protocol>:
// this keyspace cannot run transactions: ...", naming the registered
// protocols and settings that do (protocol.TxnRefusal).
//
// LC.TXN works on raw stored bytes, as LC.GET and LC.SET do. READONLY
// declares a read-only transaction (protocols may serve it locally); a
// write in it is an error. ADD reads the key as a decimal int64 (absent:
// 0) and writes it plus delta; a key whose value is not one, or an
// overflow, fails the whole transaction ("ERR ...: not a decimal integer;
// nothing was written").
//
// MULTI queues the commands that follow (+QUEUED) and EXEC runs them as
// one transaction, replying one element per command as Redis would: GET
// the string (decoded from its value envelope; WRONGTYPE as an element
// for another kind), SET OK, DEL 1 or 0, INCR and the rest the new value.
// SET takes no options and DEL one key inside MULTI; any other command
// (or SET with options, DEL of several keys, a wrong arity) is refused
// when queued and makes EXEC reply "EXECABORT Transaction discarded
// because of previous errors.", as in Redis. DISCARD drops the queue.
// Unlike Redis: an error in one command (INCR of a non-integer) fails the
// whole EXEC with nothing written, rather than that command alone; INCR
// works only on plain decimal values (not one stored with a TTL); and a
// key may be used once per transaction, except a read (GET) before a
// write (SET, DEL, INCR...) of it. WATCH is refused: declared keys need
// no optimistic check.
//
// Refused before submission, nothing written: no operations ("ERR
// transaction has no operations"; an empty MULTI/EXEC replies an empty
// array, as Redis), more than wire.MaxTxnOps (64) operations, a key
// declared twice, more than wire.MaxTxnBytes (16 MiB) of keys and values
// together, a key or value over its limit, a malformed op. An unknown
// keyspace is refused by the node, as for any command.
//
// # Errors
//
// Backend errors map to replies by class: wire.ErrConflict → "CONFLICT
// <msg>" (a conditional write that took no effect); wire.ErrTimeout → "TIMEOUT
// outcome unknown: <msg>" (a write may or may not have taken effect, and
// may still become visible); wire.ErrUnavailable → "UNAVAILABLE <msg>" (it
// took no effect); wire.ErrInvalid → "ERR <msg>"; wire.ErrNoSpace → "ERR
// disk full: …" (a write refused, not applied, while the node's disk is
// below its reserve; retry later). Keys longer than
// Config.MaxKeyBytes (default 64 KiB) and values longer than
// Config.MaxValueBytes (default 64 MiB) are refused before submission with
// "ERR key too large (N bytes; max M)" or "ERR value too large (...)".
//
// # Atomic read-modify-write
//
// Every command marked * above (SET with NX, XX, GET or KEEPTTL, the INCR
// family, the hash, list, set and sorted-set writes, EXPIRE and the rest)
// goes through conn.modify (modify.go), as every new read-modify-write
// command must: it reads the key and its version,
// decides, and writes with a conditional write (wire.Request.Cond) that
// applies only if the key is still at the version read; if another write
// came between, the write fails with wire.ErrConflict, took no effect, and
// the command reads again and decides again — up to 100 times, with a short
// random backoff, after which it replies "ERR contended: ..." having
// written nothing. So two clients running INCR on one key both count, SET
// NX has one winner, and concurrent HSETs of different fields keep both.
// The keyspace's protocol must order each key's writes to apply
// conditional writes: lease does, and quorum does on a single-node
// cluster (a single-node `lightcone server`'s default keyspace); other
// keyspaces refuse them, and these commands reply "ERR <protocol>: this
// keyspace cannot apply conditional writes ...", naming those that can. A
// keyspace may opt in to the old behaviour, `rmw: last_writer_wins`
// (Config.LastWriterWins): the commands are then a get and a plain put,
// and two clients can both win.
//
// Still not atomic: MSET and DEL of several keys (each key is written on
// its own; an error reply may follow a partial write), and DEL's count,
// which is read before the deletes. For several keys at once, use a
// transaction (below, "Transactions").
//
// # Value envelope
//
// A string value without a TTL is stored verbatim, so other front ends read
// it as is. Everything else (a value with a TTL, a hash, or a string whose
// bytes happen to begin with the magic) is stored in an envelope:
//
//	"\xff\xfeLC" | kind | expiry | payload
//	kind    's' string, 'h' hash, 'l' list, 'e' set or 'z' sorted set
//	expiry  uvarint, absolute Unix milliseconds; 0 means none
//	payload 's': the string's bytes
//	        'h': uvarint n, then n × (uvarint len, field, uvarint len, value),
//	             fields strictly ascending bytewise
//	        'l': uvarint n, then n × (uvarint len, element), in list order
//	        'e': as 'l', members strictly ascending bytewise
//	        'z': uvarint n, then n × (8-byte big-endian float64 score,
//	             uvarint len, member), ascending by (score, member)
//
// The magic cannot begin UTF-8 text. A hash, list, set or sorted set is
// one value: every write (HSET, LPUSH, SADD, ZADD...) rewrites it whole,
// so its size counts against MaxValueBytes and a write costs its size. They
// suit small collections; a list of a million elements costs megabytes per
// push.
//
// Expiry is lazy: GET, EXISTS, TTL and the rest treat a value whose expiry
// has passed (by Config.Now, the server's clock) as absent, but nothing
// deletes it until the key is overwritten or deleted. Expiry is therefore
// only as accurate as the clocks of the nodes serving the key.
//
// # YCSB
//
// YCSB's Redis binding writes records with HMSET and reads them with
// HGETALL/HMGET; it also maintains a scan index with ZADD and ZREM on one
// key ("_indices") and scans with ZRANGEBYSCORE, all served. That index is
// one sorted set rewritten whole on every insert, so loading many records
// through the binding costs time quadratic in their number.
package resp
