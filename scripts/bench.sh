#!/usr/bin/env bash
# Benchmarks trainio against fio on this machine (not part of the tests): builds trainio, then
# prints figures and ratios per case, and the per-step barrier against MPI_Barrier.
# Usage: scripts/bench.sh [--quick] [--repeat N] [--dir DIR] [--barrier-only]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
install_missing "${TRAINIO_BUILD_PACKAGES[@]}" fio python3
build_trainio -DTRAINIO_BUILD_TESTS=OFF >/dev/null
exec python3 tests/bench/bench.py "$@"
