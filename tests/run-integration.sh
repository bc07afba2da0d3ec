#!/usr/bin/env bash
# Run every tests/integration/*.sh as root. Each script exits 0 (pass),
# 77 (skip, with a reason on stderr) or anything else (fail), and cleans up
# what it made (namespaces, workloads) itself, also when it fails.
#
# Timing-sensitive tests take /tmp/rxbneck-heavy.lock so that two of them
# (or a benchmark) never run at the same time on this 2-core machine.
set -u
build=${1:-build}
export RXB_BUILD=$(cd "$build" && pwd)
export RXB_SRC=$(pwd)

if [ "$(id -u)" -ne 0 ]; then
	echo "integration: SKIPPED, needs root (BPF, namespaces)"
	exit 0
fi

# Each test's output is also kept, so that the failures' own lines can be
# repeated at the end, where a CI log's tail shows them. (A process
# substitution, not a pipe: a test's stray child holding its output open
# must not hold the suite.)
logs=$(mktemp -d /tmp/rxbneck-integration.XXXXXX) || exit 1
trap 'rm -rf "$logs"' EXIT
pass=0; skip=0; failed=()
for t in tests/integration/*.sh; do
	[ -e "$t" ] || continue
	name=$(basename "$t" .sh)
	echo "=== integration: $name"
	start=$(date +%s)
	flock /tmp/rxbneck-heavy.lock timeout --kill-after=10 "${RXB_TEST_TIMEOUT:-900}" \
		bash "$t" > >(tee "$logs/$name.log") 2>&1
	rc=$?
	took=$(( $(date +%s) - start ))
	case $rc in
	0)  pass=$((pass + 1)); echo "=== PASS $name (${took}s)";;
	77) skip=$((skip + 1)); echo "=== SKIP $name";;
	*)  failed+=("$name"); echo "=== FAIL $name (exit $rc, ${took}s)";;
	esac
done
for name in "${failed[@]}"; do
	echo "=== last lines of the failed $name:"
	tail -n 25 "$logs/$name.log"
done
echo "integration: $pass passed, $skip skipped, ${#failed[@]} failed ${failed[*]:-}"
[ ${#failed[@]} -eq 0 ]
