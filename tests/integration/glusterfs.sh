#!/usr/bin/env bash
# trainio on a real network file system reached through FUSE: a two-brick GlusterFS volume on
# loopback (glusterd, bricks and client on this machine, traffic on 127.0.0.0/8 only):
#  - the page-cache verdict (FUSE reads never reach /proc/diskstats or /proc/self/io, which once
#    made every epoch look "served from the page cache"), after drop_caches, hot, and on a
#    direct_io mount;
#  - parallel HDF5: 3 ranks writing and reading 2 files together (collective MPI-IO), read back by h5py;
#  - checkpoints: 2 ranks saving with fsync and loading back;
#  - cache tiers in front of the volume (a local folder, node shared memory), 2 ranks: the
#    bricks' own reads (their /proc/<pid>/io) fall to one epoch's worth, as the runs report.
#
#   glusterfs.sh TRAINIO [SCRATCH_PARENT]
#
# Needs root and FUSE (skips with exit 77 otherwise); glusterfs-server and glusterfs-client
# (scripts/lib/deps.sh installs them). Everything it starts is torn down on any exit: the mounts,
# the volume, glusterd and the brick processes (by PID).
set -euo pipefail

source "$(dirname "$0")/common.sh" "$@"

[ "$(id -u)" -eq 0 ] || skip "GlusterFS needs root (glusterd, mount)"
[ -c /dev/fuse ] || skip "FUSE is unavailable (no /dev/fuse)"
grep -qw fuse /proc/filesystems || skip "FUSE is unavailable (the kernel lists no fuse file system)"
for c in glusterd gluster glusterfs mount.glusterfs; do
  command -v "$c" >/dev/null || fail "$c is missing: install glusterfs-server glusterfs-client (scripts/lib/deps.sh does)"
done

# One test volume at a time on this machine (glusterd is machine-wide).
mkdir -p /run/lock
exec 9>/run/lock/trainio-glusterfs-test.lock
flock -w 120 9 || fail "another GlusterFS test holds /run/lock/trainio-glusterfs-test.lock"
for _ in $(seq 60); do pgrep -x glusterd >/dev/null || break; sleep 2; done
pgrep -x glusterd >/dev/null && fail "a glusterd not started by this test is running (pid $(pgrep -x glusterd | tr '\n' ' ')): stop it first"

# glusterd refuses localhost and 127.0.0.1 as brick hosts: a name for another loopback address.
host=trainio-gluster-test
grep -Eq "^127\.0\.0\.2[[:space:]].*\b${host}\b" /etc/hosts || echo "127.0.0.2 ${host}" >>/etc/hosts

d=$(mktemp -d "${parent}/trainio-glusterfs.XXXXXX")
vol="trainio$$"
glusterd_pid=""
mounts=()
cleanup() {
  local rc=$?
  set +e
  for m in "${mounts[@]}"; do
    mountpoint -q "$m" && { umount "$m" 2>/dev/null || umount -l "$m"; }
  done
  if [ -n "$glusterd_pid" ]; then
    local bricks
    bricks=$(pgrep -f -- "glusterfsd.*${d}/b[12]" || true)
    gluster --mode=script volume stop "$vol" force >/dev/null 2>&1
    gluster --mode=script volume delete "$vol" >/dev/null 2>&1
    for p in $bricks; do kill "$p" 2>/dev/null; done
    kill "$glusterd_pid" 2>/dev/null
    for _ in $(seq 50); do
      local alive=0
      for p in $glusterd_pid $bricks; do kill -0 "$p" 2>/dev/null && alive=1; done
      [ $alive -eq 0 ] && break
      sleep 0.1
    done
    for p in $glusterd_pid $bricks; do kill -9 "$p" 2>/dev/null; done
  fi
  [ $rc -ne 0 ] && [ -f "$d/glusterd.log" ] && { echo "--- glusterd.log (end)"; tail -8 "$d/glusterd.log"; } >&2
  rm -rf "$d"
  exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM

glusterd -p "$d/glusterd.pid" --log-file="$d/glusterd.log"
for _ in $(seq 100); do [ -s "$d/glusterd.pid" ] && break; sleep 0.1; done
glusterd_pid=$(cat "$d/glusterd.pid")
for _ in $(seq 100); do gluster --mode=script volume list >/dev/null 2>&1 && break; sleep 0.2; done
gluster --mode=script volume create "$vol" transport tcp "${host}:${d}/b1" "${host}:${d}/b2" force >/dev/null
gluster --mode=script volume start "$vol" >/dev/null
mkdir -p "$d/mnt" "$d/mnt-direct" "$d/work"
mount -t glusterfs "${host}:/${vol}" "$d/mnt"
mounts+=("$d/mnt")
echo "GlusterFS volume $vol mounted at $d/mnt"

# 32 one-MiB samples; the page cache emptied (machine-wide) before each epoch.
data=(dataset.data_folder="$d/mnt/data" workflow.evaluation=false dataset.num_files_train=32
      dataset.num_samples_per_file=1 dataset.record_length_bytes=1048576 dataset.num_subfolders_train=0
      reader.batch_size=4 train.epochs=2 train.computation_time=0.001)
cd "$d/work"
"$trainio" run default "${data[@]}" workflow.generate_data=true reader.evict=drop_caches --output cold >cold.txt 2>&1 ||
  { cat cold.txt; fail "the run under reader.evict=drop_caches failed"; }
"$trainio" run default "${data[@]}" workflow.generate_data=false --output hot >hot.txt 2>&1 ||
  { cat hot.txt; fail "the hot run failed"; }
grep "page cache" cold.txt hot.txt

# The same volume through a FUSE mount in direct_io mode: reads never enter the page cache, so
# residency says nothing about where they came from.
mount -t glusterfs -o direct-io-mode=enable "${host}:/${vol}" "$d/mnt-direct"
mounts+=("$d/mnt-direct")
"$trainio" run default "${data[@]/$d\/mnt\/data/$d/mnt-direct/data}" workflow.generate_data=false --output direct >direct.txt 2>&1 ||
  { cat direct.txt; fail "the run on the direct_io mount failed"; }
grep "page cache" direct.txt

# Cache tiers in front of the volume: 3 epochs, the page cache emptied before each, 2 ranks
# sharing a tier on a local folder (and then in memory). What the bricks read from their disks
# (rchar of the brick processes, /proc/<pid>/io) is counted around each run.
brick_reads() {
  local total=0 p
  for p in $(pgrep -f -- "glusterfsd.*${d}/b[12]"); do total=$((total + $(awk '/^rchar/ {print $2}' "/proc/$p/io"))); done
  echo "$total"
}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
for tier in none local_ssd memory; do
  args=(train.epochs=3 reader.evict=drop_caches reader.read_threads=1)
  [ "$tier" != none ] && args+=(cache.tier="$tier" cache.capacity=64MiB cache.path="$d/work/tier")
  before=$(brick_reads)
  mpirun -np 2 --oversubscribe --bind-to none "$trainio" run default "${data[@]}" workflow.generate_data=false \
    "${args[@]}" --output "cache-$tier" >"cache-$tier.txt" 2>&1 || { cat "cache-$tier.txt"; fail "the run with cache tier $tier failed"; }
  echo "$(( $(brick_reads) - before ))" >"cache-$tier.bricks"
  grep "cache tier" "cache-$tier.txt" || true
done
[ -z "$(ls -A "$d/work/tier" 2>/dev/null)" ] || fail "the local tier's folder was left under cache.path: $(ls -A "$d/work/tier")"

# Parallel HDF5 on the volume: 3 ranks write and read 2 files together (collective MPI-IO through
# GlusterFS's FUSE mount), and h5py reads every sample back.
mpi() { mpirun -np "$1" --oversubscribe --bind-to none "${@:2}"; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
mpi 3 "$trainio" run default dataset.data_folder="$d/mnt/h5" dataset.format=hdf5 dataset.num_files_train=2 \
  dataset.num_samples_per_file=12 dataset.record_length_bytes=65536 dataset.record_length_bytes_stdev=0 \
  dataset.num_files_eval=0 workflow.evaluation=false workflow.generate_data=true reader.batch_size=2 \
  train.epochs=1 train.computation_time=0 --output h5 >h5.txt 2>&1 ||
  { cat h5.txt; fail "parallel HDF5 (3 ranks, 2 files) on the GlusterFS volume failed"; }
"$python" - "$d/mnt/h5" <<'PY' || fail "h5py does not read what 3 ranks wrote to the volume together"
import glob, sys, h5py
files = sorted(glob.glob(sys.argv[1] + "/train/**/*.h5", recursive=True) + glob.glob(sys.argv[1] + "/train/**/*.hdf5", recursive=True))
assert len(files) == 2, files
for path in files:
    with h5py.File(path, "r") as f:
        n = f["labels"].shape[0]
        assert n == 12, (path, n)
        assert f["records_0"].shape[0] == 12, (path, f["records_0"].shape)
        f["records_0"][:]
print("h5py reads", len(files), "files of 12 samples written by 3 ranks together")
PY

# A checkpoint run on the volume: 2 ranks save 2 checkpoints with fsync and load them back.
mpi 2 "$trainio" run default model.type=transformer model.num_layers=2 model.transformer.hidden_size=512 \
  model.transformer.num_attention_heads=8 model.transformer.num_kv_heads=2 model.transformer.ffn_hidden_size=1024 \
  model.transformer.vocab_size=1000 model.parallelism.zero_stage=3 framework=pytorch workflow.train=false \
  workflow.generate_data=false workflow.checkpoint=true checkpoint.checkpoint_folder="$d/mnt/ckpt" \
  checkpoint.time_between_checkpoints=0 checkpoint.num_checkpoints_write=2 checkpoint.num_checkpoints_read=2 \
  checkpoint.fsync=true --output ckpt >ckpt.txt 2>&1 ||
  { cat ckpt.txt; fail "the checkpoint run on the GlusterFS volume failed"; }
grep -q "checkpoint load 2/2" ckpt.txt || { cat ckpt.txt; fail "the checkpoint run did not load its 2 checkpoints"; }

# Every run's figures agree with its own records.
for run in cold hot direct cache-none cache-local_ssd cache-memory h5 ckpt; do
  "$trainio" verify "$run" >"verify-$run.txt" 2>&1 || { cat "verify-$run.txt"; fail "trainio verify $run found figures that disagree with their records"; }
done

"$python" - "$d/work" <<'PY'
import json, os, sys
work = sys.argv[1]
def epochs(run):
    s = json.load(open(os.path.join(work, run, "summary.json")))
    fs = s["trainio"]["context"]["data_filesystem"]
    assert "fuse" in fs or "gluster" in fs, f"{run}: the data folder is on {fs}, not GlusterFS"
    return [e["train"] for e in s["trainio"]["epochs"]]
failures = []
for t in epochs("cold"):
    pc = t.get("page_cache", {})
    print("cold (drop_caches):", pc, "served_from_page_cache:", t["served_from_page_cache"])
    if t["served_from_page_cache"] or pc.get("verdict") in ("page_cache", None):
        failures.append(f"an epoch after drop_caches was reported as served from the page cache: {pc}")
for t in epochs("direct"):
    pc = t.get("page_cache", {})
    print("direct_io mount:", pc)
    if pc.get("verdict") != "unknown" or not pc.get("reason"):
        failures.append(f"reads past the page cache (FUSE direct_io) must give 'unknown' with a reason: {pc}")
for t in epochs("hot"):
    print("hot:", t.get("page_cache"))
h5 = json.load(open(os.path.join(work, "h5", "summary.json")))
print("parallel HDF5:", h5["num_accelerators"], "ranks,", h5["trainio"]["epochs"][0]["train"]["samples"], "samples read")
if h5["num_accelerators"] != 3 or h5["trainio"]["epochs"][0]["train"]["samples"] != 24:
    failures.append("the 3-rank HDF5 run did not read the 24 samples of its 2 files")
ck = json.load(open(os.path.join(work, "ckpt", "summary.json")))
saves = [c for c in ck["trainio"]["checkpoint"]["checkpoints"] if c["kind"] == "save"]
print("checkpoints on GlusterFS:", [(c["kind"], c["index"]) for c in ck["trainio"]["checkpoint"]["checkpoints"]],
      "save GB/s", ck["metric"]["save_checkpoint_io_mean_GB_per_second"])
if len(saves) != 2 or not ck["metric"]["save_checkpoint_io_mean_GB_per_second"]:
    failures.append("the checkpoint run did not report 2 saves with a bandwidth")
# Cache tiers: the runs' own figures and the bricks' reads agree that storage served one epoch.
data_bytes = 32 * 1048576
bricks = {t: int(open(os.path.join(work, f"cache-{t}.bricks")).read()) for t in ("none", "local_ssd", "memory")}
print("bytes the bricks read, 3 epochs:", bricks)
if bricks["none"] < 2.5 * data_bytes:
    failures.append(f"without a tier the bricks read {bricks['none']} bytes over 3 cold epochs, less than 2.5 datasets")
for tier in ("local_ssd", "memory"):
    ep = epochs(f"cache-{tier}")
    backing = [t["cache"]["backing_read_bytes"] for t in ep]
    hits = [t["cache"]["hit_ratio_samples"] for t in ep]
    print(f"{tier}: backing bytes per epoch {backing}, hit ratios {hits}")
    if backing[0] < data_bytes or any(b != 0 for b in backing[1:]) or hits[1:] != [1.0, 1.0]:
        failures.append(f"{tier}: the backing store's reads did not fall to 0 after epoch 1: {backing}, hits {hits}")
    if not data_bytes <= bricks[tier] < 1.6 * data_bytes:
        failures.append(f"{tier}: the bricks read {bricks[tier]} bytes, not about one dataset ({data_bytes})")
if failures:
    print("\n".join(failures), file=sys.stderr)
    sys.exit(1)
print("OK")
PY
