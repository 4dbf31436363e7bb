#!/usr/bin/env bash
# Heartbeat scale benchmark (docs/BENCHMARKS.md, lab 07): for each N, start
# a fresh minicp (fsync on, no in-process nodes), run kubelet-sim with N
# nodes through the apiserver, then the same renewal load straight to etcd
# (kubelet-sim --etcd-direct) against a second fresh minicp, and print both
# summaries with minicp's CPU over each run.
#
#   cmd/kubelet-sim/bench.sh [DURATION] N...      e.g. bench.sh 120s 2000 5000
#
# Each N is measured REPEAT times (default 3), the apiserver run and its
# etcd baseline back to back, so both see the same machine. Extra minicp
# flags go in MINICP_FLAGS, e.g. MINICP_FLAGS=--node-lease-etcd-binding=false.
# MODES picks the runs of each round (default "apiserver direct"): apiserver
# is kubelet-sim through the kubeconfig (TLS), plain the same over plain
# HTTP on loopback, direct the baseline straight to etcd.
set -euo pipefail
cd "$(dirname "$0")/../.."

duration=${1:-120s}
shift || true
[ $# -gt 0 ] || set -- 1000 2000 5000

work=$(mktemp -d)
trap 'kill -INT $(jobs -p) 2>/dev/null || true; wait; rm -rf "$work"' EXIT
go build -o "$work/minicp" ./cmd/minicp
go build -o "$work/kubelet-sim" ./cmd/kubelet-sim

# cpu_ticks PID: user+system clock ticks the process has used so far.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run_one MODE N: a fresh minicp, one kubelet-sim run, minicp's CPU.
run_one() {
  local mode=$1 n=$2 dir="$work/$1-$2"
  mkdir -p "$dir"
  # shellcheck disable=SC2086
  "$work/minicp" --data-dir "$dir" --port 0 --etcd-client-port 0 --etcd-peer-port 0 \
    --simulated-nodes 0 ${MINICP_FLAGS:-} >"$dir/minicp.log" 2>&1 &
  local pid=$!
  until [ -f "$dir/kubeconfig" ]; do sleep 0.1; done
  local extra=()
  [ "$mode" = direct ] && extra=(--etcd-direct)
  [ "$mode" = plain ] && extra=(--plain-http)
  local t0 c0
  t0=$(date +%s.%N) c0=$(cpu_ticks "$pid")
  "$work/kubelet-sim" --data-dir "$dir" --nodes "$n" --duration "$duration" --report-interval 5s "${extra[@]}" >"$dir/sim.out"
  local t1 c1
  t1=$(date +%s.%N) c1=$(cpu_ticks "$pid")
  kill -INT "$pid"
  wait "$pid" || true
  echo "== $mode N=$n (load average $(cut -d" " -f1 /proc/loadavg))"
  tail -3 "$dir/sim.out"
  awk -v c="$((c1 - c0))" -v t0="$t0" -v t1="$t1" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "minicp CPU over the run: %.0f%% of one core\n", 100 * c / hz / (t1 - t0) }'
}

echo "# $(nproc) cores, $(go version | cut -d" " -f3), duration $duration, minicp flags: ${MINICP_FLAGS:-none}"
for n in "$@"; do
  for r in $(seq "${REPEAT:-3}"); do
    for mode in ${MODES:-apiserver direct}; do
      run_one "$mode" "$n" && mv "$work/$mode-$n" "$work/$mode-$n-$r"
    done
  done
done
