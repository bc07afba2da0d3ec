#!/usr/bin/env bash
# rxbneckctl model's wall time for the largest workload it accepts, against
# its time for the default workload in the same run (the floor: process
# start, the 1000-point sweep). The largest is #C = #I = 4095 (4 096 + 4 097
# states; 4096 is refused, which is checked). Budget: 50 ms.
set -u
: "${RXB_BUILD:?run from bench/run.sh (make bench)}"
ctl=$RXB_BUILD/rxbneckctl
RUNS=11
BUDGET_MS=50

# Median wall time of RUNS runs of rxbneckctl model "$@", in ms.
median_ms() {
	local times=() t0 t1
	for _ in $(seq "$RUNS"); do
		t0=$(date +%s%N)
		"$ctl" model "$@" >/dev/null || return 1
		t1=$(date +%s%N)
		times+=($(( (t1 - t0) / 1000 )))
	done
	printf '%s\n' "${times[@]}" | sort -n |
		awk -v n="$RUNS" 'NR == int(n / 2) + 1 { printf "%.1f", $1 / 1000 }'
}

echo "rxbneckctl model, wall time (median of $RUNS runs)"
"$ctl" model --cpu-bound 4096 --io-bound 4095 >/dev/null 2>&1
if [ $? -ne 2 ]; then
	echo "   --cpu-bound 4096 was not refused: the largest workload is not 4095"
	exit 1
fi
base=$(median_ms) || { echo "   default workload: FAILED"; exit 1; }
big=$(median_ms --cpu-bound 4095 --io-bound 4095) ||
	{ echo "   --cpu-bound 4095 --io-bound 4095: FAILED"; exit 1; }
verdict=$(awk -v b="$big" -v m="$BUDGET_MS" 'BEGIN { print (b < m) ? "ok" : "OVER BUDGET" }')
printf '   default workload (#C 1, #I 0):              %6s ms\n' "$base"
printf '   largest accepted (#C 4095, #I 4095):        %6s ms (%.1fx the default; budget %d ms: %s)\n' \
	"$big" "$(awk -v a="$big" -v b="$base" 'BEGIN { print a / b }')" "$BUDGET_MS" "$verdict"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
t0=$(date +%s%N)
if "$ctl" model --cpus 4 --cpu-bound 7 --io-bound 10 \
	--export-prism "$tmp/smp" >/dev/null; then
	t1=$(date +%s%N)
	printf '   --cpus 4 #C 7 #I 10 with --export-prism (120 122 states), one run: %d ms\n' \
		$(( (t1 - t0) / 1000000 ))
fi
[ "$verdict" = ok ]
