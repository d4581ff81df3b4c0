# Sourced by the integration tests: `source common.sh TRAINIO [SCRATCH_PARENT]` sets `trainio`
# (the binary, absolute), `parent` (where the test's scratch folder goes, created) and `python`,
# and defines skip (exit 77: the machine cannot run the test) and fail.
trainio=$(realpath "$1")
mkdir -p "${2:-${TMPDIR:-/var/tmp}}"
parent=$(realpath "${2:-${TMPDIR:-/var/tmp}}")
python=/usr/bin/python3

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
