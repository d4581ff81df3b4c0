#!/usr/bin/env bash
# Runs every libFuzzer target in FOLDER (fuzz_*) for SECONDS each, one after the other.
#   tests/fuzz/run.sh FOLDER [SECONDS [libFuzzer flags...]]
# Each target keeps its corpus in FOLDER/corpus/<target> (seeded, when empty, with a file that
# trainio generated) and writes what it finds to FOLDER/findings/. Exits 1 if a target found
# something: the input that broke it is named, and `FOLDER/fuzz_<target> <input>` replays it.
# The CI's runs (label fuzz) are short and start from seed 1; scripts/bench.sh --fuzz SECONDS runs
# longer, from random seeds.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: $0 FOLDER [SECONDS [libFuzzer flags...]]" >&2; exit 2; }
folder=$(cd "$1" && pwd) seconds=${2:-20}
shift $(( $# < 2 ? $# : 2 ))
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/trainio-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$folder/findings"
failed=()
for target in "$folder"/fuzz_*; do
  [ -x "$target" ] || continue
  name=$(basename "$target")
  corpus=$folder/corpus/$name
  mkdir -p "$corpus"
  # -rss_limit_mb also caps single allocations: a length field must not make trainio allocate
  # gigabytes. -timeout catches inputs that make a parser loop.
  log=$scratch/$name.log
  TMPDIR=$scratch "$target" "$corpus" -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=10 \
    -artifact_prefix="$folder/findings/$name-" -print_final_stats=1 "$@" >"$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  if [ $rc -eq 0 ]; then
    printf 'fuzz: %-26s %9s inputs in %ss, corpus %s files: nothing found\n' "$name" "${runs:-?}" "$seconds" "$(ls "$corpus" | wc -l)"
  else
    printf 'fuzz: %-26s FOUND a problem (exit %s):\n' "$name" "$rc"
    grep -E 'ERROR|fuzz:|runtime error|SUMMARY|Test unit written|#[0-9]+ 0x' "$log" | head -30 | sed 's/^/    /'
    failed+=("$name")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} target(s) found problems: ${failed[*]} (inputs in $folder/findings)"
  exit 1
fi
