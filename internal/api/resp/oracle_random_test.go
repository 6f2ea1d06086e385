package resp

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

var oracleSeed = flag.Uint64("oracle.seed", 0, "TestOracleRandom's seed (0: a new one)")

// TestOracleRandom runs a random command sequence over a few keys of every
// type against redis-server and Lightcone, comparing each reply (random
// replies by shape, unordered ones sorted), so that commands meeting each
// other's values (WRONGTYPE, emptied collections, expiry) are checked in
// combinations no script lists. It prints its seed and the command that
// replays it.
func TestOracleRandom(t *testing.T) {
	seed := *oracleSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("Seed: %d (replay: go test ./internal/api/resp -run TestOracleRandom -oracle.seed %d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	key := func() string { return pick("k1", "k2", "k3", "k/4") }
	mem := func() string { return pick("a", "b", "c", "d", "") }
	num := func() string { return pick("0", "1", "-1", "2", "10", "3.5", "-0.25", "x", "9223372036854775807") }
	idx := func() string { return pick("0", "1", "-1", "2", "-3", "100") }
	gens := []func() string{
		func() string {
			return "SET " + key() + " " + num() + pick("", " NX", " XX", " GET", " EX 100", " KEEPTTL")
		},
		func() string { return "GET " + key() },
		func() string { return pick("INCR ", "DECR ") + key() },
		func() string { return "INCRBY " + key() + " " + num() },
		func() string { return "INCRBYFLOAT " + key() + " " + num() },
		func() string { return "APPEND " + key() + " " + mem() + "z" },
		func() string { return "STRLEN " + key() },
		func() string { return pick("GETDEL ", "GETEX ", "TYPE ", "EXISTS ", "PERSIST ") + key() },
		func() string { return "GETSET " + key() + " " + num() },
		func() string { return "SETNX " + key() + " " + num() },
		func() string {
			return pick("EXPIRE ", "PEXPIRE ") + key() + " " + pick("100000", "-1", "x") + pick("", " NX", " XX", " GT", " LT")
		},
		func() string { return pick("DEL ", "UNLINK ") + key() + " " + key() },
		func() string { return "HSET " + key() + " " + mem() + "f " + num() },
		func() string { return "HDEL " + key() + " " + mem() + "f" },
		func() string { return "HINCRBY " + key() + " " + mem() + "f " + num() },
		func() string { return "HINCRBYFLOAT " + key() + " " + mem() + "f " + num() },
		func() string { return "HSETNX " + key() + " " + mem() + "f " + num() },
		func() string { return "~" + pick("HGETALL ", "HKEYS ", "HVALS ", "HLEN ") + key() },
		func() string { return pick("HGET ", "HSTRLEN ", "HEXISTS ") + key() + " " + mem() + "f" },
		func() string {
			return pick("LPUSH ", "RPUSH ", "LPUSHX ", "RPUSHX ") + key() + " " + mem() + "l " + mem() + "m"
		},
		func() string { return pick("LPOP ", "RPOP ") + key() + pick("", " 0", " 1", " 3", " -1") },
		func() string { return "LRANGE " + key() + " " + idx() + " " + idx() },
		func() string { return "LINDEX " + key() + " " + idx() },
		func() string { return "LLEN " + key() },
		func() string { return pick("SADD ", "SREM ") + key() + " " + mem() + "s " + mem() + "s" },
		func() string { return "~" + pick("SMEMBERS ", "SCARD ") + key() },
		func() string { return "SISMEMBER " + key() + " " + mem() + "s" },
		func() string { return "?SRANDMEMBER " + key() + pick("", " 0", " 2", " -2") },
		func() string {
			// SPOP removes members at random, different ones from Redis's:
			// the key is deleted after, so the two stay in step.
			k := key()
			return "?SPOP " + k + pick("", " 0", " 2") + "\nDEL " + k
		},
		func() string {
			return "ZADD " + key() + pick("", " NX", " XX", " GT", " LT", " CH", " XX GT CH") + " " + num() + " " + mem() + "z"
		},
		func() string { return "ZADD " + key() + " INCR " + num() + " " + mem() + "z" },
		func() string { return "ZINCRBY " + key() + " " + num() + " " + mem() + "z" },
		func() string { return "ZREM " + key() + " " + mem() + "z" },
		func() string { return pick("ZSCORE ", "ZCARD ") + key() + " " + mem() + "z" },
		func() string { return pick("ZPOPMIN ", "ZPOPMAX ") + key() + pick("", " 0", " 2", " -1") },
		func() string {
			return "ZRANGE " + key() + " " + idx() + " " + idx() + pick("", " REV", " WITHSCORES", " REV WITHSCORES")
		},
		func() string {
			return pick("ZRANGEBYSCORE ", "ZREVRANGEBYSCORE ") + key() + " " + pick("-inf", "(0", "1", "+inf") + " " + pick("-inf", "2", "(10", "+inf") + pick("", " WITHSCORES", " LIMIT 1 2")
		},
		func() string {
			return "~" + pick("KEYS *", "KEYS k?", "SCAN 0 COUNT 100", "SCAN 0 COUNT 100 TYPE "+pick("string", "hash", "list", "set", "zset"))
		},
		func() string { return "DBSIZE" },
		func() string { return pick("SETEX ", "PSETEX ") + key() + " " + pick("100000", "0", "x") + " " + num() },
		func() string {
			return "GETEX " + key() + pick(" EX 1000", " PX 100000", " PERSIST", " EXAT 1", " KEEPTTL")
		},
		func() string {
			return "ZRANGE " + key() + " " + pick("-inf", "(1", "+inf") + " " + pick("+inf", "2", "-inf") + " BYSCORE" + pick("", " REV") + pick("", " LIMIT 0 1", " WITHSCORES")
		},
		func() string { return "~SCAN 0 COUNT 100 MATCH " + pick("k[12]", "k/*", "*3", "?2", "k\\/4") },
	}
	var script strings.Builder
	for range 1500 {
		fmt.Fprintln(&script, gens[rng.IntN(len(gens))]())
	}
	runOracle(t, script.String())
}
