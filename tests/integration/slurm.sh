#!/usr/bin/env bash
# trainio under a real Slurm on this machine: slurmctld and slurmd from Debian with a generated
# slurm.conf (no munge), started and stopped by this test, by PID: this machine's own node, and two
# more nodes `hosta` and `hostb` on 127.0.0.1 in partition `hosts`, each slurmd in its own UTS and
# mount namespace (its host name, its own /tmp), so that their tasks are on two hosts as far as
# trainio, Slurm and PMIx can tell.
#
#   slurm.sh TRAINIO [SCRATCH_PARENT]
#
# Checks that
#  - srun --mpi=pmix -n 4 makes one 4-rank run with one results folder, and summary.json names the
#    launcher, the Slurm job, step and node list;
#  - srun without an MPI plugin (each task a one-rank MPI world) is refused, exit 2, naming
#    --mpi=pmix, before anything is written;
#  - a task killed mid-run ends the job non-zero, promptly, with no summary;
#  - a job that hits its --time limit keeps its finished epochs, marked incomplete;
#  - sbatch runs the same (a batch script of generate, run and report);
#  - trainio sweep inside an allocation (salloc) launches its runs with srun;
#  - with every read slowed on one host of two, the straggler named is on that host.
#
# Needs root (the daemons run as root; skips with exit 77 otherwise) and slurmd, slurmctld and
# slurm-client (scripts/lib/deps.sh installs them); the slow host needs $TRAINIO_SLOW_IO
# (tests/fault/slow_io.c, built beside the tests).
set -euo pipefail

source "$(dirname "$0")/common.sh" "$@"

[ "$(id -u)" -eq 0 ] || skip "the Slurm daemons of this test run as root"
for c in slurmctld slurmd srun sbatch sinfo scontrol unshare; do
  command -v "$c" >/dev/null || fail "$c is missing: install slurmd slurmctld slurm-client (scripts/lib/deps.sh does)"
done

# hosta's and hostb's slurmd see a /tmp of their own, which hides everything under the real one.
for path in "$trainio" "$parent"; do
  case "$path/" in
    /tmp/*) fail "$path is under /tmp, which the test's hosts hosta and hostb do not see (each has a /tmp of its own): build outside /tmp" ;;
  esac
done

# One test cluster at a time on this machine.
mkdir -p /run/lock
exec 9>/run/lock/trainio-slurm-test.lock
flock -w 300 9 || fail "another Slurm test holds /run/lock/trainio-slurm-test.lock"

d=$(mktemp -d "${parent}/trainio-slurm.XXXXXX")
pids=()
cleanup() {
  local rc=$?
  set +e
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for _ in $(seq 50); do
    local alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive -eq 0 ] && break
    sleep 0.1
  done
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  if [ $rc -ne 0 ]; then
    for log in "$d"/*.log; do { echo "--- $(basename "$log") (end)"; tail -8 "$log"; } >&2; done
  fi
  rm -rf "$d"
  exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Free ports on loopback for slurmctld and the three slurmd.
read -r ctld_port d_port a_port b_port < <("$python" - <<'PY'
import socket
socks = [socket.socket() for _ in range(4)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])
PY
)
node=$(hostname -s)
mkdir -p "$d/state" "$d/spool" "$d/work" "$d/tmp-hosta" "$d/tmp-hostb"
cat >"$d/slurm.conf" <<EOF
ClusterName=trainiotest
SlurmctldHost=${node}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
MpiDefault=none
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/ctld.pid
SlurmdPidFile=$d/d.%n.pid
SlurmctldLogFile=$d/ctld.log
SlurmdLogFile=$d/d.%n.log
SlurmctldPort=${ctld_port}
SlurmdPort=${d_port}
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
KillWait=5
NodeName=${node} NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
NodeName=hosta NodeHostname=hosta NodeAddr=127.0.0.1 Port=${a_port} CPUs=4 State=UNKNOWN
NodeName=hostb NodeHostname=hostb NodeAddr=127.0.0.1 Port=${b_port} CPUs=4 State=UNKNOWN
PartitionName=debug Nodes=${node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
PartitionName=hosts Nodes=hosta,hostb Default=NO MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF="$d/slurm.conf"
# Barriers of oversubscribed ranks cost milliseconds without it.
export OMPI_MCA_mpi_yield_when_idle=1
unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM

slurmctld -D -i >"$d/ctld.out" 2>&1 &
pids+=($!)
slurmd -D -N "$node" >"$d/d.out" 2>&1 &
pids+=($!)
# Two hosts on this machine: each slurmd (and so each task it starts) sees its own host name and its
# own /tmp, where PMIx and Open MPI keep per-host files that would otherwise collide.
for h in hosta hostb; do
  unshare --uts --mount sh -c "mount --bind '$d/tmp-$h' /tmp && hostname $h && exec slurmd -D -N $h" >"$d/d.$h.out" 2>&1 &
  pids+=($!)
done
nodes_idle() { [ "$(sinfo -h -N -o %t 2>/dev/null | sort -u)" = "idle" ] && [ "$(sinfo -h -N -o %N | wc -l)" -eq 3 ]; }
for _ in $(seq 150); do
  nodes_idle && break
  sleep 0.2
done
nodes_idle || { sinfo -N >&2; cat "$d"/*.out >&2; fail "the Slurm nodes did not come up idle"; }
echo "Slurm is up: nodes ${node}, hosta and hostb, slurmctld on 127.0.0.1:${ctld_port}"
srun --mpi=list 2>&1 | grep -q pmix || fail "Slurm has no pmix plugin ('srun --mpi=list'): install Debian's slurmd"

cd "$d/work"
data=(dataset.data_folder="$d/work/data" workflow.evaluation=false dataset.num_files_train=16
      dataset.num_samples_per_file=4 dataset.record_length_bytes=65536 dataset.num_subfolders_train=0
      reader.batch_size=2 train.epochs=2 train.computation_time=0.001)

# 1. srun with the PMIx plugin: one 4-rank run.
srun --mpi=pmix -n 4 "$trainio" run default "${data[@]}" workflow.generate_data=true --output pmix >pmix.txt 2>&1 ||
  { cat pmix.txt; fail "srun --mpi=pmix -n 4 trainio run failed"; }
[ -f pmix/summary.json ] || { cat pmix.txt; fail "no summary.json from the 4-rank run"; }

# 2. srun without an MPI plugin: refused before anything is written.
rc=0
srun -n 2 "$trainio" run default "${data[@]}" --output nompi >nompi.txt 2>&1 || rc=$?
cat nompi.txt
[ "$rc" -eq 2 ] || fail "srun without --mpi=pmix exited $rc, expected 2 (a usage error)"
grep -q -- "--mpi=pmix" nompi.txt || fail "the refusal does not name srun --mpi=pmix"
[ ! -e nompi ] || fail "srun without --mpi=pmix wrote into its results folder: $(ls -R nompi)"

# 3. A task killed mid-run: the job ends, non-zero and promptly, and leaves no summary.
srun --mpi=pmix -n 4 "$trainio" run default "${data[@]}" train.epochs=100 train.computation_time=0.05 \
  --output killed >killed.txt 2>&1 &
srun_pid=$!
victim=""
for _ in $(seq 300); do
  victim=$(pgrep -f -- "--output killed" | while read -r p; do
             [ "$(cat /proc/$p/comm 2>/dev/null)" = "trainio" ] && echo "$p"; done | tail -1 || true)
  [ -n "$victim" ] && grep -q "epoch 1" killed.txt 2>/dev/null && break
  sleep 0.1
done
[ -n "$victim" ] || { kill "$srun_pid"; cat killed.txt; fail "the long run's tasks never started"; }
kill -9 "$victim"
rc=0
timeout 120 tail --pid="$srun_pid" -f /dev/null || { kill -9 "$srun_pid"; fail "the job did not end within 120 s of a task's death"; }
wait "$srun_pid" || rc=$?
cat killed.txt | tail -5
[ "$rc" -ne 0 ] || fail "the job with a killed task exited 0"
[ ! -e killed/summary.json ] || fail "the job with a killed task wrote a summary"

# 3b. A job that hits its time limit: Slurm sends SIGTERM to every task (SIGKILL KillWait = 5 s
# later); the ranks stop after the same step and keep what they measured, marked incomplete.
rc=0
timeout 300 srun --mpi=pmix -n 2 --time=1 "$trainio" run default "${data[@]}" train.epochs=1000000 \
  train.computation_time=0.05 --output timelimit >timelimit.txt 2>&1 || rc=$?
tail -5 timelimit.txt
[ "$rc" -ne 0 ] || fail "the job that hit its time limit exited 0"
[ -f timelimit/summary.json ] || { cat timelimit.txt; fail "the job that hit its time limit kept no summary"; }
"$python" - "$d/work/timelimit/summary.json" <<'PY' || fail "the time-limited run's summary is not an incomplete run's"
import json, sys
s = json.load(open(sys.argv[1]))
t = s["trainio"]
print("time limit:", t["complete"], t["stopped"], len(t["epochs"]), "epochs kept")
assert t["complete"] is False and t["stopped"]["reason"] == "SIGTERM" and len(t["epochs"]) >= 1, t["stopped"]
PY
ls -a timelimit | grep -q trainio-tmp && fail "the time-limited run left temporaries: $(ls -a timelimit)"
"$trainio" verify timelimit >verify.txt 2>&1 || { cat verify.txt; fail "trainio verify of the time-limited run failed"; }

# 4. sbatch: the shape of docs/usage.md's batch script (generate, run, report), waited for.
cat >job.sh <<EOF
#!/bin/bash
#SBATCH --ntasks=2
#SBATCH --output=$d/work/batch.txt
set -e
env | grep ^SLURM_ | sort >$d/work/batch-env.txt
# The batch script itself is one process of a 2-task job: a one-rank run, not refused.
"$trainio" run default ${data[*]} workflow.generate_data=false --output batch/solo
srun --mpi=pmix "$trainio" run default ${data[*]} workflow.generate_data=false --output batch/run1
srun --mpi=pmix "$trainio" run default ${data[*]} workflow.generate_data=false --output batch/run2
"$trainio" report batch/run1 batch/run2
EOF
sbatch --wait job.sh >sbatch.txt 2>&1 || { cat sbatch.txt batch.txt batch-env.txt; fail "the batch job failed"; }
cat batch.txt | tail -5

# 5. A sweep inside an allocation launches its runs with srun --mpi=pmix.
salloc -n 2 "$trainio" sweep default "${data[@]}" workflow.generate_data=false --ranks 1,2 --output sweep >sweep.txt 2>&1 ||
  { cat sweep.txt; fail "trainio sweep inside salloc failed"; }
cat sweep.txt | tail -4

# 6. One slow host of two: every read of the data folder on hostb waits 3 ms (tests/fault/slow_io.c);
# ranks 0-1 run on hosta, 2-3 on hostb. The straggler named in every epoch is on hostb, and held the
# others at the barrier. Across the two hosts Open MPI talks TCP on loopback, as between real hosts.
[ -f "${TRAINIO_SLOW_IO:-}" ] || fail "TRAINIO_SLOW_IO names no fault-injection library (tests/fault/slow_io.c): '${TRAINIO_SLOW_IO:-}'"
hosts=(-p hosts -N 2 --ntasks-per-node=2)
slow=(dataset.data_folder="$d/work/slowdata" dataset.num_files_train=32 reader.batch_size=2 reader.read_threads=1
      reader.prefetch_size=1 train.epochs=2 train.computation_time=0.002 workflow.evaluation=false
      dataset.num_samples_per_file=4 dataset.record_length_bytes=65536 dataset.num_subfolders_train=0)
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo
srun --mpi=pmix "${hosts[@]}" "$trainio" generate default "${slow[@]}" >slowgen.txt 2>&1 ||
  { cat slowgen.txt; fail "generating the slow-host dataset on hosta and hostb failed"; }
srun --mpi=pmix "${hosts[@]}" sh -c 'if [ "$(hostname)" = hostb ]; then
    export LD_PRELOAD="$0" TRAINIO_FAULT_SLOW_PATH=/slowdata/ TRAINIO_FAULT_SLOW_SECONDS=0.003; fi
  exec "$@"' "$TRAINIO_SLOW_IO" "$trainio" run default "${slow[@]}" workflow.generate_data=false --output slowhost \
  >slowhost.txt 2>&1 || { cat slowhost.txt; fail "the run with one slow host failed"; }
unset OMPI_MCA_btl OMPI_MCA_btl_tcp_if_include
grep "straggler" slowhost.txt
grep -q "straggler: rank [23] (host hostb)" slowhost.txt || fail "the console does not name a rank of hostb as the straggler"
"$python" - "$d/work/slowhost/summary.json" <<'PY' || fail "the slow host's ranks are not named the stragglers"
import json, sys
t = json.load(open(sys.argv[1]))["trainio"]
hosts = {h["hostname"]: h["ranks"] for h in t["context"]["hosts"]}
assert hosts == {"hosta": 2, "hostb": 2}, hosts
for epoch in t["epochs"]:
    s = epoch["train"]["stragglers"]["straggler"]
    print(f"epoch {epoch['epoch']}: straggler rank {s['rank']} on {s['host']}, waited {s['batch_wait_seconds']:.3f} s "
          f"for its batches; the others waited {s['others_barrier_seconds']:.3f} s at the barrier")
    assert s["host"] == "hostb" and s["rank"] in (2, 3) and s["held_others"], s
    assert epoch["train"]["bottleneck"]["verdict"] == "straggler", epoch["train"]["bottleneck"]
PY

# Every run's figures agree with its own records.
for run in pmix timelimit batch/solo batch/run1 batch/run2 sweep slowhost; do
  "$trainio" verify "$run" >verify.txt 2>&1 || { cat verify.txt; fail "trainio verify $run found figures that disagree with their records"; }
done

"$python" - "$d/work" <<'PY'
import json, os, sys
work = sys.argv[1]
failures = []
def context(run):
    return json.load(open(os.path.join(work, run, "summary.json")))["trainio"]["context"]
c = context("pmix")
print("srun --mpi=pmix:", c["ranks"], "ranks,", c["launcher"])
if c["ranks"] != 4: failures.append(f"srun --mpi=pmix -n 4 made a {c['ranks']}-rank run")
slurm = c["launcher"]["slurm"] or {}
if c["launcher"]["name"] != "srun": failures.append(f"the launcher is recorded as {c['launcher']['name']}")
if not slurm.get("job_id") or slurm.get("step_id") is None or slurm.get("tasks") != 4 or not slurm.get("node_list"):
    failures.append(f"the Slurm job, step, tasks and nodes are not all recorded: {slurm}")
entries = sorted(os.listdir(os.path.join(work, "pmix")))
print("results folder:", entries)
for run in ("batch/run1", "batch/run2"):
    b = context(run)
    print(run + ":", b["ranks"], "ranks,", b["launcher"])
    if b["ranks"] != 2 or b["launcher"]["name"] != "srun": failures.append(f"{run}: {b['ranks']} ranks by {b['launcher']}")
if not os.path.exists(os.path.join(work, "batch", "aggregate.json")): failures.append("the batch job's report wrote no aggregate beside its runs")
solo = context("batch/solo")
print("batch script without srun:", solo["ranks"], "rank,", solo["launcher"])
if solo["ranks"] != 1 or solo["launcher"]["name"] != "none" or not (solo["launcher"]["slurm"] or {}).get("job_id"):
    failures.append(f"the batch script's own run: {solo['ranks']} ranks by {solo['launcher']}")
for n in (1, 2):
    c = context(f"sweep/ranks={n}/run1")
    print(f"sweep point of {n} ranks:", c["ranks"], "ranks,", c["launcher"]["name"])
    if c["ranks"] != n or c["launcher"]["name"] != "srun":
        failures.append(f"the sweep's {n}-rank point ran {c['ranks']} ranks by {c['launcher']['name']}")
if failures:
    print("\n".join(failures), file=sys.stderr)
    sys.exit(1)
print("OK")
PY
