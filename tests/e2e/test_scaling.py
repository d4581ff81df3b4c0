"""Per-rank memory must not grow with the run's steps (docs/scaling.md): the per-step lists of
DLIO's <rank>_output.json are spilled and streamed, never held whole."""
import os
import shutil
import unittest

from harness import TrainioTest

# A run of many tiny steps: npy files loaded once per worker (read_type: memory), batch 1, no compute.
MANY_STEPS = ["dataset.num_files_train=4", "dataset.record_length_bytes=64", "dataset.record_length_bytes_stdev=0",
              "dataset.format=npy", "reader.read_type=memory", "reader.batch_size=1", "reader.read_threads=1",
              "train.computation_time=0", "train.epochs=1", "workflow.generate_data=True",
              "dataset.num_files_eval=0", "workflow.evaluation=False"]


class StepMemoryTest(TrainioTest):
    def run_steps(self, steps):
        """Peak RSS of a run of `steps` training steps, and its results folder."""
        out = self.path(f"out-{steps}")
        peak = self.peak_rss_mib("run", "default", f"dataset.data_folder={self.path(f'data-{steps}')}",
                                 f"dataset.num_samples_per_file={steps // 4}", *MANY_STEPS, "--no-progress", "-o", out)
        return peak, out

    def test_peak_memory_does_not_grow_with_steps(self):
        small, _ = self.run_steps(1_000)
        big, out = self.run_steps(200_000)
        # 200,000 steps held as three floats each and rendered through a JSON DOM cost about 70 MiB
        # more than 1,000 steps; spilled and streamed they cost a fixed buffer.
        self.assertLess(big - small, 16, f"peak RSS {small:.0f} MiB at 1,000 steps, {big:.0f} MiB at 200,000")
        lists = self.read_json(out, "0_output.json")["1"]
        for field in ("load", "proc", "compute"):
            self.assertEqual(len(lists[field]["block1"]), 200_000, field)
        first = [lists[f]["block1"][0] for f in ("load", "proc", "compute")]
        self.assertAlmostEqual(first[1], first[0] + first[2], delta=1e-6)  # proc = load + compute
        self.assertFalse([n for n in os.listdir(out) if n.endswith(".trainio-tmp")], "the step spill is removed")


# Many short epochs, each with an evaluation and a checkpoint of a 4 KiB model.
MANY_PHASES = ["dataset.num_files_train=4", "dataset.num_files_eval=4", "dataset.num_samples_per_file=1",
               "dataset.record_length_bytes=64", "dataset.record_length_bytes_stdev=0", "dataset.format=npy",
               "reader.read_type=memory", "reader.batch_size=1", "reader.read_threads=1", "train.computation_time=0",
               "workflow.generate_data=True", "workflow.evaluation=True", "workflow.checkpoint=True",
               "checkpoint.steps_between_checkpoints=4", "model.model_size_bytes=4096", "--no-progress"]


class PhaseMemoryTest(TrainioTest):
    def run_epochs(self, epochs):
        """Peak RSS of a run of `epochs` epochs, and its results folder."""
        out = self.path(f"out-{epochs}")
        peak = self.peak_rss_mib("run", "default", f"dataset.data_folder={self.path(f'data-{epochs}')}",
                                 f"checkpoint.checkpoint_folder={self.path(f'ckpt-{epochs}')}", f"train.epochs={epochs}",
                                 *MANY_PHASES, "-o", out)
        return peak, out

    def test_peak_memory_does_not_grow_with_epochs_and_checkpoints(self):
        small, _ = self.run_epochs(1)
        big, out = self.run_epochs(300)
        # Each epoch's latency histograms and storage-call records, kept until the end of the run,
        # cost about 1 MiB per epoch (305 MiB more over 300 epochs); summarised as each phase
        # ends, an epoch keeps its figures only.
        self.assertLess(big - small, 16, f"peak RSS {small:.0f} MiB at 1 epoch, {big:.0f} MiB at 300")
        s = self.summary(out)
        epochs = s["trainio"]["epochs"]
        self.assertEqual(len(epochs), 300)
        self.assertEqual(len(s["trainio"]["checkpoint"]["checkpoints"]), 300)
        for e in (epochs[0], epochs[-1]):
            for phase in ("train", "eval"):
                waits = e[phase]["batch_wait_seconds"]
                self.assertEqual(waits["count"], 4, (e["epoch"], phase))
                self.assertLessEqual(waits["p50"], waits["p99"])
                self.assertGreater(e[phase]["sample_read_seconds"]["p99"], 0)
        self.assertGreater(epochs[0]["train"]["io"]["read"]["latency_seconds"]["p99"], 0)

    def test_a_small_checkpoint_needs_no_large_buffer(self):
        # The checkpointer's staging buffer is two pieces of the largest write: 64 MiB each for a
        # large model, a page or two for a 4 KiB one (it took 128 MiB whatever the model).
        peak, _ = self.run_epochs(1)
        self.assertLess(peak, 60, f"peak RSS {peak:.0f} MiB for a run with a 4 KiB checkpoint")


@unittest.skipUnless(shutil.which("strace"), "strace is not installed")
class StepCostTest(TrainioTest):
    def test_a_step_reads_no_cpu_times(self):
        # The training loop reads the process's CPU times (getrusage) around each phase and each
        # checkpoint only: it read them after every step (4,098 calls for 4,096 steps), in case a
        # checkpoint had to be taken out of the phase's CPU.
        trace = self.path("getrusage.trace")
        r = self.run_trainio("run", "default", f"dataset.data_folder={self.path('data')}",
                             "dataset.num_samples_per_file=500", *MANY_STEPS, "--no-progress", "-o", self.path("out"),
                             wrapper=[shutil.which("strace"), "-f", "-e", "trace=getrusage", "-o", trace])
        self.assertEqual(r.code, 0, r)
        self.assertEqual(self.read_json("out", "summary.json")["trainio"]["epochs"][0]["train"]["steps_per_rank"], 2000)
        with open(trace) as f:
            calls = sum(1 for line in f if "getrusage(" in line)
        self.assertLess(calls, 20, f"{calls} getrusage calls for 2,000 steps")


class ReadBufferMemoryTest(TrainioTest):
    def test_io_uring_holds_io_depth_buffers_not_a_batch(self):
        # A batch of 128 samples of 1 MiB through io_uring at depth 2: the reader needs 2 buffers
        # of a sample in flight, not one per sample of the batch (128 MiB, touched by the reads).
        data = ["dataset.format=indexed_binary", "dataset.num_files_train=2", "dataset.num_samples_per_file=64",
                "dataset.record_length_bytes=1048576", "dataset.record_length_bytes_stdev=0",
                "dataset.num_files_eval=0", "workflow.evaluation=False", f"dataset.data_folder={self.path('data')}"]
        self.ok("generate", "default", *data, "--no-progress")
        peak = self.peak_rss_mib("run", "default", *data, "workflow.generate_data=False", "reader.access=sample",
                                 "reader.io_engine=io_uring", "reader.io_depth=2", "reader.batch_size=128",
                                 "reader.read_threads=1", "train.computation_time=0", "train.epochs=1",
                                 "--no-progress", "-o", self.path("out"))
        self.assertLess(peak, 64, f"peak RSS {peak:.0f} MiB")
