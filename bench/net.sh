#!/bin/sh
# bench/net.sh — the governed network against a direct http.Client, in one run.
#
# Runs BenchmarkNet (hostkit/netgate/bench_test.go): the same GET to the same
# loopback server, once through netgate.Gate.Fetch and once through a plain
# http.Client, serial (latency) and parallel (throughput). Prints the median
# of the per-run medians and the ratio. Goal: gate ≤ 1.3× direct, ≥ 2,000 req/s.
#
#   bench/net.sh            # 5 runs
#   COUNT=10 bench/net.sh
set -eu
cd "$(dirname "$0")/.."
COUNT=${COUNT:-5}
out=$(go test -run '^$' -bench '^BenchmarkNet$' -count "$COUNT" ./hostkit/netgate/)
printf '%s\n' "$out" | grep '^BenchmarkNet'
printf '%s\n' "$out" | awk '
function median(arr, n,   i, j, t) {
	for (i = 2; i <= n; i++) { t = arr[i]; for (j = i - 1; j >= 1 && arr[j] > t; j--) arr[j+1] = arr[j]; arr[j+1] = t }
	return (n % 2) ? arr[(n+1)/2] : (arr[n/2] + arr[n/2+1]) / 2
}
/^BenchmarkNet\// {
	split($1, p, "/"); name = p[2]; sub(/-[0-9]+$/, "", name)
	for (i = 3; i < NF; i++) {
		if ($(i+1) == "p50-ns") { lat[name, ++nl[name]] = $i }
		if ($(i+1) == "req/s") { rps[name, ++nr[name]] = $i }
	}
}
END {
	for (k = 1; k <= nl["direct"]; k++) d[k] = lat["direct", k]
	for (k = 1; k <= nl["gate"]; k++) g[k] = lat["gate", k]
	for (k = 1; k <= nr["gate-parallel"]; k++) gp[k] = rps["gate-parallel", k]
	for (k = 1; k <= nr["direct-parallel"]; k++) dp[k] = rps["direct-parallel", k]
	md = median(d, nl["direct"]); mg = median(g, nl["gate"])
	printf "\nmedian latency: direct %.1f µs, gate %.1f µs, ratio %.2fx (goal <= 1.30x)\n", md/1000, mg/1000, mg/md
	printf "throughput:     direct %.0f req/s, gate %.0f req/s (goal >= 2000)\n", median(dp, nr["direct-parallel"]), median(gp, nr["gate-parallel"])
}'
