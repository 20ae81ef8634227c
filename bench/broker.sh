#!/bin/sh
# Broker round trips against their baselines, in one run:
#   kvGet through WebSocket + relay + broker + SQLite vs a direct store.KVGet
#   (goal: ≤ 2x the direct call's time per op at 1 client; ≥ 20,000 kvGet/s
#   at 16 clients), and app-message with the offline mock agent at 100
#   concurrent instances (goal: p99 < 5 ms).
# Usage: bench/broker.sh [benchtime]   (default 2s)
set -eu
cd "$(dirname "$0")/.."
bt="${1:-2s}"
out=$(go test -run '^$' -bench 'BenchmarkKVGet|BenchmarkAppMessage' -benchtime "$bt" ./hostkit/broker/)
echo "$out"
echo "$out" | awk '
/^BenchmarkKVGet\/direct/       { direct = $3 }
/^BenchmarkKVGet\/broker-only/  { bonly = $3 }
/^BenchmarkKVGet\/relay-1(-[0-9]+)?[ \t]/     { r1 = $3 }
/^BenchmarkKVGet\/relay-1-noinspect/ { r1n = $3 }
/^BenchmarkKVGet\/relay-16(-[0-9]+)?[ \t]/    { for (i = 1; i < NF; i++) if ($(i+1) == "kvGet/s") r16 = $i }
/^BenchmarkKVGet\/relay-16-noinspect/ { for (i = 1; i < NF; i++) if ($(i+1) == "kvGet/s") r16n = $i }
/^BenchmarkAppMessage\/mock-100-saturated(-[0-9]+)?[ \t]/ { for (i = 1; i < NF; i++) if ($(i+1) == "p99-ms") sat = $i }
/^BenchmarkAppMessage\/mock-100-saturated-noinspect/ { for (i = 1; i < NF; i++) if ($(i+1) == "p99-ms") satn = $i }
/^BenchmarkAppMessage\/mock-100-paced(-[0-9]+)?[ \t]/ { for (i = 1; i < NF; i++) if ($(i+1) == "p99-ms") pac = $i }
/^BenchmarkAppMessage\/mock-100-paced-noinspect/ { for (i = 1; i < NF; i++) if ($(i+1) == "p99-ms") pacn = $i }
END {
	printf "\nkvGet, 1 client:   relay %s ns/op vs direct %s ns/op = %.2fx (inspector off: %.2fx; goal <= 2x)\n", r1, direct, r1 / direct, r1n / direct
	printf "kvGet, broker alone (no WebSocket): %s ns/op = %.2fx direct\n", bonly, bonly / direct
	printf "kvGet, 16 clients: %s kvGet/s (inspector off: %s; goal >= 20000)\n", r16, r16n
	printf "app-message, 100 instances, mock agent, paced 1000 asks/s: p99 %s ms (inspector off: %s ms; goal < 5)\n", pac, pacn
	printf "app-message, 100 instances, mock agent, saturated (100 in flight): p99 %s ms (inspector off: %s ms)\n", sat, satn
}'
