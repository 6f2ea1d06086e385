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

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

log() { printf '[bench-redis] %s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 2
}

# --- dependencies -----------------------------------------------------------

install_redis() {
	local sudo=()
	if [[ "$(id -u)" != 0 ]]; then
		command -v sudo >/dev/null 2>&1 || die "redis-server/redis-benchmark missing and not root (no sudo)"
		sudo=(sudo)
	fi
	log "installing redis-server and redis-tools (apt-get)"
	"${sudo[@]}" apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq redis-server redis-tools >&2
	# The package may start a system instance through systemd; it is not ours
	# and does not matter: every instance here uses its own free port.
}

for tool in redis-server redis-benchmark redis-cli; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		install_redis
		break
	fi
done
command -v go >/dev/null 2>&1 || die "go not found"
for tool in redis-server redis-benchmark redis-cli; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool still missing after install"
done

# --- temp dir, processes and cleanup -----------------------------------------

WORK="$(mktemp -d "${TMPDIR:-/tmp}/bench-redis.XXXXXX")"
SERVER_PID=""

stop_server() {
	local pid="$SERVER_PID"
	[[ -n "$pid" ]] || return 0
	SERVER_PID=""
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		local i
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			log "pid $pid did not stop within 10 s; killing it"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	wait "$pid" 2>/dev/null || true
}

# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
	local rc=$?
	stop_server
	if [[ "$KEEP" == 1 ]]; then
		log "kept $WORK"
	else
		rm -rf "$WORK"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- helpers -----------------------------------------------------------------

USED_PORTS=" "

# Pick listen ports below the kernel's ephemeral range: redis-benchmark's many
# client connections take ephemeral ports, and a listener put on one of them
# can fail to bind.
read -r EPH_LO EPH_HI </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || { EPH_LO=32768 EPH_HI=60999; }
if ((EPH_LO > 12000)); then
	PORT_LO=10000 PORT_HI=$((EPH_LO - 1))
else
	PORT_LO=$((EPH_HI + 1)) PORT_HI=65535
fi

# port_in_use PORT: true if any TCP socket on this machine uses local PORT (ss),
# or, without ss, if something accepts connections on 127.0.0.1:PORT.
port_in_use() {
	if command -v ss >/dev/null 2>&1; then
		[[ -n "$(ss -Htan "( sport = :$1 )" 2>/dev/null)" ]]
	else
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
	fi
}

# free_port: sets PORT to a loopback TCP port nothing uses and this run has not
# used (not called in $(...), so that USED_PORTS keeps its update).
PORT=""
free_port() {
	local p i
	for ((i = 0; i < 200; i++)); do
		p=$((PORT_LO + RANDOM % (PORT_HI - PORT_LO + 1)))
		[[ "$USED_PORTS" == *" $p "* ]] && continue
		port_in_use "$p" && continue
		USED_PORTS+="$p "
		PORT="$p"
		return 0
	done
	die "no free port found"
}

# wait_ready PORT LOGFILE: wait until the server on PORT answers PING. Returns
# 1 if the server exited during start-up (e.g. its port was taken meanwhile).
wait_ready() {
	local port="$1" logfile="$2" i
	for ((i = 0; i < 150; i++)); do
		if ! kill -0 "$SERVER_PID" 2>/dev/null; then
			wait "$SERVER_PID" 2>/dev/null || true
			SERVER_PID=""
			log "server on port $port exited during start-up:"
			tail -n 5 "$logfile" >&2 || true
			return 1
		fi
		if [[ "$(redis-cli -h 127.0.0.1 -p "$port" PING 2>/dev/null || true)" == PONG ]]; then
			return 0
		fi
		sleep 0.1
	done
	cat "$logfile" >&2 || true
	die "server on port $port not ready after 15 s"
}

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
		# CSV columns (redis-benchmark 7): test, rps, avg, min, p50, p95, p99, max.
		awk -F, -v t="$target" -v s="$sync" -v p="$p" -v f="$csv" '
			NR == 1 {
				for (i = 1; i <= NF; i++) { h = $i; gsub(/"/, "", h); col[h] = i }
				if (!("rps" in col) || !("p50_latency_ms" in col) || !("p99_latency_ms" in col)) {
					print "unexpected redis-benchmark CSV header in " f ": " $0 > "/dev/stderr"; exit 1
				}
				next
			}
			{
				gsub(/"/, "")
				if ($1 == "GET" || $1 == "SET") {
					print t "\t" s "\t" p "\t" $1 "\t" $col["rps"] "\t" $col["p50_latency_ms"] "\t" $col["p99_latency_ms"]
					n++
				}
			}
			END { if (n != 2) { print "expected GET and SET rows in " f > "/dev/stderr"; exit 1 } }
		' "$csv" >"$csv.rows"
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
	LC_REV="$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')"
	if [[ -n "$(git -C "$REPO" status --porcelain -- '*.go' go.mod go.sum 2>/dev/null)" ]]; then
		LC_REV+="+dirty"
	fi
fi
log "building lightcone ($LC_REV) into $WORK"
(cd "$SRC" && go build -o "$LC" ./cmd/lightcone)

# --- redis-server ------------------------------------------------------------

REDIS_VERSION="$(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p')"
BENCH_VERSION="$(redis-benchmark --version | awk '{print $2}')"

# start_redis DIR: start redis-server on a free port; sets PORT.
start_redis() {
	local dir="$1"
	rm -rf "${dir:?}"/*
	free_port
	log "starting redis-server $REDIS_VERSION on 127.0.0.1:$PORT"
	redis-server --bind 127.0.0.1 --port "$PORT" --appendonly yes --appendfsync everysec \
		--save '' --dir "$dir" --daemonize no --logfile "$dir/redis.log" &
	SERVER_PID=$!
	wait_ready "$PORT" "$dir/redis.log"
}

run_redis() {
	local dir="$WORK/redis" try
	mkdir -p "$dir"
	await_quiet redis
	for try in 1 2 3; do
		start_redis "$dir" && break
		((try < 3)) || die "redis-server did not start"
	done
	sanity "$PORT"
	bench redis everysec "$PORT"
	stop_server
}

# --- lightcone ---------------------------------------------------------------

# start_lightcone SYNC DIR: start Lightcone with a fresh data dir on free
# ports; sets PORT (RESP).
start_lightcone() {
	local sync="$1" dir="$2" port http
	free_port
	port="$PORT"
	free_port
	http="$PORT"
	rm -rf "$dir/data"
	log "starting lightcone --sync $sync on 127.0.0.1:$port (http $http)"
	"$LC" server --data-dir "$dir/data" --resp-addr "127.0.0.1:$port" \
		--http-addr "127.0.0.1:$http" --sync "$sync" 2>"$dir/server.log" &
	SERVER_PID=$!
	PORT="$port"
	wait_ready "$port" "$dir/server.log"
}

run_lightcone() {
	local sync="$1" dir="$WORK/lightcone-$1" try
	mkdir -p "$dir"
	await_quiet "lightcone/$sync"
	for try in 1 2 3; do
		start_lightcone "$sync" "$dir" && break
		((try < 3)) || die "lightcone --sync $sync did not start"
	done
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
