# bench-lib.sh: what the benchmark scripts share (bench.sh, bench-table.sh,
# bench-redis.sh, bench-resp-ab.sh). Source it with the script's name as $1,
# after setting KEEP; it sets REPO (the repository's root), checks that go is
# installed, makes WORK (a temp dir named after $1), traps EXIT, INT and
# TERM to stop the servers and remove WORK (kept with KEEP=1), and defines:
#   log MSG, die MSG     a "[$1] MSG" line on stderr; die exits 2 after it
#   tree_rev             the work tree's short HEAD, "+dirty" if Go code changed
#   build_base REV       lightcone of git revision REV (git archive) built to
#                        $WORK/lightcone-base; sets BASE_REV (its short hash)
#   free_port            PORT: a loopback port below the ephemeral range, unused
#   ready CHECK...       wait until CHECK succeeds while the servers run
#   pong PORT            redis-cli PING answers PONG
#   start_redis DIR FSYNC [ARGS...]           redis-server --appendfsync FSYNC; PORT
#   start_lightcone BIN DIR SYNC [ARGS...]    lightcone server --sync SYNC; PORT, GRPC
#   start_lightcone3 BIN DIR SYNC [YAML...]   3 nodes (world local3, no WAN
#                                             emulation); PORTS, GRPCS (comma-separated)
#   start_etcd DIR                            one member; GRPC
#   start_etcd3 DIR                           three members; GRPCS
#   stop_server          stop every server started (TERM, then KILL after 10 s)
#   server_cpu           the last server's user+system CPU time so far, in clock ticks
#   cpu_per TICKS0 N     a tab and its CPU µs per request since TICKS0
#   need_redis, need_etcd  install with apt-get if missing
#   redis_csv_rows       redis-benchmark --csv on stdin -> "OP\trps\tp50\tp99" lines
#   MEDIAN_AWK           an awk function med(s): median of the numbers in s,
#                        setting lo and hi to their min and max
# Each start_* retries taken ports; on failure it prints the log's tail and dies.
# shellcheck shell=bash

BENCH_NAME="$1"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf '[%s] %s\n' "$BENCH_NAME" "$*" >&2; }
die() {
	log "error: $*"
	exit 2
}
command -v go >/dev/null 2>&1 || die "go not found"

tree_rev() {
	local rev
	rev="$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')"
	[[ -z "$(git -C "$REPO" status --porcelain -- '*.go' go.mod go.sum 2>/dev/null)" ]] || rev+="+dirty"
	printf '%s\n' "$rev"
}

BASE_REV=""
build_base() {
	BASE_REV="$(git -C "$REPO" rev-parse --short "$1")"
	log "building base $1 ($BASE_REV)"
	rm -rf "$WORK/src" && mkdir -p "$WORK/src"
	git -C "$REPO" archive "$1" | tar -x -C "$WORK/src"
	(cd "$WORK/src" && go build -o "$WORK/lightcone-base" ./cmd/lightcone)
}

WORK="$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")"
SERVER_PID=""  # the server started last
SERVER_PIDS=() # every server running

# stop_server stops every server started (TERM, then KILL after 10 s).
stop_server() {
	local pid i
	((${#SERVER_PIDS[@]})) || return 0
	kill -TERM "${SERVER_PIDS[@]}" 2>/dev/null || true
	for pid in "${SERVER_PIDS[@]}"; do
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	SERVER_PIDS=()
	SERVER_PID=""
}

# server_cpu: the server's (SERVER_PID's) user+system CPU time so far, in
# clock ticks.
server_cpu() { sed 's/.*) //' "/proc/$SERVER_PID/stat" | awk '{ print $12 + $13 }'; }

# cpu_per TICKS0 N: a tab and the server's CPU µs per request since TICKS0.
# Unlike requests/s it hardly moves with other work on the machine.
cpu_per() { awk -v a="$1" -v b="$(server_cpu)" -v n="$2" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "\t%.2f\n", (b - a) * 1e6 / hz / n }'; }

# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
	local rc=$?
	stop_server
	if [[ "$KEEP" == 1 ]]; then log "kept $WORK"; else rm -rf "$WORK"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# spawned PID: record a server just started in the background.
spawned() {
	SERVER_PID="$1"
	SERVER_PIDS+=("$1")
}

# Listen ports below the kernel's ephemeral range: the benchmark clients'
# many connections take ephemeral ports, and a listener put on one of them
# can fail to bind.
read -r EPH_LO EPH_HI </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || { EPH_LO=32768 EPH_HI=60999; }
if ((EPH_LO > 12000)); then
	PORT_LO=10000 PORT_HI=$((EPH_LO - 1))
else
	PORT_LO=$((EPH_HI + 1)) PORT_HI=65535
fi
USED_PORTS=" "
PORT=""

# port_in_use PORT: true if any TCP socket here uses local PORT (ss), or,
# without ss, if something accepts connections on 127.0.0.1:PORT.
port_in_use() {
	if command -v ss >/dev/null 2>&1; then
		[[ -n "$(ss -Htan "( sport = :$1 )" 2>/dev/null)" ]]
	else
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
	fi
}

# free_port sets PORT to a port nothing uses and this run has not used (not
# called in $(...), so that USED_PORTS keeps its update).
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
	die "no free port"
}

# ready CHECK...: wait up to 15 s until CHECK succeeds while every server runs.
ready() {
	local i pid
	for ((i = 0; i < 150; i++)); do
		for pid in "${SERVER_PIDS[@]}"; do
			kill -0 "$pid" 2>/dev/null || return 1
		done
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
pong() { [[ "$(redis-cli -p "$1" PING 2>/dev/null)" == PONG ]]; }

# failed_start WHAT LOG...: after a failed start: stop the servers, show the logs.
failed_start() {
	local what="$1" f
	shift
	stop_server
	for f in "$@"; do tail -n 5 "$f" >&2 || true; done
	log "$what did not start; retrying on other ports"
}

# start_redis DIR FSYNC [ARGS...]: redis-server --appendonly yes
# --appendfsync FSYNC in a fresh DIR; sets PORT.
start_redis() {
	local dir="$1" fsync="$2" try
	shift 2
	for try in 1 2 3; do
		rm -rf "$dir" && mkdir -p "$dir"
		free_port
		redis-server --bind 127.0.0.1 --port "$PORT" --appendonly yes --appendfsync "$fsync" \
			--save '' --dir "$dir" --daemonize no --logfile "$dir/log" "$@" &
		spawned $!
		ready pong "$PORT" && return 0
		failed_start redis-server "$dir/log"
	done
	die "redis-server did not start"
}

# start_lightcone BIN DIR SYNC [ARGS...]: BIN server --sync SYNC with a
# fresh data dir; sets PORT (RESP) and GRPC.
GRPC=""
start_lightcone() {
	local bin="$1" dir="$2" sync="$3" try port http
	shift 3
	for try in 1 2 3; do
		rm -rf "$dir" && mkdir -p "$dir"
		free_port
		port="$PORT"
		free_port
		http="$PORT"
		free_port
		GRPC="$PORT"
		"$bin" server --data-dir "$dir/data" --resp-addr "127.0.0.1:$port" --http-addr "127.0.0.1:$http" \
			--grpc-addr "127.0.0.1:$GRPC" --sync "$sync" "$@" 2>"$dir/log" &
		spawned $!
		PORT="$port"
		ready pong "$port" && return 0
		failed_start lightcone "$dir/log"
	done
	die "lightcone did not start"
}

# cluster_ready PORT...: a write at ALL through each node succeeds, replying
# its version (every node is up and connected to the others).
cluster_ready() {
	local p
	for p in "$@"; do
		[[ "$(redis-cli -p "$p" LC.SET bench:ready 1 LEVEL ALL 2>/dev/null)" == *@* ]] || return 1
	done
}

# start_lightcone3 BIN DIR SYNC [YAML...]: three nodes a-0, b-0, c-0 of the
# local3 world on loopback (no WAN emulation), the default keyspace quorum
# with one replica per region at QUORUM/QUORUM and write_order auto (query
# order on local3: no 2δ commit wait), each YAML line appended to the
# cluster file (e.g. a keyspaces list); sets PORTS (RESP, space-separated)
# and GRPCS (comma-separated). LC3_KEYSPACE replaces the default keyspace;
# QUORUM/QUORUM are set only for a quorum one.
PORTS=""
GRPCS=""
LC3_DEFAULT_KEYSPACE='{protocol: quorum, replicas_per_region: 1, write_order: auto}'
LC3_KEYSPACE="${LC3_KEYSPACE:-$LC3_DEFAULT_KEYSPACE}"
start_lightcone3() {
	local bin="$1" dir="$2" sync="$3" try n line
	shift 3
	for try in 1 2 3; do
		rm -rf "$dir" && mkdir -p "$dir"
		PORTS="" GRPCS=""
		{
			printf 'cluster:\n  name: bench\n  world: local3\n  wan_emulation: false\n  nodes:\n'
			for n in a-0 b-0 c-0; do
				printf '    %s: {' "$n"
				for line in peer resp grpc http; do
					free_port
					printf '%s: "127.0.0.1:%s"%s' "$line" "$PORT" "$([[ "$line" == http ]] || echo ', ')"
					[[ "$line" == resp ]] && PORTS+="${PORTS:+ }$PORT"
					[[ "$line" == grpc ]] && GRPCS+="${GRPCS:+,}127.0.0.1:$PORT"
				done
				printf '}\n'
			done
			printf 'keyspace: %s\nsync: %s\n' "$LC3_KEYSPACE" "$sync"
			[[ "$LC3_KEYSPACE" == *"protocol: quorum"* ]] && printf 'read: QUORUM\nwrite: QUORUM\n'
			for line in "$@"; do printf '%s\n' "$line"; done
		} >"$dir/cluster.yaml"
		for n in a-0 b-0 c-0; do
			"$bin" server --config "$dir/cluster.yaml" --node "$n" --data-dir "$dir/$n" 2>"$dir/$n.log" &
			spawned $!
		done
		# shellcheck disable=SC2086 # PORTS is a list
		ready cluster_ready $PORTS && return 0
		failed_start "lightcone 3 nodes" "$dir"/*.log
	done
	die "lightcone 3 nodes did not start"
}

# etcd_healthy PORT...: every member answers /health.
etcd_healthy() {
	local p
	for p in "$@"; do curl -sf "http://127.0.0.1:$p/health" || return 1; done
}

# start_etcd_members DIR N: N etcd members (default settings: each fsyncs
# its WAL before a commit) in a fresh DIR; sets GRPCS.
start_etcd_members() {
	local dir="$1" count="$2" try i cluster clients=() peers=()
	for try in 1 2 3; do
		rm -rf "$dir" && mkdir -p "$dir"
		clients=() peers=() cluster="" GRPCS=""
		for ((i = 0; i < count; i++)); do
			free_port
			clients+=("$PORT")
			free_port
			peers+=("$PORT")
			cluster+="${cluster:+,}e$i=http://127.0.0.1:$PORT"
			GRPCS+="${GRPCS:+,}127.0.0.1:${clients[i]}"
		done
		for ((i = 0; i < count; i++)); do
			etcd --name "e$i" --data-dir "$dir/e$i" \
				--listen-client-urls "http://127.0.0.1:${clients[i]}" --advertise-client-urls "http://127.0.0.1:${clients[i]}" \
				--listen-peer-urls "http://127.0.0.1:${peers[i]}" --initial-advertise-peer-urls "http://127.0.0.1:${peers[i]}" \
				--initial-cluster "$cluster" --initial-cluster-state new --initial-cluster-token "bench-$try" 2>"$dir/e$i.log" &
			spawned $!
		done
		ready etcd_healthy "${clients[@]}" && return 0
		failed_start etcd "$dir"/*.log
	done
	die "etcd did not start"
}

# start_etcd DIR: one member; sets GRPC. start_etcd3 DIR: three; sets GRPCS.
start_etcd() {
	start_etcd_members "$1" 1
	GRPC="${GRPCS#127.0.0.1:}"
}
start_etcd3() { start_etcd_members "$1" 3; }

# apt_install PACKAGE...: apt-get install, as root or with sudo.
apt_install() {
	local sudo=()
	if [[ "$(id -u)" != 0 ]]; then
		command -v sudo >/dev/null 2>&1 || die "$* missing and not root (no sudo)"
		sudo=(sudo)
	fi
	log "installing $* (apt-get)"
	"${sudo[@]}" apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "$@" >&2
}

# need_redis: redis-server, redis-benchmark and redis-cli, installed if
# missing (a system instance the package may start is not ours and does not
# matter: every instance here has its own port).
need_redis() {
	local tool
	for tool in redis-server redis-benchmark redis-cli; do
		command -v "$tool" >/dev/null 2>&1 && continue
		apt_install redis-server redis-tools
		break
	done
	for tool in redis-server redis-benchmark redis-cli; do
		command -v "$tool" >/dev/null 2>&1 || die "$tool missing"
	done
}

# need_etcd: etcd, installed if missing.
need_etcd() {
	command -v etcd >/dev/null 2>&1 || apt_install etcd-server
	command -v etcd >/dev/null 2>&1 || die "etcd missing"
}

# redis_csv_rows: redis-benchmark --csv (columns by the header's names) on
# stdin to "OP\trps\tp50\tp99" lines.
redis_csv_rows() {
	awk -F, '
		NR == 1 {
			for (i = 1; i <= NF; i++) { h = $i; gsub(/"/, "", h); col[h] = i }
			if (!("rps" in col) || !("p50_latency_ms" in col) || !("p99_latency_ms" in col)) {
				print "unexpected redis-benchmark CSV header: " $0 > "/dev/stderr"; exit 1
			}
			next
		}
		{ gsub(/"/, ""); print $1 "\t" $col["rps"] "\t" $col["p50_latency_ms"] "\t" $col["p99_latency_ms"] }'
}

# shellcheck disable=SC2016 # awk code
MEDIAN_AWK='
function med(s,   a, n, i, j, t) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
	lo = a[1]; hi = a[n]
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}'
