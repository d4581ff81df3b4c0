#!/usr/bin/env bash
# Installs what is missing (Debian packages, as root), builds trainio and its tests, and runs
# every test: unit, MPI (2-4 ranks) and end-to-end. Usage: scripts/test.sh [ctest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh

install_missing "${TRAINIO_BUILD_PACKAGES[@]}" "${TRAINIO_TEST_PACKAGES[@]}"
command -v npm >/dev/null || install_missing "${TRAINIO_NODE_PACKAGES[@]}"
mpi_env_for_root
build_trainio -DTRAINIO_BUILD_TESTS=ON
cd build
ctest --output-on-failure -j "$(nproc)" "$@"
