#!/usr/bin/env bash
# bench-redis.sh: Lightcone vs redis-server, single node, loopback, no WAN
# emulation, measured with redis-benchmark in one run.
#
# Targets (each started on free loopback ports with a fresh data dir, and
# benchmarked alone; only one server runs at a time):
#   redis      redis-server --appendonly yes --appendfsync everysec --save ''
#   lightcone  lightcone server --sync everysec   (like-for-like with Redis)
#   lightcone  lightcone server --sync always     (fsync before every reply)
# For each target and each pipeline depth (-P 1 and -P 16):
#   redis-benchmark -t get,set -n $N -c $CLIENTS -P <depth> --csv
#
# Prints a Markdown table (target, sync policy, pipeline, op, requests/s,
# p50 ms, p99 ms) and the Lightcone/Redis ratios for GET and SET per pipeline
# depth. Exits 1 if any Lightcone GET is below GET_MIN_RATIO (0.5) x Redis GET
# at the same depth, so it can serve as a check.
#
# Environment:
#   N=200000        requests per redis-benchmark test
#   CLIENTS=50      parallel connections
#   PIPELINES="1 16" pipeline depths
#   GET_MIN_RATIO=0.5
#   KEEP=1          keep the temp dir (binary, data dirs, logs, raw CSV)
#   OUT=FILE        also write the report (Markdown) to FILE
#   QUIET_WAIT=120  seconds to wait, before each target, for other work on the
#                   machine to drop to QUIET_PCT=15 % CPU (then it goes on, noting it)
#   REF=REV         benchmark git revision REV (git archive) instead of the work tree
#
# redis-server and redis-benchmark come from Debian's redis-server and
# redis-tools packages; they are installed with apt-get if missing.
set -euo pipefail

N="${N:-200000}"
CLIENTS="${CLIENTS:-50}"
PIPELINES="${PIPELINES:-1 16}"
GET_MIN_RATIO="${GET_MIN_RATIO:-0.5}"
KEEP="${KEEP:-0}"
OUT="${OUT:-}"
REF="${REF:-}"
QUIET_WAIT="${QUIET_WAIT:-120}"
QUIET_PCT="${QUIET_PCT:-15}"

# shellcheck source=scripts/bench-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh" bench-redis
need_redis

# --- helpers -----------------------------------------------------------------

# cpu_busy_pct: percent of the machine's CPU time busy over one second (all
# processes). A benchmark on a busy machine measures the contention too: the
# report records it.
cpu_busy_pct() {
	local a b
	a="$(awk '/^cpu /{i=$5+$6; t=0; for(k=2;k<=NF;k++) t+=$k; print i, t}' /proc/stat)"
	sleep 1
	b="$(awk '/^cpu /{i=$5+$6; t=0; for(k=2;k<=NF;k++) t+=$k; print i, t}' /proc/stat)"
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); dt = y[2] - x[2]
		printf "%d", (dt > 0) ? 100 * (1 - (y[1] - x[1]) / dt) : 0 }'
}

# cpu_snapshot: sets SNAP to "machine-busy machine-total server children"
# CPU times, in clock ticks (USER_HZ, 100/s): the machine's from /proc/stat,
# the server's (SERVER_PID) from /proc/PID/stat, and this shell's finished
# children's (redis-benchmark, ...) from the times builtin.
declare -A OTHER_CPU=()
SNAP=""
cpu_snapshot() {
	local m srv=0 kids
	m="$(awk '/^cpu /{t=0; for(k=2;k<=NF;k++) t+=$k; print t-$5-$6, t}' /proc/stat)"
	if [[ -n "$SERVER_PID" && -r "/proc/$SERVER_PID/stat" ]]; then
		srv="$(sed 's/.*) //' "/proc/$SERVER_PID/stat" | awk '{print $12+$13}')"
	fi
	times >"$WORK/times" # not in $(...): a subshell's children are not ours
	kids="$(sed -n 2p "$WORK/times" | awk '{
		s = 0
		for (k = 1; k <= 2; k++) { split($k, a, "m"); sub(/s$/, "", a[2]); s += a[1] * 60 + a[2] }
		printf "%d", s * 100 }')"
	SNAP="$m $srv $kids"
}

# await_quiet TARGET: on a shared machine, wait up to QUIET_WAIT seconds for
# other work to drop to at most QUIET_PCT% CPU before benchmarking TARGET;
# record what it was in BUSY_NOTES either way.
BUSY_NOTES=""
await_quiet() {
	local target="$1" busy waited=0
	busy="$(cpu_busy_pct)"
	while ((busy > QUIET_PCT && waited < QUIET_WAIT)); do
		((waited == 0)) && log "machine ${busy}% busy; waiting up to ${QUIET_WAIT}s for it to quiet down"
		sleep 4
		waited=$((waited + 5))
		busy="$(cpu_busy_pct)"
	done
	if ((busy > QUIET_PCT)); then
		log "warning: machine still ${busy}% busy; benchmarking $target anyway (results skewed by contention)"
	fi
	BUSY_NOTES+="${BUSY_NOTES:+, }$target ${busy}%"
}

# sanity PORT: a SET/GET round trip, so that a server answering errors is not
# benchmarked as a fast one.
sanity() {
	local port="$1" got
	redis-cli -h 127.0.0.1 -p "$port" SET bench:sanity v1 >/dev/null
	got="$(redis-cli -h 127.0.0.1 -p "$port" GET bench:sanity)"
	[[ "$got" == v1 ]] || die "sanity GET on port $port returned '$got', want v1"
}

RESULTS="$WORK/results.tsv" # target \t sync \t pipeline \t op \t rps \t p50 \t p99 \t other-cpu%
: >"$RESULTS"

# bench TARGET SYNC PORT: run redis-benchmark for each pipeline depth and
# append its rows to $RESULTS.
bench() {
	local target="$1" sync="$2" port="$3" p csv
	for p in $PIPELINES; do
		csv="$WORK/$target-$sync-P$p.csv"
		log "$target ($sync): redis-benchmark -t get,set -n $N -c $CLIENTS -P $p"
		cpu_snapshot
		local before="$SNAP"
		redis-benchmark -h 127.0.0.1 -p "$port" -t get,set -n "$N" -c "$CLIENTS" -P "$p" --csv >"$csv"
		cpu_snapshot
		# Other work's share of the machine during this run: machine busy time
		# less the server's and redis-benchmark's.
		OTHER_CPU["$target/$sync/$p"]="$(awk -v a="$before" -v b="$SNAP" 'BEGIN {
			split(a, x, " "); split(b, y, " ")
			dt = y[2] - x[2]; other = (y[1] - x[1]) - (y[3] - x[3]) - (y[4] - x[4])
			printf "%d", (dt > 0 && other > 0) ? 100 * other / dt : 0 }')"
		redis_csv_rows <"$csv" | awk -F'\t' -v t="$target" -v s="$sync" -v p="$p" -v f="$csv" '
			$1 == "GET" || $1 == "SET" { print t "\t" s "\t" p "\t" $0; n++ }
			END { if (n != 2) { print "expected GET and SET rows in " f > "/dev/stderr"; exit 1 } }
		' >"$csv.rows"
		awk -v o="${OTHER_CPU["$target/$sync/$p"]}" '{ print $0 "\t" o }' "$csv.rows" >>"$RESULTS"
	done
}

# --- build -------------------------------------------------------------------

LC="$WORK/lightcone"
if [[ -n "$REF" ]]; then
	# Build a committed revision (e.g. while the work tree is mid-edit).
	SRC="$WORK/src"
	mkdir -p "$SRC"
	git -C "$REPO" archive "$REF" | tar -x -C "$SRC"
	LC_REV="$(git -C "$REPO" rev-parse --short "$REF")"
else
	SRC="$REPO"
	LC_REV="$(tree_rev)"
fi
log "building lightcone ($LC_REV) into $WORK"
(cd "$SRC" && go build -o "$LC" ./cmd/lightcone)

# --- redis-server ------------------------------------------------------------

REDIS_VERSION="$(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p')"
BENCH_VERSION="$(redis-benchmark --version | awk '{print $2}')"

run_redis() {
	await_quiet redis
	log "starting redis-server $REDIS_VERSION"
	start_redis "$WORK/redis" everysec
	sanity "$PORT"
	bench redis everysec "$PORT"
	stop_server
}

# --- lightcone ---------------------------------------------------------------

run_lightcone() {
	local sync="$1"
	await_quiet "lightcone/$sync"
	log "starting lightcone --sync $sync"
	start_lightcone "$LC" "$WORK/lightcone-$sync" "$sync"
	sanity "$PORT"
	bench lightcone "$sync" "$PORT"
	stop_server
}

run_redis
run_lightcone everysec
run_lightcone always

# --- report ------------------------------------------------------------------

REPORT="$WORK/report.md"
FAIL=0
{
	echo "## redis-benchmark: Lightcone vs Redis (single node, loopback)"
	echo
	echo "redis-benchmark $BENCH_VERSION \`-t get,set -n $N -c $CLIENTS -P {$(echo "$PIPELINES" | tr ' ' ',')} --csv\`;" \
		"redis-server $REDIS_VERSION \`--appendonly yes --appendfsync everysec --save ''\`;" \
		"Lightcone $LC_REV;" \
		"$(nproc) CPUs; $(uname -sr)."
	echo "Machine CPU busy (1 s sample) just before each target started: $BUSY_NOTES;" \
		"load average after: $(cut -d' ' -f1-3 /proc/loadavg). Anything well above 0% means another" \
		"workload shared the 2 cores: distrust that run."
	echo
	echo "| target | sync policy | pipeline | op | requests/s | p50 ms | p99 ms | other CPU % |"
	echo "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |"
	awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8 }' "$RESULTS"
	echo
	echo "(other CPU %: the machine's CPU used during that redis-benchmark run by anything but the server and"
	echo "redis-benchmark, as % of all $(nproc) CPUs; above a few % the run shared the machine: distrust it.)"
	echo
	echo "### Ratios Lightcone / Redis (requests/s; Redis is appendfsync everysec)"
	echo
	echo "| pipeline | op | Lightcone sync | Lightcone req/s | Redis req/s | ratio | check |"
	echo "| ---: | --- | --- | ---: | ---: | ---: | --- |"
} >"$REPORT"

ratio_rows="$(awk -F'\t' -v min="$GET_MIN_RATIO" '
	$1 == "redis" { redis[$3 "\t" $4] = $5; next }
	{ order[++n] = $0 }
	END {
		# per pipeline, per op: each Lightcone sync policy against Redis everysec
		for (i = 1; i <= n; i++) {
			split(order[i], f, "\t")
			r = redis[f[3] "\t" f[4]]
			ratio = (r > 0) ? f[5] / r : 0
			check = ""
			if (f[4] == "GET") {
				check = (ratio >= min) ? "ok (>= " min ")" : "FAIL (< " min ")"
			}
			printf "%s\t%s\t%s\t%s\t%s\t%.2f\t%s\n", f[3], f[4], f[2], f[5], r, ratio, check
		}
	}' "$RESULTS" | sort -t$'\t' -k1,1n -k2,2 -k3,3)"

while IFS=$'\t' read -r p op sync lrps rrps ratio check; do
	printf '| %s | %s | %s | %s | %s | %s× | %s |\n' "$p" "$op" "$sync" "$lrps" "$rrps" "$ratio" "$check" >>"$REPORT"
	if [[ "$check" == FAIL* ]]; then
		FAIL=1
	fi
done <<<"$ratio_rows"

{
	echo
	if [[ "$FAIL" == 1 ]]; then
		echo "**FAIL**: Lightcone GET below ${GET_MIN_RATIO}× Redis at some pipeline depth."
	else
		echo "**PASS**: Lightcone GET at least ${GET_MIN_RATIO}× Redis at every pipeline depth."
	fi
} >>"$REPORT"

cat "$REPORT"
if [[ -n "$OUT" ]]; then
	cp "$REPORT" "$OUT"
	log "report written to $OUT"
fi
exit "$FAIL"
