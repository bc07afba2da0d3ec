#!/usr/bin/env bash
# Run each benchmark binary (or bench/*.sh script) under the heavy-test lock,
# so benchmarks are not disturbed by timing-sensitive tests running alongside.
set -u
build=$1; shift
export RXB_BUILD=$(cd "$build" && pwd)
export RXB_SRC=$(pwd)
fail=0
for b in "$@" bench/*.sh; do
	[ -e "$b" ] || continue
	[ "$b" = bench/run.sh ] && continue
	echo "=== bench: $(basename "$b")"
	case $b in
	*.sh) flock /tmp/rxbneck-heavy.lock bash "$b" || fail=1;;
	*)    flock /tmp/rxbneck-heavy.lock "$b" || fail=1;;
	esac
done
exit $fail
