"""Storage back ends and page-cache control end to end: access sample through pread, mmap and
io_uring; O_DIRECT; read_type memory; eviction before epochs with the storage-side counters; the
time limit; shuffle scope."""
import os
import re

from harness import TrainioTest

MIB = 1 << 20
DATA = ["dataset.data_folder=data", "workflow.generate_data=true", "workflow.evaluation=false",
        "dataset.num_files_train=16", "dataset.num_samples_per_file=2", "dataset.record_length_bytes=1048576",
        "reader.batch_size=2", "train.epochs=2", "train.computation_time=0.001"]


class StorageTest(TrainioTest):
    def epochs(self, *args, ranks=None):
        self.ok("run", "default", *DATA, *args, "--output", "o", ranks=ranks)
        return [e["train"] for e in self.summary("o")["trainio"]["epochs"]]

    def test_access_sample_reads_each_sample_once(self):
        for t in self.epochs("reader.access=sample"):
            self.assertEqual(t["io"]["read"]["count"], 32)
            self.assertEqual(t["bytes_read"], 32 * MIB)
            self.assertEqual(t["sample_bytes"], 32 * MIB)
            self.assertEqual(t["io"]["open"]["count"], 32)

    def test_framework_access_reads_what_numpy_reads(self):
        # np.load reads the whole two-sample file for each sample.
        for t in self.epochs():
            self.assertEqual(t["sample_bytes"], 32 * MIB)
            self.assertGreater(t["bytes_read"], 64 * MIB)

    def test_mmap_touches_the_sample_pages(self):
        for t in self.epochs("reader.access=sample", "reader.io_engine=mmap"):
            self.assertEqual(t["io"]["touch"]["count"], 32)
            self.assertEqual(t["io"]["touch"]["bytes"], 32 * MIB)
            self.assertGreater(t["io"]["mmap"]["count"], 0)

    def test_io_uring_reads_each_sample_once(self):
        for t in self.epochs("reader.access=sample", "reader.io_engine=io_uring", "reader.io_depth=8"):
            self.assertEqual(t["io"]["read"]["count"], 32)
            self.assertEqual(t["bytes_read"], 32 * MIB)

    def test_odirect_reads_aligned_blocks_past_the_cache(self):
        for t in self.epochs("reader.access=sample", "reader.odirect=true"):
            # Each sample starts after the NPZ headers: the aligned reads cover a little more.
            self.assertGreaterEqual(t["bytes_read"], 32 * MIB)
            self.assertLess(t["bytes_read"], 32 * MIB + 32 * 2 * 4096)
            self.assertFalse(t["served_from_page_cache"])
            if t["storage_read_bytes"] is not None:
                self.assertGreaterEqual(t["storage_read_bytes"], 32 * MIB)

    def test_native_reads_land_in_page_aligned_buffers(self):
        # As fio's (iomem=mmap) and a framework's: an O_DIRECT read into memory that is aligned
        # to the file system's 512 bytes but not to a page spans one page more (a 4 KiB sample
        # two pages, two segments for the device: 4 KiB random io_uring reads ran at 0.7 of fio),
        # and a copy from the page cache into unaligned memory is slow on some virtual machines.
        for direct in ("false", "true"):
            trace = self.path(f"pread-{direct}.trace")
            r = self.run_trainio("run", "default", *DATA, "reader.access=sample", f"reader.odirect={direct}",
                                 "train.epochs=1", "--output", f"o-{direct}",
                                 wrapper=["strace", "-f", "-e", "trace=pread64", "-e", "raw=pread64", "-o", trace])
            self.assertEqual(r.code, 0, r)
            with open(trace) as f:
                buffers = [int(m, 16) for m in re.findall(r"pread64\(0x[0-9a-f]+, (0x[0-9a-f]+), 0x10[01][0-9a-f]{3}, ", f.read())]
            self.assertEqual(len(buffers), 32, direct)
            self.assertEqual([b for b in buffers if b % 4096], [], f"odirect={direct}: buffers off a page")

    def test_the_training_loop_polls_for_cached_reads_only(self):
        # One reader on this machine's cores leaves one to spare: the loop polls for batches read
        # from the page cache, and blocks for O_DIRECT ones, whose readers wait on the device
        # (src/engine/load/batch_wait.hpp).
        polling = {}
        for direct in ("false", "true"):
            self.ok("run", "default", *DATA, "reader.access=sample", "reader.read_threads=1", "reader.read_type=memory",
                    "train.computation_time=0", f"reader.odirect={direct}", "--output", f"o-{direct}")
            epochs = self.summary(f"o-{direct}")["trainio"]["epochs"]
            polling[direct] = sum(e["train"]["client_cost"]["cpu_polling_seconds"] for e in epochs)
        if os.cpu_count() >= 2:
            self.assertGreater(polling["false"], 0)
        self.assertEqual(polling["true"], 0)

    def test_read_type_memory_loads_each_file_once_per_worker(self):
        e1, e2 = self.epochs("reader.read_type=memory", "reader.read_threads=1")
        self.assertEqual(e1["io"]["open"]["count"], 16)
        self.assertNotIn("open", e2["io"])  # ops that never happened are left out
        self.assertEqual(e2["bytes_read"], 0)
        self.assertEqual(e2["samples"], 32)

    def test_fadvise_eviction_sends_every_epoch_to_the_device(self):
        hot = self.epochs("reader.access=sample")
        self.ok("run", "default", *DATA, "reader.access=sample", "reader.evict=fadvise", "--output", "cold")
        cold = [e["train"] for e in self.summary("cold")["trainio"]["epochs"]]
        if cold[0]["storage_read_bytes"] is None:
            self.skipTest("/proc/self/io is not readable here")
        for t in hot:
            self.assertTrue(t["served_from_page_cache"])
            self.assertLess(t["storage_read_bytes"], 4 * MIB)
        for t in cold:
            self.assertFalse(t["served_from_page_cache"])
            self.assertGreaterEqual(t["storage_read_bytes"], 31 * MIB)

    def test_time_limit_stops_all_ranks_at_the_same_step(self):
        r = self.run_trainio("run", "default", *DATA, "train.epochs=1000", "train.max_seconds=1",
                             "train.computation_time=0.01", "--output", "o", ranks=2)
        self.assertEqual(r.code, 0, r)
        self.assertLess(r.seconds, 30)
        s = self.summary("o")
        self.assertTrue(s["trainio"]["train"]["stopped_by_time_limit"])
        self.assertIn("max_seconds", r.out)
        epochs = s["trainio"]["epochs"]
        self.assertLess(len(epochs), 1000)
        steps = sum(e["train"]["steps_per_rank"] for e in epochs)
        # Both ranks ran every step (samples also counts batches read ahead when the limit struck).
        self.assertGreaterEqual(s["trainio"]["train"]["samples"], steps * 2 * 2)
        self.assertLessEqual(s["trainio"]["train"]["samples"], (steps + 4) * 2 * 2)

    def test_local_shuffle_scope_runs_across_ranks(self):
        for t in self.epochs("reader.shuffle_scope=local", "reader.sample_shuffle=seed", ranks=2):
            self.assertEqual((t["steps_per_rank"], t["samples"]), (8, 32))
