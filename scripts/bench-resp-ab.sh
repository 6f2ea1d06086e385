#!/usr/bin/env bash
# bench-resp-ab.sh: redis-server, Lightcone at a base revision and Lightcone
# of the work tree, measured with redis-benchmark in interleaved rounds, for
# before/after comparisons of the RESP path on a shared, noisy machine.
#
# Each round starts each target on fresh loopback ports (Lightcone with a
# fresh data dir, --sync $SYNC; Redis with appendfsync $SYNC, as
# bench-redis.sh), runs
#   redis-benchmark -t $TESTS -n $N -c $CLIENTS -P <depth> $RB_ARGS --csv
# for each depth in PIPELINES, and stops it. The order of the targets rotates
# from round to round, so slow drift in the machine's load falls on each of
# them alike. It prints every round's rows, then per depth and op the median
# and min–max of requests/s and p99 of each target, and the medians (min–max)
# of the per-round ratios tree/redis, base/redis and tree/base.
#
# Environment:
#   BASE=main         git revision of the baseline ("" to skip it)
#   ROUNDS=5          rounds
#   N=200000          requests per redis-benchmark test
#   CLIENTS=50
#   PIPELINES="1 16"
#   TESTS=get,set     redis-benchmark -t
#   SYNC=everysec     Lightcone's --sync and Redis's appendfsync (everysec
#                     or always)
#   BASE_ARGS, TREE_ARGS  extra server flags of the base and tree targets
#                     (BASE=HEAD TREE_ARGS=--some-flag: one revision, a
#                     flag's effect)
#   LC_ENV="K=V ..."  environment of both Lightcone targets (e.g. GOMAXPROCS=1)
#   RB_ARGS=""        more redis-benchmark flags (e.g. "-r 1000000 -d 100": a
#                     million random keys of 100-byte values instead of one)
#   KEEP=1            keep the temp dir
set -euo pipefail

BASE="${BASE-main}"
ROUNDS="${ROUNDS:-5}"
N="${N:-200000}"
CLIENTS="${CLIENTS:-50}"
PIPELINES="${PIPELINES:-1 16}"
TESTS="${TESTS:-get,set}"
KEEP="${KEEP:-0}"
LC_ENV="${LC_ENV:-}"
SYNC="${SYNC:-everysec}"
BASE_ARGS="${BASE_ARGS:-}"
TREE_ARGS="${TREE_ARGS:-}"

# shellcheck source=scripts/bench-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh" bench-resp-ab
need_redis

# start TARGET: starts it alone and fresh (Lightcone without gRPC, through a
# wrapper that sets LC_ENV and execs it); sets PORT.
start() {
	local dir="$WORK/run-$1"
	if [[ "$1" == redis ]]; then
		start_redis "$dir" "$SYNC"
	else
		local args=BASE_ARGS
		[[ "$1" == tree ]] && args=TREE_ARGS
		# shellcheck disable=SC2086 # the flags are a list
		start_lightcone "$WORK/run-lightcone-$1" "$dir" "$SYNC" --grpc-addr off ${!args}
	fi
}

# --- build ---
TARGETS=(redis tree)
log "building the work tree"
(cd "$REPO" && go build -o "$WORK/lightcone-tree" ./cmd/lightcone)
TREE_REV="$(tree_rev)"
if [[ -n "$BASE" ]]; then
	build_base "$BASE"
	TARGETS=(redis base tree)
fi
for t in tree base; do
	printf '#!/bin/sh\nexec env %s "%s" "$@"\n' "$LC_ENV" "$WORK/lightcone-$t" >"$WORK/run-lightcone-$t"
	chmod +x "$WORK/run-lightcone-$t"
done

RESULTS="$WORK/results.tsv" # round target pipeline op rps p50 p99 cpu-µs/request
: >"$RESULTS"
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
nt=${#TARGETS[@]}
for ((r = 1; r <= ROUNDS; r++)); do
	for ((k = 0; k < nt; k++)); do
		target="${TARGETS[$(((k + r - 1) % nt))]}"
		start "$target"
		for p in $PIPELINES; do
			for test in ${TESTS//,/ }; do
				log "round $r: $target -P $p -t $test"
				cpu0="$(server_cpu)"
				redis-benchmark -p "$PORT" -t "$test" -n "$N" -c "$CLIENTS" -P "$p" ${RB_ARGS:-} --csv | redis_csv_rows |
					awk -F'\t' -v r="$r" -v t="$target" -v p="$p" '{ printf "%s\t%s\t%s\t%s\t%s\t%s\t%s", r, t, p, $1, $2, $3, $4 }' >>"$RESULTS"
				cpu_per "$cpu0" "$N" >>"$RESULTS"
			done
		done
		stop_server
	done
done

echo "## RESP A/B: redis-benchmark -t $TESTS -n $N -c $CLIENTS -P {$PIPELINES} ${RB_ARGS:-}, $ROUNDS interleaved rounds"
echo
echo "redis $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') (appendfsync $SYNC); lightcone --sync $SYNC:" \
	"tree $TREE_REV${TREE_ARGS:+ ($TREE_ARGS)}${BASE_REV:+, base $BASE ($BASE_REV)${BASE_ARGS:+ ($BASE_ARGS)}}${LC_ENV:+ (env $LC_ENV)}; $(nproc) CPUs; load average before $LOAD_BEFORE, after $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| round | target | P | op | req/s | p50 ms | p99 ms | server CPU µs/req |"
echo "| ---: | --- | ---: | --- | ---: | ---: | ---: | ---: |"
sort -t$'\t' -k3,3n -k4,4 -k1,1n -k2,2 "$RESULTS" | awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
echo
echo "Medians (min–max) over rounds; a ratio is taken per round, then its median (min–max) given."
echo
echo "| P | op | target | req/s | p99 ms | server CPU µs/req |"
echo "| ---: | --- | --- | ---: | ---: | ---: |"
summary() {
	awk -F'\t' -v mode="$1" "$MEDIAN_AWK"'
	{
		k = $3 "\t" $4; keys[k] = 1; if ($1 > R) R = $1
		rps[k, $2] = rps[k, $2] " " $5; p99[k, $2] = p99[k, $2] " " $7; cpu[k, $2] = cpu[k, $2] " " $8
		v[$1, k, $2] = $5; q[$1, k, $2] = $7; c[$1, k, $2] = $8
	}
	END {
		for (k in keys) {
			split(k, kk, "\t")
			if (mode == "targets") {
				for (ti = 1; ti <= 3; ti++) {
					t = (ti == 1) ? "redis" : (ti == 2) ? "base" : "tree"
					if (rps[k, t] == "") continue
					m = med(rps[k, t]); l = lo; h = hi
					m99 = med(p99[k, t]); l99 = lo; h99 = hi
					mc = med(cpu[k, t]); lc = lo; hc = hi
					printf "%s\t%s\t%d\t| %s | %s | %s | %.0f (%.0f–%.0f) | %.3f (%.3f–%.3f) | %.2f (%.2f–%.2f) |\n", kk[1], kk[2], ti, kk[1], kk[2], t, m, l, h, m99, l99, h99, mc, lc, hc
				}
				continue
			}
			split("tree/redis base/redis tree/base", pairs, " ")
			for (pi = 1; pi <= 3; pi++) {
				split(pairs[pi], ab, "/")
				s = ""; s99 = ""; sc = ""
				for (r = 1; r <= R; r++) if (v[r, k, ab[1]] > 0 && v[r, k, ab[2]] > 0) {
					s = s " " v[r, k, ab[1]] / v[r, k, ab[2]]
					if (q[r, k, ab[2]] > 0) s99 = s99 " " q[r, k, ab[1]] / q[r, k, ab[2]]
					if (c[r, k, ab[2]] > 0) sc = sc " " c[r, k, ab[1]] / c[r, k, ab[2]]
				}
				if (s == "") continue
				m = med(s); l = lo; h = hi
				m99 = med(s99); l99 = lo; h99 = hi
				line = sprintf("| %s | %s | %s | %.2f (%.2f–%.2f) | %.2f (%.2f–%.2f) |", kk[1], kk[2], pairs[pi], m, l, h, m99, l99, h99)
				if (sc != "") { mc = med(sc); line = line sprintf(" %.2f (%.2f–%.2f) |", mc, lo, hi) } else line = line " |"
				printf "%s\t%s\t%d\t%s\n", kk[1], kk[2], pi, line
			}
		}
	}' "$RESULTS" | sort -t$'\t' -k1,1n -k2,2 -k3,3n | cut -f4
}
summary targets
echo
echo "| P | op | ratio | req/s | p99 | server CPU/req |"
echo "| ---: | --- | --- | ---: | ---: | ---: |"
summary ratios
