#!/usr/bin/env bash
# bench-table.sh: issue 17's whole table, rerun side by side on this machine
# in one invocation: Lightcone against Redis 7 and etcd, in interleaved rounds,
# each row's ratio Lightcone/peer as the median (min–max) of the per-round
# ratios, beside its goal.
#
# Targets, each started fresh (new ports, empty data dirs) in every round and
# run alone; their order rotates from round to round, so slow drift in the
# machine's load falls on each alike:
#   redis-es  redis-server --appendonly yes --appendfsync everysec --save ''
#   redis-al  redis-server --appendonly yes --appendfsync always --save ''
#   lc-es     lightcone server --sync everysec (like-for-like with redis-es)
#   lc-al     lightcone server --sync always
#             Both run with GOMAXPROCS=$LC_PROCS (default 1): one core, as
#             Redis's one event-loop thread, leaving the other to the load
#             generator. With Go's default (both cores) the server's second
#             thread contends with the load generator for the machine's two
#             cores: lower GET throughput and a p99 tail of 2-5 ms
#             (README, "Performance"). LC_PROCS=0 runs Go's default.
#             lc-al also takes $LC_AL_ARGS (default --fsync-holds-thread
#             --spare-proc: its fsyncs wait as Redis's thread waits in its
#             own, and its flushes and compactions get the second core
#             while they run, as Redis's AOF rewrite runs in a forked child).
#   etcd1     etcd, one member, default settings (fsyncs its WAL before a commit)
#   lc3       three lightcone servers --sync always, world local3 on loopback
#             (no WAN emulation): default keyspace quorum, one replica per
#             region, QUORUM/QUORUM, write_order auto; keyspace "lease"
#             (protocol lease, defaults)
#   etcd3     etcd, three members on loopback
#   sim       the simulator's Go benchmark (test binary built once)
# Rows (ROWS picks them; the goals are issue 17's):
#   get     redis-benchmark -t get -n $N -c $CLIENTS -P 1 and -n $N16 -P 16:
#           lc-es / redis-es requests/s; goals >= 0.9 / >= 0.8
#   set     redis-benchmark -t set, -P 1 and -P 16: lc-al / redis-al; goal >= 1.0
#   p99     the p99 latency of every redis-benchmark row above, Lightcone's /
#           Redis's; goal <= 1.5
#   keys    the set row over $RANDKEYS random keys of 100 bytes
#           (redis-benchmark -r $RANDKEYS -d 100; the set row writes one key):
#           lc-al / redis-al requests/s and p99, at -P 1 and -P 16; not in
#           the issue's table, held to the set and p99 rows' goals
#   ycsb    scripts/ycsbload -workload a and b ($RECORDS records loaded, then
#           $YCSB_OPS operations by $CLIENTS clients, Zipfian keys, 1000-byte
#           values, GET/SET over RESP): lc-al / redis-es; goal >= 0.8
#   put     scripts/putload, $PUTS puts over gRPC by $CLIENTS clients, one
#           connection and one put in flight each: lc-al / etcd1; goal >= 3.
#           With the set row too, also the issue's own form of this row:
#           durable SET -P 1 through RESP (redis-benchmark, above) / etcd1's
#           put (putload): each server through its own protocol's client
#   quorum  the same against 3 nodes (clients spread over the nodes):
#           lc3 (default keyspace, QUORUM) / etcd3; goal >= 2
#   lease   putload -mode get: $KEYS keys put, each read once through every
#           node (primes the leases; not timed), then $GETS gets by $CLIENTS
#           clients spread over the nodes: lc3 keyspace lease / etcd3
#           linearizable Range; goal: keep (9.8 when the issue was written)
#   resp3   the quorum and lease rows through RESP: lc3r, three lightcone
#           servers as lc3, redis-benchmark -c $CLIENTS -P 1 against a-0:
#           -t set -n $N with the default keyspace quorum (QUORUM) / etcd3's
#           put (putload, the quorum row); then the same three restarted with
#           the default keyspace protocol: lease, the benchmark's key set and
#           read once through every node (primes its lease), -t get -n $N /
#           etcd3's linearizable get (putload, the lease row)
#   sim     go test ./internal/scenario -bench 'BenchmarkSim$/(quorum|lease|meteor)/'
#           -benchtime $SIM_BENCHTIME: client ops per real second, codec off
#           and on; no peer; goal >= 200k each
# Prints (stdout, Markdown) the table: per row the median (min–max) of the
# per-round ratios, the goal, whether the median meets it, and each target's
# median (min–max) requests/s (or p99 ms, or ops/s); then every round's raw
# rows. Progress goes to stderr.
#
# Environment:
#   ROUNDS=3          paired rounds (>= 3 for a spread worth reading)
#   ROWS="get set p99 keys ycsb put quorum lease resp3 sim"
#   N=200000          requests per redis-benchmark test at -P 1
#   N16=2000000       requests per redis-benchmark test at -P 16 (200,000 of
#                     them last ~0.15 s: too short for a steady figure)
#   CLIENTS=50
#   RANDKEYS=1000000  the keys row's key space
#   RECORDS=10000     YCSB records;  YCSB_OPS=100000  YCSB operations per run
#   PUTS=20000        puts per putload run
#   KEYS=10000        keys of putload (gets: loaded and primed first)
#   GETS=100000       gets per putload -mode get run
#   SIM_BENCHTIME=2x  go test -benchtime of the simulator rows
#   LC_PROCS=1        GOMAXPROCS of lc-es and lc-al (0: Go's default, every CPU)
#   LC_AL_ARGS="--fsync-holds-thread --spare-proc"  lc-al's extra server
#                     flags ("" none)
#   KEEP=1            keep the temp dir (binaries, data dirs, logs, raw rows)
#   OUT=FILE          also write the report (Markdown) to FILE
# Redis (redis-server, redis-tools) and etcd (etcd-server) are installed with
# apt-get if missing. With ROUNDS=3 and the defaults it took 5–20 minutes on
# the 2-core machine (about 6 in the runs of 2026-11-28's last session, the
# builds included; the report's header gives the rounds' own minutes).
set -euo pipefail

ROUNDS="${ROUNDS:-3}"
ROWS="${ROWS:-get set p99 keys ycsb put quorum lease resp3 sim}"
RANDKEYS="${RANDKEYS:-1000000}"
N="${N:-200000}"
N16="${N16:-2000000}"
CLIENTS="${CLIENTS:-50}"
RECORDS="${RECORDS:-10000}"
YCSB_OPS="${YCSB_OPS:-100000}"
PUTS="${PUTS:-20000}"
KEYS="${KEYS:-10000}"
GETS="${GETS:-100000}"
SIM_BENCHTIME="${SIM_BENCHTIME:-2x}"
KEEP="${KEEP:-0}"
LC_PROCS="${LC_PROCS:-1}"
LC_AL_ARGS="${LC_AL_ARGS---fsync-holds-thread --spare-proc}"
OUT="${OUT:-}"

row() { [[ " $ROWS " == *" $1 "* ]]; }

# shellcheck source=scripts/bench-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh" bench-table
if row get || row set || row p99 || row keys || row ycsb; then need_redis; fi
if row put || row quorum || row lease || row resp3; then need_etcd; fi
command -v curl >/dev/null 2>&1 || die "curl not found"

# --- the targets each row needs ---
TARGETS=()
want() {
	local t
	for t in "$@"; do [[ " ${TARGETS[*]} " == *" $t "* ]] || TARGETS+=("$t"); done
}
if row get || row p99; then want redis-es lc-es; fi
if row set || row p99 || row keys; then want redis-al lc-al; fi
if row ycsb; then want redis-es lc-al; fi
if row put; then want etcd1 lc-al; fi
if row quorum || row lease; then want etcd3 lc3; fi
if row resp3; then want etcd3 lc3r; fi
if row sim; then want sim; fi
((${#TARGETS[@]})) || die "ROWS=\"$ROWS\" names no row (get set p99 keys ycsb put quorum lease resp3 sim)"

# --- build ---
log "building lightcone, putload, ycsbload$(row sim && echo ' and the simulator benchmark')"
(
	cd "$REPO"
	go build -o "$WORK/lightcone" ./cmd/lightcone
	go build -o "$WORK/putload" ./scripts/putload
	go build -o "$WORK/ycsbload" ./scripts/ycsbload
	if row sim; then go test -c -o "$WORK/scenario.test" ./internal/scenario; fi
)
REV="$(tree_rev)"

RESULTS="$WORK/results.tsv" # round test target rps p50 p99
: >"$RESULTS"

# record R TEST TARGET: "rps p50 p99" lines on stdin to RESULTS.
record() { awk -v r="$1" -v t="$2" -v g="$3" 'NF >= 3 { printf "%s\t%s\t%s\t%s\t%s\t%s\n", r, t, g, $1, $2, $3 }' >>"$RESULTS"; }

# redis_bench R TARGET OP [NAME ARGS...]: redis-benchmark -t OP at -P 1 and
# -P 16 (with ARGS), recorded as NAME-P1 and NAME-P16 (default OP).
redis_bench() {
	local r="$1" target="$2" op="$3" name="${4:-${3^^}}" p
	shift $(($# < 4 ? $# : 4))
	for p in 1 16; do
		local n="$N"
		((p == 1)) || n="$N16"
		log "round $r: $target redis-benchmark -t $op -P $p -n $n $*"
		redis-benchmark -p "$PORT" -t "$op" -n "$n" -c "$CLIENTS" -P "$p" "$@" --csv | redis_csv_rows |
			awk -F'\t' '{ print $2, $3, $4 }' | record "$r" "$name-P$p" "$target"
	done
}

# ycsb R TARGET: YCSB A and B through RESP on PORT.
ycsb() {
	local r="$1" target="$2" w
	for w in a b; do
		log "round $r: $target YCSB ${w^^}"
		"$WORK/ycsbload" -addr "127.0.0.1:$PORT" -workload "$w" -records "$RECORDS" -n "$YCSB_OPS" -clients "$CLIENTS" |
			record "$r" "YCSB-${w^^}" "$target"
	done
}

# load R TEST TARGET KIND ADDRS [ARGS...]: one putload run.
load() {
	local r="$1" test="$2" target="$3" kind="$4" addrs="$5"
	shift 5
	log "round $r: $target $test (putload $*)"
	"$WORK/putload" -target "$kind" -addr "$addrs" -clients "$CLIENTS" "$@" | record "$r" "$test" "$target"
}

# lc_procs CMD...: CMD with GOMAXPROCS=$LC_PROCS in its environment (none
# with LC_PROCS=0).
lc_procs() {
	if ((LC_PROCS > 0)); then
		GOMAXPROCS="$LC_PROCS" "$@"
	else
		"$@"
	fi
}

# run R TARGET: start TARGET alone, run the tests of the chosen rows on it, stop it.
run() {
	local r="$1" t="$2" dir="$WORK/run-$2"
	case "$t" in
	redis-es)
		start_redis "$dir" everysec
		if row get || row p99; then redis_bench "$r" "$t" get; fi
		if row ycsb; then ycsb "$r" "$t"; fi
		;;
	redis-al)
		start_redis "$dir" always
		if row set || row p99; then redis_bench "$r" "$t" set; fi
		if row keys; then redis_bench "$r" "$t" set SETR -r "$RANDKEYS" -d 100; fi
		;;
	lc-es)
		lc_procs start_lightcone "$WORK/lightcone" "$dir" everysec
		redis_bench "$r" "$t" get
		;;
	lc-al)
		# shellcheck disable=SC2086 # LC_AL_ARGS is a list of flags
		lc_procs start_lightcone "$WORK/lightcone" "$dir" always $LC_AL_ARGS
		if row set || row p99; then redis_bench "$r" "$t" set; fi
		if row ycsb; then ycsb "$r" "$t"; fi
		if row put; then load "$r" put1 "$t" lightcone "127.0.0.1:$GRPC" -n "$PUTS"; fi
		# Last: its million keys must not be in the store the rows above
		# measure (their peers start empty).
		if row keys; then redis_bench "$r" "$t" set SETR -r "$RANDKEYS" -d 100; fi
		;;
	etcd1)
		start_etcd "$dir"
		load "$r" put1 "$t" etcd "127.0.0.1:$GRPC" -n "$PUTS"
		;;
	lc3)
		start_lightcone3 "$WORK/lightcone" "$dir" always 'keyspaces: [{name: lease, protocol: lease}]'
		if row quorum; then load "$r" put3 "$t" lightcone "$GRPCS" -n "$PUTS"; fi
		if row lease; then load "$r" get3 "$t" lightcone "$GRPCS" -mode get -keyspace lease -keys "$KEYS" -n "$GETS"; fi
		;;
	lc3r)
		start_lightcone3 "$WORK/lightcone" "$dir" always
		PORT="${PORTS%% *}"
		log "round $r: $t redis-benchmark -t set -P 1 (QUORUM, through a-0)"
		redis-benchmark -p "$PORT" -t set -n "$N" -c "$CLIENTS" -P 1 --csv | redis_csv_rows |
			awk -F'\t' '{ print $2, $3, $4 }' | record "$r" SET3-P1 "$t"
		stop_server
		LC3_KEYSPACE='{protocol: lease}' start_lightcone3 "$WORK/lightcone" "$dir" always
		PORT="${PORTS%% *}"
		# redis-benchmark's key without -r: put once, read through every node.
		redis-cli -p "$PORT" SET key:__rand_int__ xxx >/dev/null
		for p in $PORTS; do redis-cli -p "$p" GET key:__rand_int__ >/dev/null; done
		log "round $r: $t redis-benchmark -t get -P 1 (lease, through a-0)"
		redis-benchmark -p "$PORT" -t get -n "$N" -c "$CLIENTS" -P 1 --csv | redis_csv_rows |
			awk -F'\t' '{ print $2, $3, $4 }' | record "$r" GET3-P1 "$t"
		;;
	etcd3)
		start_etcd3 "$dir"
		if row quorum || row resp3; then load "$r" put3 "$t" etcd "$GRPCS" -n "$PUTS"; fi
		if row lease || row resp3; then load "$r" get3 "$t" etcd "$GRPCS" -mode get -keys "$KEYS" -n "$GETS"; fi
		;;
	sim)
		log "round $r: simulator benchmark (-benchtime $SIM_BENCHTIME)"
		(cd "$REPO/internal/scenario" && "$WORK/scenario.test" -test.run '^$' \
			-test.bench 'BenchmarkSim$/(quorum|lease|meteor)/' -test.benchtime "$SIM_BENCHTIME") |
			awk '/^BenchmarkSim\// {
				split($1, n, "/"); sub(/-[0-9]+$/, "", n[3]); sub(/codec=/, "", n[3])
				for (i = 2; i <= NF; i++) if ($i == "ops/s") print $(i - 1), "-", "-", n[2] "-" n[3]
			}' | while read -r ops p50 p99 test; do echo "$ops $p50 $p99" | record "$r" "sim-$test" sim; done
		;;
	esac
	stop_server
}

START="$(date +%s)"
LOADS=""
nt=${#TARGETS[@]}
for ((r = 1; r <= ROUNDS; r++)); do
	LOADS+="${LOADS:+, }$(cut -d' ' -f1 /proc/loadavg)"
	for ((k = 0; k < nt; k++)); do
		run "$r" "${TARGETS[$(((k + r - 1) % nt))]}"
	done
done
LOADS+=", $(cut -d' ' -f1 /proc/loadavg)"
MINUTES=$((($(date +%s) - START + 30) / 60))

# The table's rows: label | test | Lightcone target | peer target (or
# TARGET:TEST, the peer's figure from another test) | metric
# (rps: Lightcone/peer; p99: Lightcone/peer; abs: Lightcone alone) | goal
# text | goal as a comparison (>= or <=, number).
SPEC="$WORK/rows.txt"
: >"$SPEC"
spec() { printf '%s\n' "$@" >>"$SPEC"; }
if row get; then spec "GET \`-P 1\` vs Redis everysec|GET-P1|lc-es|redis-es|rps|≥ 0.9|>= 0.9" \
	"GET \`-P 16\` vs Redis everysec|GET-P16|lc-es|redis-es|rps|≥ 0.8|>= 0.8"; fi
if row set; then spec "SET \`-P 1\`, \`--sync always\` vs \`appendfsync always\`|SET-P1|lc-al|redis-al|rps|≥ 1.0|>= 1.0" \
	"SET \`-P 16\`, \`--sync always\` vs \`appendfsync always\`|SET-P16|lc-al|redis-al|rps|≥ 1.0|>= 1.0"; fi
if row p99; then spec "p99, GET \`-P 1\` (everysec)|GET-P1|lc-es|redis-es|p99|≤ 1.5×|<= 1.5" \
	"p99, GET \`-P 16\` (everysec)|GET-P16|lc-es|redis-es|p99|≤ 1.5×|<= 1.5" \
	"p99, SET \`-P 1\` (always)|SET-P1|lc-al|redis-al|p99|≤ 1.5×|<= 1.5" \
	"p99, SET \`-P 16\` (always)|SET-P16|lc-al|redis-al|p99|≤ 1.5×|<= 1.5"; fi
if row keys; then spec "SET \`-P 1\` over $RANDKEYS random keys, \`--sync always\` vs \`appendfsync always\`|SETR-P1|lc-al|redis-al|rps|≥ 1.0|>= 1.0" \
	"SET \`-P 16\` over $RANDKEYS random keys, \`--sync always\` vs \`appendfsync always\`|SETR-P16|lc-al|redis-al|rps|≥ 1.0|>= 1.0" \
	"p99, SET \`-P 1\` over $RANDKEYS random keys (always)|SETR-P1|lc-al|redis-al|p99|≤ 1.5×|<= 1.5" \
	"p99, SET \`-P 16\` over $RANDKEYS random keys (always)|SETR-P16|lc-al|redis-al|p99|≤ 1.5×|<= 1.5"; fi
if row ycsb; then spec "YCSB A, \`--sync always\` vs Redis AOF everysec|YCSB-A|lc-al|redis-es|rps|≥ 0.8|>= 0.8" \
	"YCSB B, \`--sync always\` vs Redis AOF everysec|YCSB-B|lc-al|redis-es|rps|≥ 0.8|>= 0.8"; fi
if row put; then spec "durable put vs etcd 1 node (gRPC)|put1|lc-al|etcd1|rps|keep ≥ 3|>= 3"; fi
if row put && row set; then spec "durable SET \`-P 1\` (RESP) vs etcd 1 node put (gRPC): the issue's row|SET-P1|lc-al|etcd1:put1|rps|keep ≥ 3|>= 3"; fi
if row quorum; then spec "3 nodes, QUORUM put vs etcd 3 members|put3|lc3|etcd3|rps|≥ 2|>= 2"; fi
if row lease; then spec "3 nodes, primed lease get vs etcd linearizable get|get3|lc3|etcd3|rps|keep (9.8)|>= 9.8"; fi
if row resp3; then spec "3 nodes, QUORUM SET \`-P 1\` (RESP, one node) vs etcd 3 members put (gRPC)|SET3-P1|lc3r|etcd3:put3|rps|≥ 2|>= 2" \
	"3 nodes, primed lease GET \`-P 1\` (RESP, one node) vs etcd linearizable get (gRPC)|GET3-P1|lc3r|etcd3:get3|rps|keep (9.8)|>= 9.8"; fi
if row sim; then
	for p in quorum lease meteor; do
		for c in off on; do spec "simulator, $p, codec $c (ops/s)|sim-$p-$c|sim||abs|≥ 200k|>= 200000"; done
	done
fi

REPORT="$WORK/report.md"
{
	echo "## Issue 17's table, $ROUNDS interleaved rounds (scripts/bench-table.sh)"
	echo
	echo "Lightcone $REV; redis $(redis-server --version 2>/dev/null | sed -n 's/.*v=\([^ ]*\).*/\1/p');" \
		"$(etcd --version 2>/dev/null | head -1 | sed 's/: / /');" \
		"lc-es and lc-al GOMAXPROCS=$( ((LC_PROCS > 0)) && echo "$LC_PROCS" || echo "Go's default"), lc-al ${LC_AL_ARGS:-without extra flags};" \
		"N=$N, N16=$N16, CLIENTS=$CLIENTS, RANDKEYS=$RANDKEYS, RECORDS=$RECORDS, YCSB_OPS=$YCSB_OPS, PUTS=$PUTS, KEYS=$KEYS, GETS=$GETS, SIM_BENCHTIME=$SIM_BENCHTIME;" \
		"$(nproc) CPUs, $(date -u +%Y-%m-%d); load average (1 min) at each round's start and at the end: $LOADS; $MINUTES min."
	echo
	echo "Ratio: Lightcone / peer per round (requests/s; p99 rows: p99 latency), then its median (min–max)."
	echo "Targets: median (min–max) over rounds of requests/s (p99 rows: p99 ms; simulator: client ops per real second)."
	echo
	echo "| row | Lightcone / peer | goal | met | Lightcone | peer |"
	echo "| --- | ---: | --- | --- | ---: | ---: |"
	awk -F'\t' "$MEDIAN_AWK"'
	function fmt(x) { return (x >= 1000) ? sprintf("%.0f", x) : sprintf("%.2f", x) }
	function span(s,   m) { if (s == "") return "–"; m = med(s); return fmt(m) " (" fmt(lo) "–" fmt(hi) ")" }
	FNR == NR { v[$1, $2, $3] = $4; q[$1, $2, $3] = $6; if ($1 > R) R = $1; next }
	{
		split($0, f, "|")
		label = f[1]; test = f[2]; a = f[3]; b = f[4]; metric = f[5]; goal = f[6]; split(f[7], g, " ")
		# The peer is TARGET or TARGET:TEST (a peer measured by another test).
		btest = test
		if (index(b, ":")) { btest = substr(b, index(b, ":") + 1); b = substr(b, 1, index(b, ":") - 1) }
		ra = ""; rb = ""; s = ""
		for (r = 1; r <= R; r++) {
			x = (metric == "p99") ? q[r, test, a] : v[r, test, a]
			y = (metric == "p99") ? q[r, btest, b] : v[r, btest, b]
			if (x != "" && x != "-") ra = ra " " x
			if (y != "" && y != "-") rb = rb " " y
			if (metric != "abs" && x > 0 && y > 0) s = s " " x / y
		}
		if (metric == "abs") s = ra
		met = "–"
		if (s != "") { m = med(s); met = ((g[1] == ">=") ? (m >= g[2]) : (m <= g[2])) ? "yes" : "no" }
		printf "| %s | %s | %s | %s | %s | %s |\n", label, (metric == "abs") ? "–" : span(s), goal, met, span(ra), span(rb)
	}' "$RESULTS" "$SPEC"
	echo
	echo "Every round (target order rotating):"
	echo
	echo "| round | test | target | req/s | p50 ms | p99 ms |"
	echo "| ---: | --- | --- | ---: | ---: | ---: |"
	sort -t$'\t' -k2,2 -k1,1n -k3,3 "$RESULTS" | awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }'
} >"$REPORT"
cat "$REPORT"
if [[ -n "$OUT" ]]; then
	cp "$REPORT" "$OUT"
	log "report written to $OUT"
fi
