#!/usr/bin/env bash
# Builds trainio with clang's sanitizers in a folder of its own and runs tests under them.
#   tests/sanitize/run.sh asan SOURCE BUILD   ASan+UBSan: unit and MPI tests, an end-to-end subset
#   tests/sanitize/run.sh tsan SOURCE BUILD   TSan: the batch pipeline's unit tests, the loaders end to end
#   tests/sanitize/run.sh fuzz SOURCE BUILD [SECONDS [libFuzzer flags...]]
#                                             each libFuzzer target (tests/fuzz/run.sh) for SECONDS
# BUILD is the main build folder; the instrumented builds go to BUILD/asan and BUILD/tsan (fuzz
# shares the ASan build, whose library also carries the fuzzer's coverage instrumentation).
# Builds are incremental: a second run rebuilds only what changed. Exits 77 (skipped) without
# clang's sanitizer runtimes (Debian: clang libclang-rt-dev).
set -euo pipefail
mode=$1 source=$(cd "$2" && pwd) build=$(cd "$3" && pwd)

# The end-to-end tests each mode runs: the ones that exercise threads, failures and unwinding
# (a full disk during a checkpoint, a failing rank, a stalled read). Damaged files are the
# fuzzers' part (label fuzz), which reach far more of them.
asan_e2e='test_run|test_formats|test_loaders|test_checkpoint|test_async_checkpoint|test_bad_inputs|test_safety|test_validate|test_mpi|test_stall|test_hdf5_concurrency'
tsan_e2e='test_loaders|test_hdf5_concurrency|test_run'

links() {  # flags: whether clang links a fuzz target with them
  echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, long) { return 0; }' | clang++ -x c++ "$@" - -o /dev/null 2>/dev/null
}
if ! command -v clang++ >/dev/null || ! links -fsanitize=address,undefined,fuzzer || ! links -fsanitize=thread,fuzzer; then
  echo "sanitize: clang with its sanitizer and libFuzzer runtimes is missing (Debian: clang libclang-rt-dev)" >&2
  exit 77
fi

configure_and_build() {  # folder flags targets...
  local dir=$1 flags=$2; shift 2
  # The link needs the sanitizers' runtimes; the fuzzer's own main is linked by its targets only.
  local link
  link=$(echo "$flags" | grep -o -- '-fsanitize=[a-z,]*' | grep -v fuzzer | tr '\n' ' ')
  if [ ! -f "$dir/build.ninja" ]; then
    echo "sanitize: configuring $dir" >&2
    # A unity build: trainio's files compiled a few to a unit share their headers' parsing
    # (nlohmann::json, CLI11, fmt), which dominates these -O1 builds; the main build still
    # compiles every file alone, so a missing include is caught there.
    cmake -S "$source" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_UNITY_BUILD=ON \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
      -DCMAKE_EXE_LINKER_FLAGS="$link" -DCMAKE_SHARED_LINKER_FLAGS="$link" "${cmake_extra[@]}" >/dev/null
  fi
  echo "sanitize: building $* in $dir" >&2
  cmake --build "$dir" -j "$(nproc)" --target "$@"
}

# Stacks with file and line; a finding ends the test with a non-zero exit. Leak checking is off:
# OpenMPI and HDF5 keep allocations to process exit by design.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:verify_asan_link_order=0:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$source/tests/sanitize/tsan.supp"
export TRAINIO_SANITIZER=$mode
common='-O1 -gline-tables-only -fno-omit-frame-pointer'

case $mode in
  asan|fuzz)
    dir=$build/asan
    cmake_extra=(-DTRAINIO_BUILD_TESTS=ON -DTRAINIO_FUZZ=ON)
    configure_and_build "$dir" "$common -fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link" \
      trainio trainio_unit_tests trainio_mpi_tests trainio_slow_io trainio_fuzz_targets
    ;;
  tsan)
    dir=$build/tsan
    cmake_extra=(-DTRAINIO_BUILD_TESTS=ON)
    configure_and_build "$dir" "$common -fsanitize=thread" trainio trainio_slow_io trainio_thread_tests
    ;;
  *) echo "usage: $0 asan|tsan|fuzz SOURCE BUILD [SECONDS]" >&2; exit 2 ;;
esac

cd "$dir"
case $mode in
  asan)
    ctest --output-on-failure -j "$(nproc)" -L 'unit|mpi' -E 'glusterfs' --timeout 600
    ctest --output-on-failure -j "$(nproc)" -L e2e -R "e2e: ($asan_e2e)\$" --timeout 900
    ;;
  tsan)
    ./tests/trainio_thread_tests
    ctest --output-on-failure -j "$(nproc)" -L e2e -R "e2e: ($tsan_e2e)\$" --timeout 900
    ;;
  fuzz)
    exec "$source/tests/fuzz/run.sh" "$dir/tests/fuzz" "${@:4}"
    ;;
esac
