package resp

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisCollections drives lists, sets and sorted sets through
// go-redis's typed API, which parses each reply as the command's documented
// type (scores as floats, "inf" included): the replies are shaped as
// clients expect.
func TestGoRedisCollections(t *testing.T) {
	ts := startServer(t, Config{})
	rdb := ts.client(t, nil)
	ctx := context.Background()

	if n, err := rdb.RPush(ctx, "l", "a", "b", "c").Result(); err != nil || n != 3 {
		t.Fatalf("RPUSH = %d, %v; want 3", n, err)
	}
	if got, err := rdb.LPopCount(ctx, "l", 2).Result(); err != nil || !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("LPOP l 2 = %q, %v; want [a b]", got, err)
	}
	if got, err := rdb.LRange(ctx, "l", 0, -1).Result(); err != nil || !slices.Equal(got, []string{"c"}) {
		t.Errorf("LRANGE = %q, %v; want [c]", got, err)
	}
	if _, err := rdb.LPopCount(ctx, "nolist", 2).Result(); err != redis.Nil {
		t.Errorf("LPOP nolist 2: err %v; want redis.Nil", err)
	}

	if n, err := rdb.SAdd(ctx, "s", "x", "y", "x").Result(); err != nil || n != 2 {
		t.Errorf("SADD = %d, %v; want 2", n, err)
	}
	if ok, err := rdb.SIsMember(ctx, "s", "y").Result(); err != nil || !ok {
		t.Errorf("SISMEMBER s y = %v, %v; want true", ok, err)
	}
	if got, err := rdb.SPopN(ctx, "s", 5).Result(); err != nil || len(got) != 2 {
		t.Errorf("SPOP s 5 = %q, %v; want both members", got, err)
	}
	if n, err := rdb.Exists(ctx, "s").Result(); err != nil || n != 0 {
		t.Errorf("EXISTS s after popping all = %d, %v; want 0", n, err)
	}

	if err := rdb.ZAdd(ctx, "z", redis.Z{Score: 2.5, Member: "b"}, redis.Z{Score: math.Inf(-1), Member: "a"}).Err(); err != nil {
		t.Fatal(err)
	}
	got, err := rdb.ZRangeWithScores(ctx, "z", 0, -1).Result()
	if want := []redis.Z{{Score: math.Inf(-1), Member: "a"}, {Score: 2.5, Member: "b"}}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ZRANGE WITHSCORES = %v, %v; want %v", got, err, want)
	}
	if got, err := rdb.ZIncrBy(ctx, "z", 0.5, "b").Result(); err != nil || got != 3 {
		t.Errorf("ZINCRBY = %v, %v; want 3", got, err)
	}
	if got, err := rdb.ZPopMax(ctx, "z").Result(); err != nil || len(got) != 1 || got[0].Member != "b" || got[0].Score != 3 {
		t.Errorf("ZPOPMAX = %v, %v; want [{3 b}]", got, err)
	}
	if err := rdb.Get(ctx, "z").Err(); err == nil || err.Error() != msgWrongType {
		t.Errorf("GET on a sorted set: %v; want %s", err, msgWrongType)
	}
	if got, err := rdb.Type(ctx, "z").Result(); err != nil || got != "zset" {
		t.Errorf("TYPE z = %q, %v; want zset", got, err)
	}
}
