"""The emulated accelerator's compute lasts what the workload says (docs/metrics.md, "How long compute
lasts"). It measures time, so CMake runs this file alone (RUN_SERIAL): beside a full test suite a
wake-up can wait for another process's time slice."""
from harness import TrainioTest

SMALL = ["dataset.data_folder=data", "dataset.num_files_eval=6", "evaluation.eval_time=0.001", "train.epochs=2"]


class ComputeTimeTest(TrainioTest):
    def test_emulated_compute_lasts_what_the_workload_says(self):
        # DLRM's 375 us step: a plain sleep wakes late by the timer slack and the wake-up latency
        # (114 us on the development VM, 30% of the step), which would lengthen every step and
        # raise AU. With a core for the training loop (one reader thread on two cores) the
        # median step's compute must be the workload's to within 5%, the total within 20% (a
        # loaded machine delays some wake-ups by a scheduler slice: 1.01-1.11 beside two busy loops).
        compute = 0.000375
        self.ok("run", "default", *SMALL, "dataset.num_files_train=400", "dataset.record_length_bytes=4096",
                "reader.batch_size=1", "reader.read_threads=1", f"train.computation_time={compute}", "--output", "o")
        summary = self.summary("o")
        evidence = summary["trainio"]["train"]["client_capacity"]["evidence"]
        steps = evidence["steps_per_rank"]
        self.assertGreaterEqual(steps, 300)
        self.assertLess(evidence["compute_seconds"] / (steps * compute), 1.20, evidence)
        self.assertGreaterEqual(evidence["compute_seconds"] / (steps * compute), 0.999, evidence)
        median = summary["trainio"]["epochs"][0]["train"]["compute_seconds"]["p50"]
        self.assertLess(abs(median / compute - 1), 0.05, median)
