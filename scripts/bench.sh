#!/usr/bin/env bash
# Benchmarks trainio against fio on this machine (not part of the tests): builds trainio, then
# prints figures and ratios per case, and the per-step barrier against MPI_Barrier.
# Usage: scripts/bench.sh [--quick] [--repeat N] [--dir DIR] [--only GROUP] [--barrier-only]   (--help lists the groups)
#        scripts/bench.sh --checkpoint-matrix [--quick]   the checkpoint write-strategy matrix against fio
#        scripts/bench.sh --fuzz SECONDS   every fuzz target (tests/fuzz) for SECONDS, random seeds
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
if [ "${1:-}" = "--fuzz" ]; then
  install_missing "${TRAINIO_BUILD_PACKAGES[@]}" "${TRAINIO_SANITIZER_PACKAGES[@]}"
  mkdir -p build  # the instrumented build goes to build/asan
  exec tests/sanitize/run.sh fuzz . build "${2:-300}"
fi
install_missing "${TRAINIO_BUILD_PACKAGES[@]}" fio python3 strace
build_trainio -DTRAINIO_BUILD_TESTS=OFF >/dev/null
exec python3 tests/bench/bench.py "$@"
