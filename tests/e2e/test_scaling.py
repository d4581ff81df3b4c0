"""Per-rank memory must not grow with the run's steps (docs/scaling.md): the per-step lists of
DLIO's <rank>_output.json are spilled and streamed, never held whole."""
import os
import resource
import subprocess

from harness import MPI_ENV, TRAINIO, TrainioTest

# A run of many tiny steps: npy files loaded once per worker (read_type: memory), batch 1, no compute.
MANY_STEPS = ["dataset.num_files_train=4", "dataset.record_length_bytes=64", "dataset.record_length_bytes_stdev=0",
              "dataset.format=npy", "reader.read_type=memory", "reader.batch_size=1", "reader.read_threads=1",
              "train.computation_time=0", "train.epochs=1", "workflow.generate_data=True",
              "dataset.num_files_eval=0", "workflow.evaluation=False"]


class StepMemoryTest(TrainioTest):
    def peak_rss_mib(self, steps):
        """Peak RSS of a run of `steps` training steps, and its results folder."""
        out = self.path(f"out-{steps}")
        cmd = [TRAINIO, "run", "default", f"dataset.data_folder={self.path(f'data-{steps}')}",
               f"dataset.num_samples_per_file={steps // 4}", *MANY_STEPS, "--no-progress", "-o", out]
        # Children's peak RSS: the maximum so far over all waited-for children, so the bigger run goes last.
        proc = subprocess.run(cmd, cwd=self.dir, env=dict(os.environ, **MPI_ENV), capture_output=True, text=True,
                              timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, out

    def test_peak_memory_does_not_grow_with_steps(self):
        small, _ = self.peak_rss_mib(1_000)
        big, out = self.peak_rss_mib(200_000)
        # 200,000 steps held as three floats each and rendered through a JSON DOM cost about 70 MiB
        # more than 1,000 steps; spilled and streamed they cost a fixed buffer.
        self.assertLess(big - small, 16, f"peak RSS {small:.0f} MiB at 1,000 steps, {big:.0f} MiB at 200,000")
        lists = self.read_json(out, "0_output.json")["1"]
        for field in ("load", "proc", "compute"):
            self.assertEqual(len(lists[field]["block1"]), 200_000, field)
        first = [lists[f]["block1"][0] for f in ("load", "proc", "compute")]
        self.assertAlmostEqual(first[1], first[0] + first[2], delta=1e-6)  # proc = load + compute
        self.assertFalse([n for n in os.listdir(out) if n.endswith(".trainio-tmp")], "the step spill is removed")
