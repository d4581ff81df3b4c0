"""Checkpoints end to end: the files each rank writes for a parallel layout, their bytes as PyTorch
writes them (torch.load reads them; re-saving gives the same bytes), reading back after the page
cache is emptied, training-mode triggers, bounded memory and a full disk."""
import glob
import io
import os
import resource
import subprocess
import time
import unittest

from harness import TrainioTest

PYTHON = "/usr/bin/python3"
HAVE_TORCH = subprocess.run([PYTHON, "-c", "import torch"], capture_output=True).returncode == 0

# h 512, 8 heads with 2 kv heads (kv 128), ffn 1024, vocab 1000, 2 layers: per layer
# 512 + 512 x 768 + 512^2 + 512 + 3 x 1024 x 512 = 2,229,248; in all 2 x 512,000 + 2 x 2,229,248
# + 512 = 5,483,008 parameters.
TINY = ["model.type=transformer", "model.num_layers=2", "model.transformer.hidden_size=512",
        "model.transformer.num_attention_heads=8", "model.transformer.num_kv_heads=2",
        "model.transformer.ffn_hidden_size=1024", "model.transformer.vocab_size=1000", "framework=pytorch",
        "workflow.train=false", "workflow.generate_data=false", "workflow.checkpoint=true",
        "checkpoint.checkpoint_folder=ckpt", "checkpoint.time_between_checkpoints=0"]
PARAMETERS = 5483008

# Re-saves what torch.load read with DLIO's key objects (str(i) is a new string each time) and
# says whether the bytes are the file's.
RESAVE = r"""
import io, sys, torch
def fresh(d):
    return {(str(int(k)) if k.isdigit() else k): (fresh(v) if isinstance(v, dict) else v) for k, v in d.items()}
def describe(d):
    return {k: describe(v) if isinstance(v, dict) else [str(v.dtype), v.numel()] for k, v in d.items()}
import json
out = {}
for path in sys.argv[1:]:
    state = torch.load(path)
    b = io.BytesIO()
    torch.save(fresh(state), b)
    out[path] = {"identical": b.getvalue() == open(path, "rb").read(), "state": describe(state)}
print(json.dumps(out))
"""


class CheckpointTest(TrainioTest):
    def files(self, folder="ckpt/global_epoch1_step1"):
        return sorted(os.path.basename(f) for f in glob.glob(self.path(folder, "*")))

    def test_zero3_checkpoint_only_run_writes_reads_and_reports(self):
        r = self.ok("run", "default", *TINY, "model.parallelism.zero_stage=3", "checkpoint.num_checkpoints_write=2",
                    "checkpoint.num_checkpoints_read=2", "checkpoint.fsync=true", "--output", "o", ranks=2)
        self.assertIn("checkpoint save 2/2 (global_epoch1_step2)", r.out)
        self.assertIn("checkpoint load 2/2", r.out)
        self.assertEqual(self.files(), ["zero_pp_rank_0_mp_rank_0_model_states.pt", "zero_pp_rank_0_mp_rank_0_optim_states.pt",
                                        "zero_pp_rank_1_mp_rank_0_model_states.pt", "zero_pp_rank_1_mp_rank_0_optim_states.pt"])
        self.assertEqual(self.files("ckpt/global_epoch1_step2"), self.files())
        self.assertFalse(glob.glob(self.path("ckpt", "*", ".*")))  # no temporary files left
        s = self.summary("o")
        m = s["metric"]
        # fp16 model + fp32 optimizer (3 x P/2 + 15 h per rank).
        size = 2 * PARAMETERS + 2 * 4 * (3 * (PARAMETERS // 2) + 15 * 512)
        self.assertAlmostEqual(m["checkpoint_size_GB"], size / 2**30, places=9)
        for key in ("save_checkpoint_io_mean_GB_per_second", "save_checkpoint_duration_mean_seconds",
                    "load_checkpoint_io_mean_GB_per_second", "load_checkpoint_duration_mean_seconds"):
            self.assertGreater(m[key], 0, key)
        c = s["trainio"]["checkpoint"]
        self.assertEqual((c["parameters"], c["data"], c["writing_ranks"], c["tensor_bytes"]), (PARAMETERS, 2, 2, size))
        kinds = [(x["kind"], x["index"]) for x in c["checkpoints"]]
        self.assertEqual(kinds, [("save", 1), ("save", 2), ("load", 1), ("load", 2)])
        for x in c["checkpoints"]:
            self.assertEqual(x["files"], 4)
            self.assertEqual(x["tensor_bytes"], size)
            self.assertGreaterEqual(x["duration_seconds"], x["fastest_rank_seconds"])
            if x["kind"] == "save":
                self.assertEqual(x["io"]["fsync"]["count"], 4)
                self.assertEqual(x["io"]["rename"]["count"], 4)
            else:
                # The writes were evicted from the page cache: the loads came from storage.
                if x["storage_read_bytes"] is not None:
                    self.assertGreaterEqual(x["storage_read_bytes"], 0.9 * size)

    def test_four_ranks_with_tensor_and_pipeline_parallelism(self):
        self.ok("run", "default", *TINY, "model.parallelism.tensor=2", "model.parallelism.pipeline=2",
                "model.parallelism.zero_stage=1", "checkpoint.num_checkpoints_write=1", "checkpoint.num_checkpoints_read=1",
                "--output", "o", ranks=4)
        files = self.files()
        # Stage 0 (mp 0, 1) holds layers 0-1, stage 1 (mp 2, 3) layers 2-4; one optimizer shard each.
        expected = [f"layer_{l}-model_{mp}_model_states.pt" for mp in (0, 1) for l in (0, 1)]
        expected += [f"layer_{l}-model_{mp}_model_states.pt" for mp in (2, 3) for l in (2, 3, 4)]
        expected += [f"zero_pp_rank_0_mp_rank_{mp}_optim_states.pt" for mp in range(4)]
        self.assertEqual(files, sorted(expected))
        c = self.summary("o")["trainio"]["checkpoint"]["checkpoints"]
        self.assertEqual([x["files"] for x in c], [14, 14])

    @unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed")
    def test_files_are_what_torch_save_writes(self):
        for randomize in ("true", "false"):
            folder = f"c{randomize}"
            self.ok("run", "default", *TINY, f"checkpoint.checkpoint_folder={folder}", "model.parallelism.zero_stage=1",
                    "model.parallelism.pipeline=2", f"checkpoint.randomize_tensor={randomize}",
                    "checkpoint.num_checkpoints_write=1", "--output", f"o{randomize}", ranks=2)
            paths = sorted(glob.glob(self.path(folder, "global_epoch1_step1", "*.pt")))
            self.assertEqual([os.path.basename(p) for p in paths],
                             ["layer_0-model_0_model_states.pt", "layer_1-model_0_model_states.pt",
                              "layer_2-model_1_model_states.pt", "layer_3-model_1_model_states.pt",
                              "layer_4-model_1_model_states.pt", "zero_pp_rank_0_mp_rank_0_optim_states.pt",
                              "zero_pp_rank_0_mp_rank_1_optim_states.pt"])
            import json
            result = json.loads(subprocess.run([PYTHON, "-c", RESAVE, *paths], capture_output=True, text=True,
                                               check=True).stdout)
            for path, r in result.items():
                self.assertTrue(r["identical"], path)
            layer1 = result[paths[1]]["state"]
            self.assertEqual(layer1, {"0": ["torch.float16", 512], "1": ["torch.float16", 512 * 768],
                                      "2": ["torch.float16", 512 * 512], "3": ["torch.float16", 512],
                                      "4": ["torch.float16", 2 * 1024 * 512], "5": ["torch.float16", 1024 * 512]})
            optim = result[paths[5]]["state"]
            self.assertEqual(optim["0"], ["torch.float32", PARAMETERS // 2])
            self.assertEqual(optim["1"], ["torch.float32", 5 * 512])

    @unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed")
    def test_odirect_writes_the_same_bytes(self):
        self.ok("run", "default", *TINY, "checkpoint.odirect=true", "checkpoint.num_checkpoints_write=1",
                "checkpoint.num_checkpoints_read=1", "--output", "o")
        paths = sorted(glob.glob(self.path("ckpt", "global_epoch1_step1", "*.pt")))
        self.assertEqual(len(paths), 2)
        import json
        result = json.loads(subprocess.run([PYTHON, "-c", RESAVE, *paths], capture_output=True, text=True,
                                           check=True).stdout)
        self.assertTrue(all(r["identical"] for r in result.values()))
        save = self.summary("o")["trainio"]["checkpoint"]["checkpoints"][0]
        self.assertEqual(save["io"]["fcntl"]["count"], 2)  # O_DIRECT cleared for each file's tail

    def test_checkpoints_during_training_are_kept_out_of_the_au(self):
        r = self.ok("run", "default", "dataset.data_folder=data", "dataset.num_files_train=16", "dataset.num_files_eval=0",
                    "workflow.evaluation=false", "reader.batch_size=2", "train.epochs=2", "train.computation_time=0.01",
                    "workflow.checkpoint=true", "checkpoint.checkpoint_folder=ck", "checkpoint.steps_between_checkpoints=3",
                    "model.model_size_bytes=67108864", "--output", "o")
        self.assertIn("checkpoint save 1 (global_epoch1_step3)", r.out)
        s = self.summary("o")
        steps = [(x["epoch"], x["step"]) for x in s["trainio"]["checkpoint"]["checkpoints"]]
        self.assertEqual(steps, [(1, 3), (1, 6), (2, 3), (2, 6)])  # 8 steps per epoch, counted in each (DLIO)
        self.assertEqual(self.files("ck/global_epoch2_step6"), ["model_states-0.pt"])
        self.assertGreater(s["metric"]["train_au_mean_percentage"], 80)

    def test_epoch_checkpoints_follow_checkpoint_after_epoch(self):
        self.ok("run", "default", "dataset.data_folder=data", "dataset.num_files_train=8", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "reader.batch_size=2", "train.epochs=4", "train.computation_time=0",
                "workflow.checkpoint=true", "checkpoint.checkpoint_folder=ck", "checkpoint.checkpoint_after_epoch=2",
                "checkpoint.epochs_between_checkpoints=2", "--output", "o")
        folders = [x["folder"] for x in self.summary("o")["trainio"]["checkpoint"]["checkpoints"]]
        self.assertEqual(folders, ["global_epoch2_step4", "global_epoch4_step4"])  # the epoch's last step

    def test_memory_stays_bounded_for_a_2_gib_shard(self):
        out = self.path("rss")
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        self.ok("run", "default", "workflow.train=false", "workflow.checkpoint=true", "checkpoint.checkpoint_folder=big",
                "checkpoint.num_checkpoints_write=1", "checkpoint.num_checkpoints_read=1",
                "model.model_size_bytes=2147483648", "--output", out)
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        self.assertGreater(os.path.getsize(self.path("big", "global_epoch1_step1", "model_states-0.pt")), 2**31)
        if before / 1024 < 256:  # earlier children did not already exceed the bound
            self.assertLess(peak_mib, 256)

    def test_the_read_job_of_a_failover_reports_its_gap_and_its_time_to_first_read(self):
        # MLPerf's failover: the write phase as one job, the read phase as another, within 30 s.
        zero3 = ["model.parallelism.zero_stage=3"]
        self.ok("run", "default", *TINY, *zero3, "checkpoint.num_checkpoints_write=1", "--output", "w", ranks=2)
        between = time.monotonic()
        r = self.ok("run", "default", *TINY, *zero3, "checkpoint.num_checkpoints_read=1", "--resume-from", "w",
                    "--output", "o", ranks=2)
        after = time.monotonic() - between
        written = self.summary("w")
        s = self.summary("o")["trainio"]["startup"]
        f = s["failover"]
        self.assertEqual(f["previous_results"], "w")
        self.assertEqual(f["previous_end"], written["end"])
        # From the write job's end to the read job's first rank's start: the gap this test left
        # between the two commands (its own start-up included), never more than the second took.
        self.assertGreater(f["gap_seconds"], 0)
        self.assertLess(f["gap_seconds"], after)
        self.assertTrue(f["within_limit"])
        self.assertEqual(f["limit_seconds"], 30)
        first = s["first_checkpoint_read_seconds"]
        self.assertGreater(first["min"], 0)
        self.assertGreaterEqual(first["max"], first["min"])
        self.assertLess(first["max"], after)
        self.assertIn(first["slowest_rank"], (0, 1))
        self.assertEqual(first["ranks"], 2)  # ZeRO-3: every rank holds a shard
        self.assertRegex(r.out, r"process start to first checkpoint read: \d+\.\d{3} s \(slowest rank \d")
        self.assertRegex(r.out, r"failover: started \d+\.\d s after the write job ended \(within; MLPerf allows 30 s\)")
        self.assertIsNone(self.summary("w")["trainio"]["startup"]["failover"])

    def test_resume_from_must_name_a_run_that_saved_checkpoints(self):
        for folder, why in (("nowhere", "nowhere"), ("o", "not a run that saved checkpoints")):
            if folder == "o":
                self.ok("run", "default", *TINY, "checkpoint.num_checkpoints_write=1", "--output", "o")
                self.ok("run", "default", *TINY, "checkpoint.num_checkpoints_read=1", "--output", "o2")
                folder = "o2"
            r = self.run_trainio("run", "default", *TINY, "checkpoint.num_checkpoints_read=1", "--resume-from", folder,
                                 "--output", "r")
            self.assertEqual(r.code, 2, r)
            self.assertIn(why, r.err)
            self.assertFalse(os.path.exists(self.path("r")))
        r = self.run_trainio("run", "default", *TINY, "checkpoint.num_checkpoints_write=1", "--resume-from", "o",
                             "--output", "r")
        self.assertEqual(r.code, 2, r)
        self.assertIn("checkpoint-only run that reads checkpoints", r.err)

    def test_a_layout_that_does_not_fit_the_ranks_is_refused_before_any_io(self):
        r = self.run_trainio("run", "default", *TINY, "model.parallelism.tensor=4", "checkpoint.num_checkpoints_write=1",
                             "--output", "o", ranks=2)
        self.assertEqual(r.code, 2, r)
        self.assertIn("2 ranks are not a multiple of tensor x pipeline parallelism", r.err)
        self.assertFalse(os.path.exists(self.path("ckpt")))

    def test_reading_checkpoints_that_were_never_written_names_the_file(self):
        r = self.run_trainio("run", "default", *TINY, "checkpoint.num_checkpoints_read=1", "--output", "o")
        self.assertEqual(r.code, 1, r)
        self.assertIn("zero_pp_rank_0_mp_rank_0_model_states.pt' is missing", r.err)

    def test_a_full_disk_mid_checkpoint_leaves_nothing_behind(self):
        mount = self.tmpfs("small", "size=24m")
        r = self.run_trainio("run", "default", *TINY, f"checkpoint.checkpoint_folder={mount}/ck",
                             "model.parallelism.zero_stage=3", "checkpoint.num_checkpoints_write=2",
                             "--output", "o", ranks=2)
        self.assertEqual(r.code, 1, r)
        self.assertIn("No space left on device", r.err)
        self.assertIn("rank", r.err)
        self.assertEqual(r.err.count("No space left"), 1)  # one message, from the failing rank
        left = [f for f in glob.glob(os.path.join(mount, "ck", "**"), recursive=True) if os.path.isfile(f)]
        self.assertEqual(left, [])
