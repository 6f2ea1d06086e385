# bench-lib.sh: what the benchmark scripts share. Source it after defining
# log() and KEEP; it makes WORK (a temp dir named after $1), SERVER_PID
# and stop_server, and traps EXIT, INT and TERM to stop the server and
# remove WORK (kept with KEEP=1).
# shellcheck shell=bash

WORK="$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")"
SERVER_PID=""

# stop_server stops the server SERVER_PID names (TERM, then KILL after 10 s).
stop_server() {
	local pid="$SERVER_PID" i
	[[ -n "$pid" ]] || return 0
	SERVER_PID=""
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

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
