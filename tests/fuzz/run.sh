#!/usr/bin/env bash
# Run each libFuzzer binary for a bounded time, starting from its seed corpus
# tests/fuzz/corpus/<name>/ (copied, so runs never write into the source tree).
set -u
secs=$1; shift
fail=0
for f in "$@"; do
	name=$(basename "$f")
	work=$(mktemp -d /tmp/rxbneck-fuzz-$name.XXXXXX)
	[ -d "tests/fuzz/corpus/$name" ] && cp -r "tests/fuzz/corpus/$name/." "$work/"
	echo "=== fuzz: $name for ${secs}s"
	if ! "$f" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$work/" "$work" \
		> "$work.log" 2>&1; then
		echo "=== FAIL $name: crash artefacts and log in $work $work.log"
		tail -40 "$work.log"
		fail=1
		continue
	fi
	grep -E 'stat::number_of_executed_units|cov:' "$work.log" | tail -2
	rm -rf "$work" "$work.log"
done
[ $fail -eq 0 ] && echo "fuzz: all targets ran clean"
exit $fail
