"""Per-rank memory must not grow with the run's steps (docs/scaling.md): the per-step lists of
DLIO's <rank>_output.json are spilled and streamed, never held whole."""
import os

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
