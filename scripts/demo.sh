#!/usr/bin/env bash
# From a fresh machine to a real result: installs what is missing (Debian packages, as root),
# builds trainio, then runs the default workload on 2 MPI ranks against local disk in a scratch
# folder and prints the results.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh

install_missing "${TRAINIO_BUILD_PACKAGES[@]}"
echo "== building trainio"
build_trainio -DTRAINIO_BUILD_TESTS=OFF

scratch="$(mktemp -d "${TMPDIR:-/tmp}/trainio-demo.XXXXXX")"
mpi_env_for_root
echo "== running the default workload on 2 ranks (data and results in $scratch)"
# --bind-to none: OpenMPI would bind each of 2 ranks to one core, and its reader threads with it.
mpirun -np 2 --oversubscribe --bind-to none build/trainio run default \
  "dataset.data_folder=$scratch/data" --output "$scratch/results"

echo
echo "== where the results are (the table above has the headline figures)"
echo "summary (DLIO keys + trainio block): $scratch/results/summary.json"
echo "per epoch and per rank (CSV):        $scratch/results/per_epoch.csv, per_rank.csv"
echo "DLIO's per-rank files:               $scratch/results/<rank>_output.json, <rank>_per_epoch_stats.json"
echo "resolved config:                     $scratch/results/config.yaml"
echo "dataset:                             $scratch/data"
