#!/usr/bin/env bash
# Runs the Go fuzz targets (func FuzzXxx(f *testing.F)) of the module, one
# after the other: Go fuzzes one target of one package at a time. Each
# target first replays its seed corpus (testdata/fuzz/<Name>/ and its
# f.Add seeds) and the inputs earlier runs found, then fuzzes for
# FUZZTIME.
#
#   tools/fuzz-all.sh [-t FUZZTIME] [TARGET]
#
# FUZZTIME is a duration (30s, 10m) or a count of inputs (1000x); the
# default is 1m. TARGET runs only the targets of that name.
#
# A failing input is written to the package's testdata/fuzz/<Name>/, as
# `go test -fuzz` does; commit it with the fix, as a regression seed.
#
# FUZZMINIMIZE (default 200x) bounds how long each newly interesting or
# failing input is minimized. Go's default of 60s per input would spend
# a short run minimizing instead of fuzzing.
set -euo pipefail

fuzztime=1m
while getopts t: opt; do
	case $opt in
	t) fuzztime=$OPTARG ;;
	*)
		echo "usage: $0 [-t FUZZTIME] [TARGET]" >&2
		exit 2
		;;
	esac
done
shift $((OPTIND - 1))
only=${1:-}
minimize=${FUZZMINIMIZE:-200x}
go=${GO:-go}

cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cache=$($go env GOCACHE)/fuzz

# Packages with fuzz targets, found cheaply by their source.
mapfile -t dirs < <(grep -rl --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . |
	xargs -r -n1 dirname | sort -u)

ran=0
failed=()
for dir in "${dirs[@]}"; do
	if [ -n "$only" ] && ! grep -qE "^func ${only}\(f \*testing\.F\)" "$dir"/*_test.go; then
		continue
	fi
	# One instrumented test binary per package (what go test -fuzz
	# builds), run once per target: linking is the slow part.
	pkg=$($go list "$dir")
	bin="$work/$(basename "$dir").test"
	$go test -c -fuzz '^Fuzz' -o "$bin" "$dir"
	mapfile -t targets < <(cd "$dir" && "$bin" -test.list '^Fuzz' | grep '^Fuzz' || true)
	for name in "${targets[@]}"; do
		if [ -n "$only" ] && [ "$name" != "$only" ]; then
			continue
		fi
		ran=$((ran + 1))
		echo "== $pkg $name ($fuzztime)"
		# The binary runs in the package directory, as go test runs it,
		# so that it reads and writes testdata/fuzz there; the cache of
		# interesting inputs is the one go test -fuzz keeps.
		fuzz() {
			(cd "$dir" && "$bin" -test.run '^$' -test.fuzz "^${name}\$" -test.fuzztime "$fuzztime" \
				-test.fuzzminimizetime "$minimize" -test.fuzzcachedir "$cache/$pkg" >"$work/log" 2>&1)
		}
		ok=true
		if ! fuzz; then
			ok=false
			# Go's fuzzer sometimes ends a run that found nothing with
			# "context deadline exceeded" when the time is up while a
			# worker is busy: no failing input was written. Such a run is
			# repeated once; a real crash always writes its input.
			if ! grep -q 'Failing input written to' "$work/log" && grep -q 'context deadline exceeded' "$work/log"; then
				echo "   (the fuzzer stopped on its deadline without a failing input; running it again)"
				fuzz && ok=true
			fi
		fi
		if $ok; then
			grep -E '^fuzz: elapsed' "$work/log" | tail -n 1 || true
		else
			cat "$work/log"
			failed+=("$pkg $name")
		fi
	done
done

if [ "$ran" -eq 0 ]; then
	echo "no fuzz target${only:+ named $only}" >&2
	exit 1
fi
if [ "${#failed[@]}" -gt 0 ]; then
	echo "fuzz targets that failed (the failing input is in the package's testdata/fuzz/):" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "$ran fuzz targets passed"
