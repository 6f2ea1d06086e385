package resp

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lightcone/lightcone/internal/api"
)

// The oracle tests run one command script against redis-server and against
// Lightcone's RESP server and compare the replies: Redis 7 is the
// specification of every command Lightcone serves.

// startRedis starts redis-server on a free loopback port, without
// persistence, and returns its address. It skips the test if redis-server
// is not installed.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed (apt-get install redis-server to run this test)")
	}
	// The port comes from bind(0), closed before redis-server binds it, so
	// another process may take it first (an outgoing connection's source
	// port, or another test's server): redis-server then exits, and we try
	// again on a new port rather than talk to whoever holds it.
	for range 5 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting redis-server: %v", err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		t.Cleanup(func() {
			cmd.Process.Kill()
			<-exited
		})
		addr := "127.0.0.1:" + port
		deadline := time.Now().Add(10 * time.Second)
		for {
			select {
			case <-exited:
				t.Logf("redis-server on %s exited at start (port taken?); trying another port", addr)
			default:
				nc, err := net.Dial("tcp", addr)
				if err == nil {
					nc.Close()
					return addr
				}
				if time.Now().After(deadline) {
					t.Fatalf("redis-server on %s not accepting after 10s: %v", addr, err)
				}
				time.Sleep(20 * time.Millisecond) // polling a bound, not waiting for state
				continue
			}
			break
		}
	}
	t.Fatal("redis-server failed to start on five ports")
	return ""
}

// oracleConn sends commands as RESP arrays and reads replies as trees.
type oracleConn struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialOracle(t *testing.T, addr string) *oracleConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(60 * time.Second))
	return &oracleConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

// do sends one command and returns its reply.
func (oc *oracleConn) do(args []string) reply {
	oc.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(oc.nc, b.String()); err != nil {
		oc.t.Fatal(err)
	}
	r, err := readTree(oc.br)
	if err != nil {
		oc.t.Fatalf("%v: reading reply: %v", args, err)
	}
	return r
}

// reply is one RESP2 reply: kind is its type byte; null marks $-1 and *-1.
type reply struct {
	kind  byte
	s     string
	null  bool
	elems []reply
}

func readTree(br *bufio.Reader) (reply, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return reply{}, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	r := reply{kind: line[0], s: line[1:]}
	switch r.kind {
	case '+', '-', ':':
		return r, nil
	case '$':
		n, _ := strconv.Atoi(r.s)
		if n < 0 {
			return reply{kind: '$', null: true}, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			return reply{}, err
		}
		r.s = string(buf[:n])
		return r, nil
	case '*':
		n, _ := strconv.Atoi(r.s)
		r.s = ""
		if n < 0 {
			r.null = true
			return r, nil
		}
		for range n {
			e, err := readTree(br)
			if err != nil {
				return reply{}, err
			}
			r.elems = append(r.elems, e)
		}
		return r, nil
	}
	return reply{}, fmt.Errorf("bad reply line %q", line)
}

func (r reply) String() string {
	switch {
	case r.null:
		return string(r.kind) + "nil"
	case r.kind == '$':
		return strconv.Quote(r.s)
	case r.kind == '*':
		parts := make([]string, len(r.elems))
		for i, e := range r.elems {
			parts[i] = e.String()
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return string(r.kind) + r.s
}

// shape is r with its bulk strings' contents dropped: for replies that are
// random (SPOP, SRANDMEMBER), only their type and length are compared.
func (r reply) shape() reply {
	if r.kind == '$' && !r.null {
		r.s = "?"
	}
	es := make([]reply, len(r.elems))
	for i, e := range r.elems {
		es[i] = e.shape()
	}
	r.elems = es
	return r
}

// sorted is r with its arrays' elements sorted, nested arrays too: for
// replies in an order Redis leaves unspecified (SMEMBERS, HKEYS, KEYS,
// SCAN).
func (r reply) sorted() reply {
	es := make([]reply, len(r.elems))
	for i, e := range r.elems {
		es[i] = e.sorted()
	}
	slices.SortFunc(es, func(a, b reply) int { return strings.Compare(a.String(), b.String()) })
	r.elems = es
	return r
}

// runOracle runs script against redis-server and Lightcone (with the
// real clock, as Redis has) and reports every reply that differs. A line
// is a command split on spaces; a leading "~" compares the array reply
// with its elements sorted, a leading "?" compares only its shape.
// Lightcone's backend publishes its reads (cachingBackend), so a read
// after a read of the same key, with no write between, is answered from
// the published reply, as a node's are.
func runOracle(t *testing.T, script string) {
	t.Helper()
	redisAddr := startRedis(t)
	ts := startServerOver(t, Config{Now: time.Now, Scanner: fakeScan{}}, func(b *fakeBackend) api.Backend { return newCachingBackend(b) })
	rd, lc := dialOracle(t, redisAddr), dialOracle(t, ts.addr)
	for _, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		norm := func(r reply) reply { return r }
		switch line[0] {
		case '~':
			norm, line = reply.sorted, line[1:]
		case '?':
			norm, line = reply.shape, line[1:]
		}
		args := strings.Fields(line)
		want, got := norm(rd.do(args)), norm(lc.do(args))
		if got.String() != want.String() {
			t.Errorf("%s\n\tlightcone: %s\n\tredis:     %s", line, got, want)
		}
	}
}

func TestOracleStringsAndKeys(t *testing.T) {
	runOracle(t, `
		SET s hello
		APPEND s _world
		STRLEN s
		STRLEN nokey
		APPEND newkey abc
		GET newkey
		GETSET s x
		GETSET nokey2 y
		GETDEL s
		GETDEL s
		SETNX s 1
		SETNX s 2
		GET s
		SETEX se 100 v
		TTL se
		SETEX se 0 v
		SETEX se abc v
		PSETEX pse 100000 v
		TTL pse
		GETEX se
		GETEX se PERSIST
		TTL se
		GETEX se EX 50
		TTL se
		GETEX se PX 0
		GETEX se NX
		GETEX se EX 10 PX 10
		GETEX nokey EX 10
		GETEX se EXAT 1
		EXISTS se
		EXPIRE s 100
		TTL s
		EXPIRE s 100 NX
		EXPIRE s 200 XX
		EXPIRE s 50 GT
		EXPIRE s 300 GT
		EXPIRE s 10 LT
		TTL s
		EXPIRE s 10 NX XX
		EXPIRE s 10 GT LT
		EXPIRE s 10 FOO
		EXPIRE s abc
		EXPIRE nokey 10
		PERSIST s
		PERSIST s
		TTL s
		EXPIRE s 10 XX
		EXPIRE s 10 LT
		PERSIST s
		EXPIRE s 10 GT
		PEXPIRE s 100000
		TTL s
		EXPIREAT s 1
		EXISTS s
		SET s v
		PEXPIREAT s 1
		GET s
		SET s v
		EXPIRE s -5
		GET s
		SET n 10.5
		INCRBYFLOAT n 0.1
		INCRBYFLOAT n 5.0e3
		INCRBYFLOAT n abc
		INCRBYFLOAT n inf
		SET n2 abc
		INCRBYFLOAT n2 1
		INCRBYFLOAT newf 3
		GET newf
		TYPE n
		TYPE nokey
		UNLINK n n2 nokey
		GET s
		SETNX
		HSET h f v
		GETDEL h
		GETEX h
		APPEND h x
		STRLEN h
		INCRBYFLOAT h 1
		INCRBYFLOAT h x
		HINCRBYFLOAT str f x
		GETSET h x
		TYPE h
	`)
}

func TestOracleHashes(t *testing.T) {
	runOracle(t, `
		HSET h a 1 b hello
		HINCRBY h a 5
		HINCRBY h b 1
		HINCRBY h c abc
		HINCRBY h c 9223372036854775807
		HINCRBY h c 1
		HINCRBYFLOAT h f 1.5
		HINCRBYFLOAT h f 2
		HINCRBYFLOAT h b 1
		HINCRBYFLOAT h f x
		HSETNX h a 9
		HSETNX h z 9
		HGET h z
		~HKEYS h
		~HVALS h
		HSTRLEN h b
		HSTRLEN h nope
		HSTRLEN nokey x
		HKEYS nokey
		HVALS nokey
		HINCRBY new x -3
		HGETALL new
		TYPE h
		SET str x
		HINCRBY str a 1
		HSETNX str a 1
		HKEYS str
		HSTRLEN str a
	`)
}

func TestOracleLists(t *testing.T) {
	runOracle(t, `
		RPUSH l a b c
		LPUSH l x y
		LRANGE l 0 -1
		LRANGE l 1 2
		LRANGE l -2 -1
		LRANGE l -100 100
		LRANGE l 5 10
		LRANGE l 3 1
		LRANGE l 0 abc
		LLEN l
		LINDEX l 0
		LINDEX l -1
		LINDEX l 10
		LINDEX l abc
		LPUSHX nol a
		RPUSHX nol a
		EXISTS nol
		RPUSHX l z
		LPUSHX l w
		TYPE l
		LPOP l
		RPOP l
		LPOP l 2
		RPOP l 0
		LPOP l -1
		LPOP l abc
		LPOP nol
		LPOP nol 2
		RPOP nol 0
		LPOP l 1 2
		RPOP l 10
		EXISTS l
		LLEN l
		LRANGE l 0 -1
		LINDEX l 0
		SET str x
		LPUSH str a
		RPUSHX str a
		LLEN str
		LPOP str
		LRANGE str 0 1
	`)
}

func TestOracleSets(t *testing.T) {
	runOracle(t, `
		SADD st a b c a
		SADD st d
		SREM st a z
		SREM nost a
		SCARD st
		SCARD nost
		SISMEMBER st b
		SISMEMBER st z
		~SMEMBERS st
		SMEMBERS nost
		TYPE st
		?SPOP st
		?SPOP st 2
		SCARD st
		SPOP nost
		SPOP nost 2
		SPOP st -1
		SPOP st abc
		SRANDMEMBER nost
		SRANDMEMBER nost 3
		SADD one x
		SRANDMEMBER one
		SRANDMEMBER one 3
		SRANDMEMBER one -3
		SRANDMEMBER one 0
		SRANDMEMBER one x
		SPOP one 0
		SPOP one 5
		EXISTS one
		SADD two p q
		SREM two p q
		EXISTS two
		SET str x
		SADD str a
		SREM str a
		SCARD str
		SPOP str
		SISMEMBER str a
	`)
}

func TestOracleSortedSets(t *testing.T) {
	runOracle(t, `
		ZADD z 1 a 2 b 3 c
		ZADD z 1.5 a
		ZADD z CH 5 a
		ZADD z NX 9 a 4 d
		ZADD z XX 10 e
		ZADD z GT 1 a
		ZADD z GT CH 6 a
		ZADD z LT CH 1 a
		ZADD z XX GT CH 7 a
		ZADD z INCR 2 a
		ZADD z NX XX 1 a
		ZADD z GT LT 1 a
		ZADD z NX GT 1 a
		ZADD z INCR 1 a 2 b
		ZADD z 1
		ZADD z abc a
		ZADD z NX INCR 1 a
		ZADD z GT INCR -1 a
		ZINCRBY z 1.5 b
		ZINCRBY z x b
		ZSCORE z a
		ZSCORE z nope
		ZCARD z
		ZCARD noz
		TYPE z
		ZRANGE z 0 -1
		ZRANGE z 0 -1 WITHSCORES
		ZRANGE z 0 1 REV WITHSCORES
		ZRANGE z 2 3.5 BYSCORE
		ZRANGE z (2 +inf BYSCORE WITHSCORES
		ZRANGE z +inf -inf BYSCORE REV LIMIT 1 2
		ZRANGE z -inf +inf BYSCORE LIMIT 1 -1
		ZRANGE z 0 -1 LIMIT 0 1
		ZRANGE z 0 -1 FOO
		ZRANGE z a b
		ZRANGEBYSCORE z -inf +inf WITHSCORES
		ZRANGEBYSCORE z 3 (4 LIMIT 0 1
		ZRANGEBYSCORE z (3 (3
		ZRANGEBYSCORE z a b
		ZREVRANGEBYSCORE z +inf 3
		ZREVRANGEBYSCORE z +inf 3 WITHSCORES LIMIT 1 1
		ZREVRANGE z 0 1 WITHSCORES
		ZADD z 0.1 f
		ZSCORE z f
		ZADD z -inf g 1e20 h 12345678901234567 i
		ZRANGE z 0 -1 WITHSCORES
		ZPOPMIN z
		ZPOPMAX z 2
		ZPOPMIN z -1
		ZPOPMIN z abc
		ZPOPMIN noz
		ZPOPMAX noz 3
		ZPOPMIN z 0
		ZREM z a nope
		ZREM noz a
		ZRANGE noz 0 -1
		ZPOPMIN z 100
		EXISTS z
		SET str x
		ZADD str 1 a
		ZRANGE str 0 1
		ZSCORE str a
		ZPOPMIN str
		ZREM str a
	`)
}

func TestOracleKeyListing(t *testing.T) {
	runOracle(t, `
		DBSIZE
		KEYS *
		SCAN 0
		MSET a 1 ab 2 abc 3 b 4 h*llo 5 hallo 6 hello 7 hxllo 8 [x 9 x\y 10 k/z 11
		SADD myset m
		ZADD myz 1 m
		RPUSH mylist a
		HSET myhash f v
		SET gone v
		PEXPIREAT gone 1
		SET later v EX 1000
		~KEYS *
		~KEYS h?llo
		~KEYS h*llo
		~KEYS h[ae]llo
		~KEYS h[^e]llo
		~KEYS h[a-b]llo
		~KEYS h[b-a]llo
		~KEYS h\*llo
		~KEYS \[x
		~KEYS [
		~KEYS [x
		~KEYS x\\y
		~KEYS a*
		~KEYS *b*
		~KEYS ***c
		~KEYS my*
		~KEYS k/*
		~KEYS nomatch*
		~KEYS ?
		DBSIZE
		~SCAN 0 COUNT 1000
		~SCAN 0 COUNT 1000 MATCH a*
		~SCAN 0 COUNT 1000 TYPE set
		~SCAN 0 COUNT 1000 TYPE zset
		~SCAN 0 COUNT 1000 TYPE list
		~SCAN 0 COUNT 1000 TYPE hash
		~SCAN 0 COUNT 1000 TYPE string MATCH h*
		~SCAN 0 count 1000 type STRING match h[a-e]*
		SCAN 0 COUNT 0
		SCAN abc
		SCAN 0 COUNT abc
		SCAN 0 MATCH
		SCAN 0 FOO bar
		DEL a ab abc
		DBSIZE
		~KEYS a*
	`)
}
