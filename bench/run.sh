#!/usr/bin/env bash
# Run each benchmark binary (or bench/*.sh script) under the heavy-test lock,
# so benchmarks are not disturbed by timing-sensitive tests running alongside.
# Each one's output is also kept in $build/bench-out/<name>.txt (what
# bench/solver_doc.py turns into docs/model.md §8).
set -u
build=$1; shift
export RXB_BUILD=$(cd "$build" && pwd)
export RXB_SRC=$(pwd)
out=$RXB_BUILD/bench-out
mkdir -p "$out"
fail=0
for b in "$@" bench/*.sh; do
	[ -e "$b" ] || continue
	[ "$b" = bench/run.sh ] && continue
	echo "=== bench: $(basename "$b")"
	case $b in
	*.sh) flock /tmp/rxbneck-heavy.lock bash "$b";;
	*)    flock /tmp/rxbneck-heavy.lock "$b";;
	esac 2>&1 | tee "$out/$(basename "$b" .sh).txt"
	[ "${PIPESTATUS[0]}" -eq 0 ] || fail=1
done
exit $fail
