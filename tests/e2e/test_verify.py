"""`trainio verify`: a run's figures recomputed from its own records. A clean run verifies; a
figure edited in summary.json, a CSV cell, a per-rank file or a record cut short or removed fails,
naming it; a folder that is no run is a usage error. (Every run the other tests make is verified
too, by the harness.)"""
import json
import os
import shutil

from harness import TrainioTest

RUN = ["dataset.data_folder=data", "dataset.num_files_train=16", "dataset.num_files_eval=8",
       "dataset.record_length_bytes=4096", "reader.batch_size=2", "train.epochs=2", "train.computation_time=0.001",
       "evaluation.eval_time=0.001", "workflow.checkpoint=true", "checkpoint.checkpoint_folder=ck",
       "checkpoint.steps_between_checkpoints=3", "model.model_size_bytes=65536", "--no-progress"]


class VerifyTest(TrainioTest):
    def run_once(self):
        """A 2-rank run with training, evaluation, checkpoints and generation, copied per test."""
        self.ok("run", "default", *RUN, "workflow.generate_data=true", "--output", "run", ranks=2)
        return "run"

    def copy(self, name):
        shutil.copytree(self.path("run"), self.path(name))
        self.unverified.add(name)  # changed on purpose below
        return name

    def verify(self, *args):
        return self.run_trainio("verify", *args)

    def test_a_clean_run_verifies_figure_by_figure(self):
        self.run_once()
        r = self.verify("run")
        self.assertEqual(r.code, 0, r)
        self.assertIn("OK       metric.train_au_mean_percentage: reported", r.out)
        self.assertIn("metric.save_checkpoint_io_mean_GB_per_second", r.out)
        self.assertIn("trainio.generate.write_bytes_per_second", r.out)
        self.assertRegex(r.out, r"\d+ figures recomputed from the records: all agree")
        every = self.verify("run", "--all")
        self.assertEqual(every.code, 0, every)
        self.assertGreater(every.out.count("\n  OK "), 500)
        self.assertIn("per_rank.csv epoch 2 eval rank 1: au_percentage", every.out)
        self.assertIn("rank 1 1_output.json epoch 1 au.block1", every.out)

    def test_a_figure_edited_by_2_percent_fails_naming_it(self):
        self.run_once()
        for path, figure in ((["metric", "train_au_mean_percentage"], "metric.train_au_mean_percentage"),
                             (["trainio", "epochs", 1, "eval", "sample_read_seconds", "p99"],
                              "trainio.epochs.1.eval.sample_read_seconds.p99"),
                             (["trainio", "checkpoint", "checkpoints", 0, "bytes_per_second"],
                              "trainio.checkpoint.checkpoints.0.bytes_per_second")):
            folder = self.copy(f"edited-{figure}")
            s = self.read_json(folder, "summary.json")
            node = s
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] *= 1.02
            self.write_json(s, folder, "summary.json")
            r = self.verify(folder)
            self.assertEqual(r.code, 1, r)
            bad = [line for line in r.out.splitlines() if "MISMATCH" in line]
            self.assertEqual(len(bad), 1, r.out)
            self.assertIn(f"MISMATCH {figure}: reported", bad[0])

    def test_a_csv_cell_or_a_ranks_file_edited_fails_naming_it(self):
        self.run_once()
        folder = self.copy("csv")
        with open(self.path(folder, "per_rank.csv")) as f:
            lines = f.read().splitlines()
        cells = lines[2].split(",")
        cells[5] = str(int(cells[5]) + 2)  # samples of epoch 1, train, rank 1
        lines[2] = ",".join(cells)
        with open(self.path(folder, "per_rank.csv"), "w") as f:
            f.write("\n".join(lines) + "\n")
        r = self.verify(folder)
        self.assertEqual(r.code, 1, r)
        self.assertIn("MISMATCH per_rank.csv epoch 1 train rank 1: samples", r.out)
        folder = self.copy("stats")
        stats = self.read_json(folder, "1_per_epoch_stats.json")
        stats["1"]["save_ckpt1"]["duration"] *= 1.5
        self.write_json(stats, folder, "1_per_epoch_stats.json")
        r = self.verify(folder)
        self.assertEqual(r.code, 1, r)
        self.assertIn("MISMATCH rank 1 1_per_epoch_stats.json epoch 1 save_ckpt1.duration", r.out)

    def test_a_record_cut_short_or_removed_fails_naming_it(self):
        self.run_once()
        cut = self.copy("cut")
        with open(self.path(cut, "1_records.jsonl")) as f:
            lines = f.read().splitlines()
        with open(self.path(cut, "1_records.jsonl"), "w") as f:
            f.write("\n".join(lines[:-2]) + "\n")
        r = self.verify(cut)
        self.assertEqual(r.code, 1, r)
        self.assertIn("1_records.jsonl", r.out)
        self.assertIn("cut short", r.out)
        damaged = self.copy("damaged")
        with open(self.path(damaged, "0_records.jsonl"), "r+") as f:
            f.write("[")  # the first line's opening brace
        r = self.verify(damaged)
        self.assertEqual(r.code, 1, r)
        self.assertIn("0_records.jsonl' are damaged at line 1", r.out)
        for name in ("0_records.jsonl", "1_output.json"):
            gone = self.copy(f"without-{name}")
            os.remove(self.path(gone, name))
            r = self.verify(gone)
            self.assertEqual(r.code, 1, r)
            self.assertIn(name, r.out)
            self.assertIn("missing", r.out)

    def test_a_folder_that_is_no_run_is_a_usage_error(self):
        os.makedirs(self.path("empty"))
        r = self.verify("empty")
        self.assertEqual(r.code, 2, r)
        self.assertIn("no run", r.err)
        self.write_json({"metric": {}}, "empty", "summary.json")  # DLIO's shape: no records to verify against
        r = self.verify("empty")
        self.assertEqual(r.code, 2, r)
        self.assertIn("not a trainio summary", r.err)
        self.unverified.add("empty")

    def test_a_set_and_its_aggregate_verify(self):
        for i in (1, 2):
            self.ok("run", "default", *RUN, f"workflow.generate_data={'true' if i == 1 else 'false'}",
                    "--output", f"set/run{i}")
        self.ok("report", "set")
        r = self.verify("set")
        self.assertEqual(r.code, 0, r)
        self.assertIn("aggregate.json.figures.train_au_mean_percentage.mean", r.out)
        self.assertIn("2 runs and 1 aggregate: every figure agrees", r.out)
        a = self.read_json("set", "aggregate.json")
        a["figures"]["train_throughput_mean_samples_per_second"]["mean"] *= 1.02
        self.write_json(a, "set", "aggregate-2.json")
        self.unverified.add("set/aggregate-2.json")
        r = self.verify(self.path("set", "aggregate-2.json"))
        self.assertEqual(r.code, 1, r)
        self.assertIn("MISMATCH aggregate-2.json.figures.train_throughput_mean_samples_per_second.mean", r.out)
