#!/usr/bin/env bash
# bench.sh: durable writes, Lightcone against Redis and etcd, single node on
# loopback, in interleaved rounds, with ratios and their spread.
#
# Targets, each started fresh (new ports, empty data dir) in every round and
# run alone; their order rotates from round to round, so slow drift in the
# machine's load falls on each alike:
#   redis  redis-server --appendonly yes --appendfsync always --save ''
#   tree   lightcone server --sync always, built from the work tree
#   base   the same built from git revision $BASE (before/after; BASE="" skips it)
#   etcd   etcd, one member, default settings (fsyncs its WAL before every commit);
#          skipped if etcd is not installed (apt-get install etcd-server) or ETCD=0
# Tests:
#   SET -P<d>  redis-benchmark -t set -n $N -c $CLIENTS -P <d> (redis, tree, base),
#              for each depth d in PIPELINES
#   put        scripts/putload: $PUTS puts over gRPC by $CLIENTS clients, one
#              connection and one put in flight each (etcd, tree, base); the
#              same client for both servers
# Prints every round's rows, the median (min–max) of each target's requests/s
# and p99, and the median (min–max) of the per-round ratios tree/redis,
# base/redis, tree/base, tree/etcd and base/etcd. Issue 17's goals: SET
# tree/redis >= 1.0 at -P 1 and -P 16; put tree/etcd >= 3.
#
# Environment:
#   ROUNDS=3           rounds (>= 3 for a spread worth reading)
#   N=100000           requests per redis-benchmark test
#   PUTS=20000         puts per putload run
#   CLIENTS=50
#   PIPELINES="1 16"
#   BASE=main          git revision of the baseline ("" to skip it)
#   ETCD=1             0: skip etcd
#   KEEP=1             keep the temp dir (binaries, data dirs, logs, raw rows)
#   OUT=FILE           also write the report (Markdown) to FILE
set -euo pipefail

ROUNDS="${ROUNDS:-3}"
N="${N:-100000}"
PUTS="${PUTS:-20000}"
CLIENTS="${CLIENTS:-50}"
PIPELINES="${PIPELINES:-1 16}"
BASE="${BASE-main}"
ETCD="${ETCD:-1}"
KEEP="${KEEP:-0}"
OUT="${OUT:-}"

# shellcheck source=scripts/bench-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh" bench
need_redis
if [[ "$ETCD" == 1 ]] && ! command -v etcd >/dev/null 2>&1; then
	log "etcd not installed (apt-get install etcd-server): skipping it"
	ETCD=0
fi

# start TARGET: starts it alone and fresh; sets PORT (RESP) and GRPC (gRPC:
# Lightcone's API, etcd's client port).
start() {
	local dir="$WORK/run-$1"
	case "$1" in
	redis) start_redis "$dir" always ;;
	etcd) start_etcd "$dir" ;;
	*) start_lightcone "$WORK/lightcone-$1" "$dir" always ;;
	esac
}

# --- build ---
TARGETS=(redis tree)
log "building the work tree and putload"
(cd "$REPO" && go build -o "$WORK/lightcone-tree" ./cmd/lightcone && go build -o "$WORK/putload" ./scripts/putload)
TREE_REV="$(tree_rev)"
if [[ -n "$BASE" ]]; then
	build_base "$BASE"
	TARGETS+=(base)
fi
[[ "$ETCD" == 1 ]] && TARGETS+=(etcd)

RESULTS="$WORK/results.tsv" # round target test rps p50 p99 cpu-µs/request
: >"$RESULTS"
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
nt=${#TARGETS[@]}
for ((r = 1; r <= ROUNDS; r++)); do
	for ((k = 0; k < nt; k++)); do
		target="${TARGETS[$(((k + r - 1) % nt))]}"
		start "$target"
		if [[ "$target" != etcd ]]; then
			for p in $PIPELINES; do
				log "round $r: $target SET -P $p"
				cpu0="$(server_cpu)"
				redis-benchmark -p "$PORT" -t set -n "$N" -c "$CLIENTS" -P "$p" --csv | redis_csv_rows |
					awk -F'\t' -v r="$r" -v t="$target" -v p="$p" '{ printf "%s\t%s\tSET -P%s\t%s\t%s\t%s", r, t, p, $2, $3, $4 }' >>"$RESULTS"
				cpu_per "$cpu0" "$N" >>"$RESULTS"
			done
		fi
		if [[ "$target" != redis && "$ETCD" == 1 ]]; then
			log "round $r: $target put (gRPC, $CLIENTS clients)"
			kind=lightcone
			[[ "$target" == etcd ]] && kind=etcd
			cpu0="$(server_cpu)"
			"$WORK/putload" -target "$kind" -addr "127.0.0.1:$GRPC" -clients "$CLIENTS" -n "$PUTS" |
				awk -v r="$r" -v t="$target" '{ printf "%s\t%s\tput\t%s\t%s\t%s", r, t, $1, $2, $3 }' >>"$RESULTS"
			cpu_per "$cpu0" "$PUTS" >>"$RESULTS"
		fi
		stop_server
	done
done

REPORT="$WORK/report.md"
{
	echo "## Durable writes: Lightcone --sync always vs Redis appendfsync always and etcd, $ROUNDS interleaved rounds"
	echo
	echo "redis $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') \`--appendonly yes --appendfsync always\`;" \
		"$([[ "$ETCD" == 1 ]] && etcd --version | head -1 | sed 's/: / /');" \
		"lightcone \`--sync always\`: tree $TREE_REV${BASE_REV:+, base $BASE ($BASE_REV)};" \
		"SET: \`redis-benchmark -t set -n $N -c $CLIENTS -P {$PIPELINES}\`; put: \`putload -n $PUTS -clients $CLIENTS\` (gRPC);" \
		"$(nproc) CPUs; load average before $LOAD_BEFORE, after $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "| round | target | test | req/s | p50 ms | p99 ms | server CPU µs/req |"
	echo "| ---: | --- | --- | ---: | ---: | ---: | ---: |"
	sort -t$'\t' -k3,3 -k1,1n -k2,2 "$RESULTS" | awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7 }'
	echo
	echo "Medians (min–max) over rounds; a ratio is taken per round (requests/s, and p99), then its median (min–max)."
	echo
	awk -F'\t' "$MEDIAN_AWK"'
	{
		tests[$3] = 1; if ($1 > R) R = $1
		rps[$3, $2] = rps[$3, $2] " " $4; p99[$3, $2] = p99[$3, $2] " " $6; cpu[$3, $2] = cpu[$3, $2] " " $7
		v[$1, $3, $2] = $4; q[$1, $3, $2] = $6
	}
	END {
		n = 0 # the tests in order (mawk has no asorti)
		for (k in tests) { for (j = n; j >= 1 && order[j] > k; j--) order[j + 1] = order[j]; order[j + 1] = k; n++ }
		print "| test | target | req/s | p99 ms | server CPU µs/req |"
		print "| --- | --- | ---: | ---: | ---: |"
		split("redis etcd base tree", targets, " ")
		for (i = 1; i <= n; i++) for (ti = 1; ti <= 4; ti++) {
			k = order[i]; t = targets[ti]
			if (rps[k, t] == "") continue
			m = med(rps[k, t]); l = lo; h = hi
			m99 = med(p99[k, t]); l99 = lo; h99 = hi
			mc = med(cpu[k, t]); lc = lo; hc = hi
			printf "| %s | %s | %.0f (%.0f–%.0f) | %.2f (%.2f–%.2f) | %.1f (%.1f–%.1f) |\n", k, t, m, l, h, m99, l99, h99, mc, lc, hc
		}
		print ""
		print "| test | ratio | req/s | p99 |"
		print "| --- | --- | ---: | ---: |"
		split("tree/redis base/redis tree/base tree/etcd base/etcd", pairs, " ")
		for (i = 1; i <= n; i++) for (pi = 1; pi <= 5; pi++) {
			k = order[i]; split(pairs[pi], ab, "/")
			s = ""; s99 = ""
			for (r = 1; r <= R; r++) if (v[r, k, ab[1]] > 0 && v[r, k, ab[2]] > 0) {
				s = s " " v[r, k, ab[1]] / v[r, k, ab[2]]
				if (q[r, k, ab[2]] > 0) s99 = s99 " " q[r, k, ab[1]] / q[r, k, ab[2]]
			}
			if (s == "") continue
			m = med(s); l = lo; h = hi
			m99 = med(s99)
			printf "| %s | %s | %.2f (%.2f–%.2f) | %.2f (%.2f–%.2f) |\n", k, pairs[pi], m, l, h, m99, lo, hi
		}
	}' "$RESULTS"
} >"$REPORT"
cat "$REPORT"
if [[ -n "$OUT" ]]; then
	cp "$REPORT" "$OUT"
	log "report written to $OUT"
fi
