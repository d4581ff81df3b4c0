"""Asynchronous checkpoints (checkpoint.async): the training stall is measured and shorter than a
synchronous save of the same shard, the background flush overlaps training reads, a new save
waits for a free in-flight slot, the files are those of the synchronous save, a full disk during a
flush fails the run naming the file, and `trainio verify` recomputes every figure."""
import glob
import json
import os
import subprocess
import unittest

from harness import TRAINIO, TrainioTest

SLOW_IO = os.environ.get("TRAINIO_SLOW_IO", os.path.join(os.path.dirname(__file__), "../../build/tests/libtrainio_slow_io.so"))

# 16 files of one sample, batches of 2: 8 steps an epoch, 20 ms of compute each, a checkpoint of
# one 8 MiB file (rank 0's legacy model) every 3 steps.
TRAIN = ["dataset.data_folder=data", "dataset.num_files_train=16", "dataset.num_files_eval=0", "workflow.evaluation=false",
         "reader.batch_size=2", "train.epochs=1", "train.computation_time=0.02", "workflow.checkpoint=true",
         "checkpoint.steps_between_checkpoints=3", "model.model_size_bytes=8388608"]
# Every write of a checkpoint file sleeps 60 ms: a flush takes several steps, whatever the disk.
SLOW_WRITES = {"LD_PRELOAD": SLOW_IO, "TRAINIO_FAULT_SLOW_PATH": "/ck", "TRAINIO_FAULT_SLOW_WRITES": "1",
               "TRAINIO_FAULT_SLOW_SECONDS": "0.06"}


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def listing(folder):
    """Every file under `folder` with its size, by path relative to it."""
    return {os.path.relpath(f, folder): os.path.getsize(f)
            for f in glob.glob(os.path.join(folder, "**"), recursive=True) if os.path.isfile(f)}


@unittest.skipUnless(os.path.exists(SLOW_IO), f"the fault-injection library is not built ({SLOW_IO})")
class AsyncCheckpointTest(TrainioTest):
    def run_async(self, out, *extra, env=None, ckpt="ck_async"):
        return self.run_trainio("run", "default", *TRAIN, f"checkpoint.checkpoint_folder={ckpt}", "checkpoint.async=true",
                                *extra, "--output", out, env=env or SLOW_WRITES)

    def test_the_stall_is_shorter_than_the_save_and_the_flush_overlaps_training_reads(self):
        # A checkpoint every 4 steps of 50 ms, a flush of about 4 writes of 30 ms: no save waits for a slot.
        spaced = ["dataset.num_files_train=32", "checkpoint.steps_between_checkpoints=4", "train.computation_time=0.05"]
        env = dict(SLOW_WRITES, TRAINIO_FAULT_SLOW_SECONDS="0.03")
        r = self.run_trainio("run", "default", *TRAIN, *spaced, "checkpoint.checkpoint_folder=ck_sync", "--output", "sync",
                             env=env)
        self.assertEqual(r.code, 0, r)
        r = self.run_async("async", *spaced, "checkpoint.snapshot_bandwidth=1GB", env=env)
        self.assertEqual(r.code, 0, r)
        sync = self.summary("sync")["trainio"]["checkpoint"]["checkpoints"]
        s = self.summary("async")
        saves = s["trainio"]["checkpoint"]["checkpoints"]
        self.assertEqual([(c["epoch"], c["step"]) for c in saves], [(1, 4), (1, 8), (1, 12), (1, 16)])
        for c, plain in zip(saves, sync):
            a = c["async"]
            # The snapshot is paced at 1 GB/s: 8 MiB and the archive's headers take at least 8.4 ms.
            self.assertGreaterEqual(a["snapshot_seconds"], c["file_bytes"] / 1e9)
            self.assertAlmostEqual(a["stall_seconds"], a["snapshot_seconds"] + a["slot_wait_seconds"], delta=1e-6)
            self.assertLess(a["stall_seconds"], plain["duration_seconds"] / 3)
            # The flush is the save's span, with the synchronous save's calls.
            self.assertEqual(a["flush_seconds"], c["duration_seconds"])
            self.assertGreater(a["flush_seconds"], 0.06)
            self.assertLess(a["slot_wait_seconds"], 0.01)
            self.assertEqual(c["io"]["write"]["count"], plain["io"]["write"]["count"])
            self.assertEqual(c["file_bytes"], plain["file_bytes"])
            self.assertEqual(a["buffer_bytes"], 8392704)  # the 8,392,xxx-byte shard rounded up to pages
        totals = s["trainio"]["checkpoint"]["async"]
        self.assertEqual(totals["saves"], 4)
        self.assertAlmostEqual(totals["stall_seconds"], sum(c["async"]["stall_seconds"] for c in saves), places=9)
        # Steps ran while the flush wrote: the records say which, the summary compares them.
        overlap = s["trainio"]["epochs"][0]["flush_overlap"]
        self.assertGreaterEqual(overlap["during_flush"]["steps"], 2)
        self.assertGreaterEqual(overlap["without_flush"]["steps"], 1)
        self.assertEqual(overlap["during_flush"]["steps"] + overlap["without_flush"]["steps"], 16)
        self.assertGreater(overlap["during_flush"]["read_bytes_per_second"], 0)
        lines = records(self.path("async", "0_records.jsonl"))
        ranges = [r["steps"] for r in lines if r["record"] == "async_overlap"][0]
        self.assertTrue(ranges and all(b > a for a, b in ranges))
        flushes = [r for r in lines if r["record"] == "async_save"]
        self.assertEqual(len(flushes), 4)
        for f in flushes:
            self.assertLessEqual(f["stall_start_ns"], f["flush_start_ns"])
            self.assertLess(f["flush_start_ns"], f["flush_end_ns"])
        self.assertIn("stalled training", r.out)
        self.assertIn("while flushing", r.out)
        # The same files, byte counts and names as the synchronous save's.
        self.assertEqual(listing(self.path("ck_async")), listing(self.path("ck_sync")))

    def test_a_save_that_finds_the_slot_taken_waits_and_the_wait_is_stall(self):
        # A checkpoint every step with one flush in flight: each save waits for the one before.
        r = self.run_async("o", "checkpoint.steps_between_checkpoints=1", "train.computation_time=0.01")
        self.assertEqual(r.code, 0, r)
        saves = self.summary("o")["trainio"]["checkpoint"]["checkpoints"]
        self.assertEqual(len(saves), 8)
        self.assertLess(saves[0]["async"]["slot_wait_seconds"], 0.01)
        for c in saves[1:]:
            a = c["async"]
            self.assertGreater(a["slot_wait_seconds"], 0.05, c)
            self.assertAlmostEqual(a["stall_seconds"], a["snapshot_seconds"] + a["slot_wait_seconds"], delta=1e-6)
        # Two in flight: the waits shrink (the writer still serves them one after the other).
        r = self.run_async("two", "checkpoint.steps_between_checkpoints=1", "train.computation_time=0.01",
                           "checkpoint.async_inflight=2", ckpt="ck_two")
        self.assertEqual(r.code, 0, r)
        two = self.summary("two")["trainio"]["checkpoint"]["checkpoints"]
        self.assertLess(two[1]["async"]["slot_wait_seconds"], 0.01)
        self.assertGreater(two[2]["async"]["slot_wait_seconds"], 0.01)

    def test_a_shard_larger_than_the_buffer_is_staged_and_stalls_longer(self):
        r = self.run_async("whole", ckpt="ck_whole")
        self.assertEqual(r.code, 0, r)
        r = self.run_async("o", "checkpoint.async_buffer_bytes=1MiB")
        self.assertEqual(r.code, 0, r)
        for c, whole in zip(self.summary("o")["trainio"]["checkpoint"]["checkpoints"],
                            self.summary("whole")["trainio"]["checkpoint"]["checkpoints"]):
            self.assertEqual(c["async"]["buffer_bytes"], 1 << 20)
            self.assertGreater(whole["async"]["buffer_bytes"], 8 << 20)
            self.assertLess(whole["async"]["snapshot_seconds"], 0.03)
            # The second MiB waits for the flush to write the first out: at least one 60 ms write.
            self.assertGreater(c["async"]["snapshot_seconds"], 0.06)

    def test_the_files_load_as_the_synchronous_save_s_do(self):
        r = self.run_async("o", "checkpoint.steps_between_checkpoints=1", env={})
        self.assertEqual(r.code, 0, r)
        # Checkpoint-only loads read global_epoch1_step<i>: the training run's first saves.
        r = self.run_trainio("run", "default", "workflow.train=false", "workflow.generate_data=false",
                             "workflow.checkpoint=true", "checkpoint.checkpoint_folder=ck_async",
                             "model.model_size_bytes=8388608", "checkpoint.num_checkpoints_write=0",
                             "checkpoint.num_checkpoints_read=2", "checkpoint.time_between_checkpoints=0", "--output", "load")
        self.assertEqual(r.code, 0, r)
        loads = self.summary("load")["trainio"]["checkpoint"]["checkpoints"]
        saves = self.summary("o")["trainio"]["checkpoint"]["checkpoints"]
        self.assertEqual([(c["kind"], c["file_bytes"]) for c in loads], [("load", saves[0]["file_bytes"])] * 2)

    def test_a_full_disk_during_a_background_flush_fails_the_run_naming_the_file(self):
        mount = self.tmpfs("small", "size=12m")
        r = self.run_trainio("run", "default", *TRAIN, f"checkpoint.checkpoint_folder={mount}/ck", "checkpoint.async=true",
                             "--output", "o")
        self.assertEqual(r.code, 1, r)
        self.assertIn("No space left on device", r.err)
        self.assertIn("global_epoch1_step6", r.err)  # the second save fills the disk
        self.assertFalse(os.path.exists(self.path("o", "summary.json")))
        # The first save stays whole; nothing of the failed one is left.
        left = sorted(os.path.relpath(f, mount) for f in glob.glob(os.path.join(mount, "ck", "**"), recursive=True)
                      if os.path.isfile(f))
        self.assertEqual(left, ["ck/global_epoch1_step3/model_states-0.pt"])

    def test_two_ranks_each_flush_their_shard_and_agree(self):
        # ZeRO 3 over 2 ranks: each writes its own model and optimizer shard (a small transformer).
        model = ["model.type=transformer", "model.num_layers=2", "model.transformer.hidden_size=512",
                 "model.transformer.num_attention_heads=8", "model.transformer.num_kv_heads=2",
                 "model.transformer.ffn_hidden_size=1024", "model.transformer.vocab_size=1000", "framework=pytorch",
                 "model.parallelism.zero_stage=3"]
        r = self.run_trainio("run", "default", *TRAIN, *model, "checkpoint.checkpoint_folder=ck", "checkpoint.async=true",
                             "--output", "o", ranks=2, env=SLOW_WRITES)
        self.assertEqual(r.code, 0, r)
        s = self.summary("o")
        for c in s["trainio"]["checkpoint"]["checkpoints"]:
            self.assertEqual(c["ranks_with_data"], 2)
            self.assertEqual(c["files"], 4)
        self.assertEqual(sorted(os.listdir(self.path("ck", "global_epoch1_step3"))),
                         ["zero_pp_rank_0_mp_rank_0_model_states.pt", "zero_pp_rank_0_mp_rank_0_optim_states.pt",
                          "zero_pp_rank_1_mp_rank_0_model_states.pt", "zero_pp_rank_1_mp_rank_0_optim_states.pt"])
        overlap = s["trainio"]["epochs"][0]["flush_overlap"]
        self.assertEqual(overlap["during_flush"]["steps"] + overlap["without_flush"]["steps"], 8)  # 4 steps x 2 ranks
        self.assertEqual(overlap["during_flush"]["ranks"], 2)

    def test_verify_recomputes_the_async_figures_and_catches_an_edited_one(self):
        r = self.run_async("o", "checkpoint.snapshot_bandwidth=2GB")
        self.assertEqual(r.code, 0, r)
        proc = subprocess.run([TRAINIO, "verify", self.path("o"), "--all"], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stdout[-3000:])
        self.assertIn("async.stall_seconds", proc.stdout)
        self.assertIn("flush_overlap.during_flush.au_percentage", proc.stdout)
        for figure, edit in (("stall_seconds", lambda s: s["trainio"]["checkpoint"]["checkpoints"][1]["async"]),
                             ("read_bytes_per_second", lambda s: s["trainio"]["epochs"][0]["flush_overlap"]["during_flush"])):
            s = self.read_json("o", "summary.json")
            edit(s)[figure] *= 1.5
            os.makedirs(self.path("edited"), exist_ok=True)
            for name in os.listdir(self.path("o")):
                if name != "summary.json" and os.path.isfile(self.path("o", name)):
                    with open(self.path("o", name), "rb") as src, open(self.path("edited", name), "wb") as dst:
                        dst.write(src.read())
            self.write_json(s, "edited", "summary.json")
            self.unverified.add("edited")
            proc = subprocess.run([TRAINIO, "verify", self.path("edited")], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 1, proc.stdout[-3000:])
            self.assertIn(figure, "\n".join(line for line in proc.stdout.splitlines() if "MISMATCH" in line))


class AsyncCheckpointConfigTest(TrainioTest):
    def refused(self, *extra):
        r = self.run_trainio("run", "default", *TRAIN, "checkpoint.checkpoint_folder=ck", "checkpoint.async=true", *extra,
                             "--output", "o")
        self.assertEqual(r.code, 2, r)
        self.assertFalse(os.path.exists(self.path("data")))  # refused before any I/O
        return r.err

    def test_bad_async_settings_are_refused_naming_the_key(self):
        self.assertIn("checkpoint.snapshot_bandwidth", self.refused("checkpoint.snapshot_bandwidth=0"))
        self.assertIn("checkpoint.async_inflight", self.refused("checkpoint.async_inflight=0"))
        self.assertIn("checkpoint.async_buffer_bytes", self.refused("checkpoint.async_buffer_bytes=100"))
        err = self.refused("workflow.train=false", "checkpoint.num_checkpoints_write=1")
        self.assertIn("workflow.train", err)
        err = self.refused("checkpoint.num_checkpoints_read=1")
        self.assertIn("num_checkpoints_read", err)


if __name__ == "__main__":
    unittest.main()
