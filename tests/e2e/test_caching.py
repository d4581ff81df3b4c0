"""Cache tiers end to end (docs/caching.md): exact hit ratios where the answer is deterministic,
staging, cache-aware ordering (every sample once, equal steps, more hits than the uniform
shuffle), the node's ranks sharing one tier, memory bounded by the capacity, copies only under
cache.path, and the configuration errors."""
import glob
import os
import socket
import subprocess
import time

from harness import TrainioTest

FILES = 16
SAMPLE = 256 * 1024
DATA = ["dataset.data_folder=data", "workflow.generate_data=true", "workflow.evaluation=false",
        f"dataset.num_files_train={FILES}", "dataset.num_samples_per_file=1", f"dataset.record_length_bytes={SAMPLE}",
        "reader.batch_size=2", "reader.read_threads=1", "train.epochs=3", "train.computation_time=0"]


def pages(nbytes):
    return (nbytes + 4095) // 4096


class CachingTest(TrainioTest):
    def run_tier(self, *args, out="o", ranks=None):
        self.ok("run", "default", *DATA, *args, "--output", out, ranks=ranks)
        s = self.summary(out)["trainio"]
        return s, [e["train"] for e in s["epochs"]]

    def file_pages(self, memory=True):
        """Pages one generated file takes in the tier (the npz headers make it a little larger than a
        sample); the memory tier adds a page of page numbers per 1,024."""
        self.ok("generate", "default", *DATA)
        sizes = {os.path.getsize(p) for p in glob.glob(self.path("data", "train", "**", "*.npz"), recursive=True)}
        self.assertEqual(len(sizes), 1)
        n = pages(sizes.pop())
        return n + (n + 1023) // 1024 if memory else n

    def test_a_tier_that_holds_the_dataset_serves_every_read_after_the_first_epoch(self):
        for tier in (["cache.tier=local_ssd", "cache.path=tier"], ["cache.tier=memory"]):
            with self.subTest(tier=tier[0]):
                s, epochs = self.run_tier(*tier, "cache.capacity=64MiB", out=tier[0])
                first = epochs[0]["cache"]
                self.assertEqual(first["hit_ratio_samples"], 0.0)
                self.assertEqual(first["fills"], FILES)
                self.assertGreaterEqual(first["backing_read_bytes"], FILES * SAMPLE)
                for e in epochs[1:]:
                    c = e["cache"]
                    self.assertEqual(c["hit_ratio_samples"], 1.0)
                    self.assertEqual(c["hit_ratio_bytes"], 1.0)
                    self.assertEqual(c["backing_read_bytes"], 0)
                    self.assertEqual(c["fills"], 0)
                    self.assertGreaterEqual(c["tier_read_bytes"], FILES * SAMPLE)
                    self.assertEqual(e["samples"], FILES)
                self.assertEqual(s["cache"]["tier"], tier[0].split("=")[1])
                self.assertAlmostEqual(s["cache"]["train"]["hit_ratio_samples"], 2 / 3)
                if tier[0].endswith("local_ssd"):
                    # The tier's folder is gone after the run; cache.path itself is the user's.
                    self.assertEqual(os.listdir(self.path("tier")), [])

    def test_io_uring_batches_read_through_the_tier(self):
        for tier in (["cache.tier=local_ssd", "cache.path=tier"], ["cache.tier=memory"]):
            with self.subTest(tier=tier[0]):
                _, epochs = self.run_tier(*tier, "cache.capacity=64MiB", "reader.access=sample", "reader.io_engine=io_uring",
                                          "reader.io_depth=4", out=tier[0])
                for e in epochs:
                    self.assertEqual(e["samples"], FILES)
                    self.assertEqual(e["sample_bytes"], FILES * SAMPLE)
                for e in epochs[1:]:
                    self.assertEqual(e["cache"]["hit_ratio_samples"], 1.0)
                    self.assertEqual(e["cache"]["backing_read_bytes"], 0)
                    # The local copies are read as the dataset would be: one read per sample.
                    expected = FILES if tier[0].endswith("local_ssd") else 0
                    self.assertEqual(e["io"].get("read", {}).get("count", 0), expected)

    def test_static_at_half_the_dataset_serves_half_the_bytes(self):
        # Room for 8 files and a few pages: not enough for a 9th.
        capacity = (self.file_pages() * (FILES // 2) + 10) * 4096
        _, epochs = self.run_tier("cache.tier=memory", f"cache.capacity={capacity}", "cache.policy=static")
        self.assertEqual(epochs[0]["cache"]["fills"], FILES // 2)
        self.assertEqual(epochs[0]["cache"]["misses_not_admitted"], FILES // 2)
        for e in epochs[1:]:
            self.assertEqual(e["cache"]["hit_ratio_bytes"], 0.5)
            self.assertEqual(e["cache"]["evictions"], 0)
            # Hits make no storage call; each miss is np.load's one open of its file, no more
            # (the full tier opens no backing file in vain).
            self.assertEqual(e["io"]["open"]["count"], FILES // 2)

    def test_staging_fills_the_tier_before_the_first_epoch(self):
        capacity = self.file_pages(memory=False) * (FILES // 2) * 4096
        s, epochs = self.run_tier("cache.tier=local_ssd", "cache.path=tier", f"cache.capacity={capacity}",
                                  "cache.policy=static", "cache.staging=before_first_epoch")
        staged = s["cache"]["staged"]
        self.assertEqual(staged["files"], FILES // 2)
        self.assertGreater(staged["bytes"], FILES // 2 * SAMPLE)
        self.assertGreater(staged["seconds"], 0)
        for e in epochs:
            self.assertEqual(e["cache"]["hit_ratio_samples"], 0.5)

    def test_cache_aware_order_reads_every_sample_once_and_hits_what_is_resident(self):
        capacity = self.file_pages() * (FILES // 2) * 4096
        tier = ["cache.tier=memory", f"cache.capacity={capacity}", "cache.policy=lru", "train.epochs=4"]
        _, uniform = self.run_tier(*tier, "reader.sample_shuffle=seed", out="uniform")
        _, aware = self.run_tier(*tier, "reader.sample_shuffle=cache_aware", out="aware")
        for u, a in zip(uniform, aware):
            self.assertEqual(a["samples"], FILES)
            self.assertEqual(a["steps_per_rank"], u["steps_per_rank"])
            self.assertEqual(a["sample_bytes"], u["sample_bytes"])
            self.assertIsNone(u["cache"]["order"])
        # After the first epoch half the dataset is resident, and the aware order reads it first:
        # every resident file is a hit before any miss can evict it (one reader thread).
        for a in aware[1:]:
            self.assertEqual(a["cache"]["hit_ratio_samples"], 0.5)
            order = a["cache"]["order"]
            self.assertEqual(order["samples"], FILES)
            self.assertGreater(order["kendall_tau_distance"], 0)
            self.assertLess(order["kendall_tau_distance"], 1)
        self.assertEqual(aware[0]["cache"]["order"]["kendall_tau_distance"], 0)  # nothing resident yet
        hits = lambda epochs: sum(e["cache"]["hit_samples"] for e in epochs[1:])
        self.assertGreater(hits(aware), hits(uniform))

    def test_ranks_of_a_node_share_one_tier(self):
        # Two ranks read different samples every epoch (a global shuffle): only a tier they
        # share serves every read of the second epoch.
        _, epochs = self.run_tier("cache.tier=memory", "cache.capacity=64MiB", "reader.sample_shuffle=seed", ranks=2)
        self.assertEqual(epochs[0]["cache"]["fills"], FILES)
        for e in epochs[1:]:
            self.assertEqual(e["cache"]["hit_ratio_samples"], 1.0)
            self.assertEqual(e["cache"]["backing_read_bytes"], 0)
        _, epochs = self.run_tier("cache.tier=local_ssd", "cache.path=tier", "cache.capacity=64MiB",
                                  "reader.sample_shuffle=seed", ranks=2, out="o2")
        for e in epochs[1:]:
            self.assertEqual(e["cache"]["hit_ratio_samples"], 1.0)
        self.assertEqual(os.listdir(self.path("tier")), [])

    def test_copies_stay_under_cache_path_and_keep_files_keeps_them(self):
        self.ok("generate", "default", *DATA)
        before = sorted(os.listdir(self.dir))
        data = sorted(glob.glob(self.path("data", "**"), recursive=True))
        # Staging and on-demand fills both write only under cache.path.
        s, _ = self.run_tier("cache.tier=local_ssd", "cache.path=tier", "cache.capacity=64MiB", "cache.keep_files=true",
                             "cache.staging=before_first_epoch", "cache.policy=fifo")
        self.assertEqual(s["cache"]["staged"]["files"], FILES)
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(before + ["o", "tier"]))
        self.assertEqual(sorted(glob.glob(self.path("data", "**"), recursive=True)), data)
        folder = self.path("tier", "trainio-tier." + socket.gethostname())
        copies = [n for n in os.listdir(folder) if not n.startswith(".")]
        self.assertEqual(len(copies), FILES)
        self.assertTrue(all(n.endswith(".npz") for n in copies))
        # A later run starts from an empty tier (it clears what trainio left), then removes it.
        _, epochs = self.run_tier("cache.tier=local_ssd", "cache.path=tier", "cache.capacity=64MiB", out="o2")
        self.assertEqual(epochs[0]["cache"]["hit_ratio_samples"], 0.0)
        self.assertFalse(os.path.exists(folder))

    def test_a_folder_trainio_did_not_make_is_left_alone(self):
        folder = self.path("tier", "trainio-tier." + socket.gethostname())
        os.makedirs(folder)
        with open(os.path.join(folder, "precious"), "w") as f:
            f.write("x")
        r = self.run_trainio("run", "default", *DATA, "cache.tier=local_ssd", "cache.path=tier", "cache.capacity=64MiB")
        self.assertEqual(r.code, 2, r)
        self.assertIn("trainio did not make", r.err)
        self.assertEqual(os.listdir(folder), ["precious"])

    def test_reads_of_the_local_copies_get_their_own_page_cache_verdict(self):
        tier = ["cache.tier=local_ssd", "cache.path=tier", "cache.capacity=64MiB"]
        _, hot = self.run_tier(*tier, out="hot")
        _, evicted = self.run_tier(*tier, "reader.evict=fadvise", out="evicted")
        for e in hot[1:]:
            self.assertEqual(e["cache"]["tier_page_cache"]["verdict"], "page_cache", e["cache"]["tier_page_cache"])
        # reader.evict empties the copies' page cache as it does the dataset's: the tier's drive serves them.
        for e in evicted[1:]:
            pc = e["cache"]["tier_page_cache"]
            self.assertGreater(pc["probes"], 0)
            self.assertIn(pc["verdict"], ("storage", "mixed"), pc)
            self.assertLess(pc["resident_fraction"], 0.5, pc)

    def test_a_second_run_on_the_same_tier_folder_is_refused(self):
        self.ok("generate", "default", *DATA)
        tier = ["cache.tier=local_ssd", "cache.path=tier", "cache.capacity=64MiB"]
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        first = subprocess.Popen([os.environ["TRAINIO"], "run", "default", *DATA, *tier, "train.computation_time=0.25",
                                  "--output", "first"], cwd=self.dir, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        folder = self.path("tier", "trainio-tier." + socket.gethostname())
        for _ in range(200):
            if os.path.exists(os.path.join(folder, ".trainio-tier")):
                break
            time.sleep(0.05)
        r = self.run_trainio("run", "default", *DATA, *tier, "--output", "second")
        _, err = first.communicate(timeout=120)
        self.assertEqual(first.returncode, 0, err)
        self.assertEqual(r.code, 2, r)
        self.assertIn("another trainio run on this node is using the cache tier", r.err)
        self.assertFalse(os.path.exists(folder))  # the first run removed its tier when it ended

    def test_a_failed_run_removes_its_copies(self):
        self.ok("generate", "default", *DATA)
        victim = sorted(glob.glob(self.path("data", "train", "**", "*.npz"), recursive=True))[5]
        with open(victim, "r+b") as f:
            f.truncate(1000)
        r = self.run_trainio("run", "default", *DATA, "workflow.generate_data=false", "cache.tier=local_ssd",
                             "cache.path=tier", "cache.capacity=64MiB")
        self.assertEqual(r.code, 1, r)
        self.assertNotIn("Traceback", r.err)
        self.assertIn("the cache tier's copy of " + os.path.relpath(victim, self.dir), r.err)
        self.assertEqual(os.listdir(self.path("tier")), [])

    def test_memory_stays_within_the_capacity(self):
        # 64 MiB of data through a 16 MiB memory tier: the run's peak grows by the tier, not the data.
        big = ["dataset.data_folder=data", "workflow.evaluation=false", "dataset.num_files_train=64",
               "dataset.record_length_bytes=1048576", "reader.batch_size=4", "train.epochs=2", "train.computation_time=0"]
        self.ok("generate", "default", *big)
        plain = self.peak_rss_mib("run", "default", *big, "--output", "plain")
        tiered = self.peak_rss_mib("run", "default", *big, "cache.tier=memory", "cache.capacity=16MiB", "--output", "tiered")
        self.assertLess(tiered, plain + 16 + 8, (plain, tiered))
        self.assertGreater(tiered, plain + 8, (plain, tiered))  # the tier's pages were really used

    def test_compare_shows_the_tier_against_no_tier(self):
        self.run_tier(out="none")
        self.run_tier("cache.tier=memory", "cache.capacity=64MiB", out="tier")
        # Exit 1 when some figure regressed (a few milliseconds of tiny epochs are noise here).
        r = self.run_trainio("compare", self.path("none"), self.path("tier"))
        self.assertIn(r.code, (0, 1), r)
        rows = {line.split()[0]: line for line in r.out.splitlines() if line.strip()}
        self.assertIn("improved", rows["backing_read_bytes_per_epoch"])  # 1 epoch in 3 reads the storage
        self.assertIn("improved", rows["cache_hit_ratio_bytes"])  # from 0 without a tier

    def test_configuration_errors(self):
        cases = [
            (["cache.tier=local_ssd", "cache.capacity=1GiB"], "cache.path is not set"),
            (["cache.tier=memory"], "cache.capacity"),
            (["reader.sample_shuffle=cache_aware"], "cache.tier is none"),
            (["cache.tier=local_ssd", "cache.path=data/tier", "cache.capacity=1GiB"], "overlap"),
            (["cache.tier=memory", "cache.capacity=1GiB", "reader.read_type=memory"], "read_type"),
            (["cache.tier=memory", "cache.capacity=1GiB", "framework=tensorflow", "reader.data_loader=tensorflow",
              "dataset.format=tfrecord"], "tensorflow loader"),
            (["cache.tier=disk"], "cache.tier"),
            (["cache.tier=local_ssd", "cache.path=tier", "cache.capacity=1GiB", "reader.access=sample",
              "reader.io_engine=mmap"], "mmap"),
            (["cache.tier=local_ssd", "cache.path=tier", "cache.capacity=100000TiB"], "free under cache.path"),
            (["cache.tier=memory", "cache.capacity=100000TiB"], "/dev/shm"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                r = self.run_trainio("run", "default", *DATA, *args)
                self.assertEqual(r.code, 2, r)
                self.assertIn(message, r.err)
                self.assertNotIn("Traceback", r.err)
                self.assertEqual(os.listdir(self.path("tier")) if os.path.isdir(self.path("tier")) else [], [])
