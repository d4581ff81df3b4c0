"""Runs across MPI ranks: counts add up, every rank runs the same steps, and a failure on one rank
ends the whole job quickly with one message."""
import glob
import os
import shutil
import unittest

from harness import TrainioTest

SMALL = ["dataset.data_folder=data", "dataset.num_files_train=25", "dataset.num_files_eval=7",
         "dataset.record_length_bytes=4096", "train.computation_time=0.002", "evaluation.eval_time=0.001",
         "train.epochs=2", "reader.batch_size=4"]


class MpiTest(TrainioTest):
    def check_counts(self, ranks):
        self.ok("run", "default", *SMALL, "--output", "o", ranks=ranks)
        s = self.summary("o")
        self.assertEqual(s["num_accelerators"], ranks)
        t = s["trainio"]
        steps = 25 // (4 * ranks)
        self.assertEqual(t["plan"]["train_steps_per_epoch_per_rank"], steps)
        self.assertEqual(t["plan"]["train_samples_dropped_per_epoch"], 25 - steps * 4 * ranks)
        for e in t["epochs"]:
            self.assertEqual(e["train"]["steps_per_rank"], steps)
            self.assertEqual(e["train"]["samples"], steps * 4 * ranks)
            self.assertEqual(e["train"]["io"]["open"]["count"], steps * 4 * ranks)
            self.assertEqual(e["eval"]["samples"], 7 // ranks * ranks)
        self.assertEqual(len(s["metric"]["train_throughput_samples_per_second"]), 2)
        # All files were generated, shared out across the ranks.
        self.assertEqual(len(glob.glob(self.path("data/train/*/*.npz"))), 25)
        self.assertEqual(t["generate"]["files_written"], 32)

    def test_two_ranks(self):
        self.check_counts(2)

    def test_three_ranks(self):
        self.check_counts(3)

    @unittest.skipUnless(shutil.which("strace"), "strace is needed to see what a start loads")
    def test_a_start_loads_only_the_mpi_components_it_uses(self):
        # Whether Open MPI yields when idle was read through MPI's tool interface (MPI_T), which
        # opens every component Open MPI has (checkpoint compressors, every transport, libfabric):
        # 0.2-0.7 s of every start here. A start opens only what MPI_Init itself needs.
        trace = self.path("trace")
        self.ok("run", "default", *SMALL, "train.epochs=1", "--output", "o", ranks=2,
                wrapper=["strace", "-f", "-qq", "-e", "trace=openat", "-o", trace, "-ff"])
        opened = "".join(open(f).read() for f in glob.glob(trace + ".*"))
        self.assertIn("mca_btl_vader", opened)  # what the job uses: seen, so the trace is complete
        self.assertEqual([u for u in ("mca_compress_", "mca_crs_", "mca_mtl_", "libfabric") if u in opened], [])

    @unittest.skipIf((os.cpu_count() or 1) < 2, "binding can only narrow a rank's cores on a machine with several")
    def test_a_binding_narrower_than_the_reader_threads_is_warned_about(self):
        # OpenMPI binds each of 2 ranks to one core: 2 reader threads would share it.
        bound = self.ok("run", "default", *SMALL, "reader.read_threads=2", "--output", "b", ranks=2,
                        env={"OMPI_MCA_hwloc_base_binding_policy": "core"})
        self.assertIn("may run on only 1 core (its CPU binding) but runs 2 reader threads", bound.err)
        self.assertEqual(self.summary("b")["trainio"]["context"]["cores_per_rank"], [1, 1])
        free = self.ok("run", "default", *SMALL, "reader.read_threads=2", "--output", "f", ranks=2,
                       env={"OMPI_MCA_hwloc_base_binding_policy": "none"})
        self.assertNotIn("CPU binding", free.err)

    @unittest.skipIf((os.cpu_count() or 1) < 2, "binding can only narrow a rank's cores on a machine with several")
    def test_ranks_bound_together_to_too_few_cores_are_warned_about(self):
        # Both ranks bound to the same one CPU (as --bind-to socket binds every rank of a socket
        # to all of it): each binding holds the reader thread, but the two ranks share one core.
        r = self.ok("run", "default", *SMALL, "reader.read_threads=1", "--output", "s", ranks=2,
                    env={"OMPI_MCA_hwloc_base_binding_policy": "none"}, wrapper=["taskset", "-c", "0"])
        self.assertIn("may run on only 0.5 cores (its CPU binding, shared by 2 ranks) but runs 1 reader thread", r.err)

    def test_unet3d_acceptance_command(self):
        r = self.ok("run", "workload=unet3d_h100", "++workload.dataset.num_files_train=16",
                    "++workload.dataset.record_length_bytes=1048576", "++workload.dataset.record_length_bytes_stdev=0",
                    "++workload.train.computation_time=0.01", "++workload.workflow.generate_data=True",
                    "++workload.dataset.data_folder=data", "--output", "o", ranks=2)
        s = self.summary("o")
        self.assertEqual(s["epochs"], 5)
        self.assertEqual(s["trainio"]["plan"]["train_steps_per_epoch_per_rank"], 1)
        self.assertIn("AU", r.out)

    def test_a_failing_rank_stops_the_job_quickly_with_one_message(self):
        self.ok("generate", "default", *SMALL, "dataset.num_subfolders_train=0", ranks=2)
        # Without shuffling rank 1 reads the odd positions: file 1 is its first sample.
        os.truncate(self.path("data/train/img_01_of_25.npz"), 1000)
        r = self.run_trainio("run", "default", *SMALL, "dataset.num_subfolders_train=0", "workflow.generate_data=false",
                             "reader.file_shuffle=off", "reader.sample_shuffle=off", "train.computation_time=0.2",
                             "--output", "o", ranks=2, timeout=60)
        self.assertNotEqual(r.code, 0, r)
        self.assertEqual(r.err.count("trainio: dataset error"), 1, r)
        self.assertIn("(rank 1)", r.err)
        self.assertIn("img_01_of_25.npz", r.err)
        self.assertNotIn("MPI_ABORT", r.err)   # the ranks stopped together, no abort was needed
        self.assertLess(r.seconds, 20)

    def test_fewer_files_than_ranks_are_written_together(self):
        import filecmp
        import h5py
        import numpy as np
        for fmt in ("hdf5", "indexed_binary"):
            args = [f"dataset.format={fmt}", "dataset.num_files_train=1", "dataset.num_files_eval=0",
                    "workflow.evaluation=false", "dataset.num_samples_per_file=9", "dataset.record_length_bytes=65536",
                    "dataset.num_subfolders_train=0"]
            r = self.ok("generate", "default", f"dataset.data_folder=shared_{fmt}", *args, ranks=3)
            self.assertIn("1 files written", r.out)
            self.ok("generate", "default", f"dataset.data_folder=single_{fmt}", *args)
            self.ok("validate", "default", f"dataset.data_folder=shared_{fmt}", *args, ranks=2)
            name = f"train/img_0_of_1.{fmt}"
            if fmt == "hdf5":
                with h5py.File(self.path(f"shared_{fmt}", name), "r") as a, \
                        h5py.File(self.path(f"single_{fmt}", name), "r") as b:
                    self.assertTrue(np.array_equal(a["records_0"][:], b["records_0"][:]))
                    self.assertEqual(list(a["labels"][:]), [0] * 9)
            else:
                # The same bytes, whichever ranks wrote them.
                self.assertTrue(filecmp.cmp(self.path(f"shared_{fmt}", name), self.path(f"single_{fmt}", name),
                                            shallow=False))
            self.ok("run", "default", f"dataset.data_folder=shared_{fmt}", *args, "workflow.generate_data=false",
                    "reader.batch_size=3", "train.computation_time=0", "--output", f"o_{fmt}", ranks=3)
