#!/usr/bin/env bash
# Deep soak: every protocol's swarm tests (every level combination and
# mode), SEEDS seeds each, with faulty stores in a third of them; prints
# seeds/s and failures per protocol, and every failing seed with the command
# that replays it. docs/testing.md describes the harness.
#
#   scripts/soak.sh                 # 5000 seeds per swarm, from seed 1
#   SEEDS=300 scripts/soak.sh       # a short soak
#   FIRST=5001 scripts/soak.sh      # new seeds: 5001..10000
#   scripts/soak.sh ./internal/protocol/lease   # one protocol
#   RUN=. scripts/soak.sh           # every test, not only the swarms
#
# By default it soaks every package under internal/protocol whose tests use
# internal/simtest (the flags below are simtest's). Exits non-zero if any
# run failed.
set -uo pipefail
cd "$(dirname "$0")/.."
seeds=${SEEDS:-5000}
first=${FIRST:-1}
run=${RUN:-Swarm}
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
  for d in $(grep -l '"github.com/lightcone/lightcone/internal/simtest"' internal/protocol/*/*_test.go | xargs -n1 dirname | sort -u); do
    pkgs+=("./$d")
  done
fi
log=$(mktemp -t soak.XXXXXX)
echo "soak: ${pkgs[*]}, tests matching $run, seeds $first..$((first + seeds - 1)) per swarm; log $log"
start=$(date +%s)
# One package at a time: each swarm already runs its seeds on every core,
# and per-protocol throughput stays readable.
go test "${pkgs[@]}" -run "$run" -soak -seeds "$seeds" -first "$first" -count=1 -timeout 0 -p 1 -v >"$log" 2>&1
status=$?
# Swarm lines: "    sim_test.go:91: TestSwarm/ONE-ALL swarm: 30 seeds in 1.3s (23.6 seeds/s): 0 failed, ..."
# Package lines: "ok  	github.com/lightcone/lightcone/internal/protocol/quorum	51.673s"
awk '
  / swarm: [0-9]+ seeds in / {
    for (i = 1; i <= NF; i++) {
      if ($i == "swarm:") { seeds += $(i+1); secs += $(i+4) + 0 }
      if ($i == "failed,") { failed += $(i-1) }
    }
  }
  /replay: go test / { line = $0; sub(/^[ \t]*/, "", line); replays = replays "  " line "\n" }
  /^(ok|FAIL|---)[ \t]/ && $2 ~ /\// {
    name = $2; sub(/.*\//, "", name)
    rate = secs > 0 ? seeds / secs : 0
    printf "%-8s %8d seeds in %7.1fs  %7.1f seeds/s  %d failed  (%s)\n", name, seeds, secs, rate, failed, $1
    tseeds += seeds; tsecs += secs; tfailed += failed
    seeds = 0; secs = 0; failed = 0
  }
  END {
    rate = tsecs > 0 ? tseeds / tsecs : 0
    printf "%-8s %8d seeds in %7.1fs  %7.1f seeds/s  %d failed\n", "total", tseeds, tsecs, rate, tfailed
    if (replays != "") printf "failing seeds:\n%s", replays
  }
' "$log"
grep -E '^(panic|FAIL|--- FAIL)' "$log" | head -20
echo "soak: $(( $(date +%s) - start ))s wall; exit status $status"
exit $status
