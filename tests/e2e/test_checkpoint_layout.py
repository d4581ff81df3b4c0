"""Raw checkpoint layouts end to end (checkpoint.file_layout, checkpoint.write_buffer_bytes): the
files each rank writes and their bytes, and, under strace, the calls that write them: write(2)s
of the write buffer's size (a file's last one shorter), O_DIRECT when asked with the unaligned tail
after clearing it, one fsync per file. Refused combinations exit 2 before any I/O."""
import glob
import json
import os
import re
import shutil
import unittest

from harness import TRAINIO, TrainioTest

HAVE_STRACE = shutil.which("strace") is not None

# DLIO's legacy layer_parameters: one layer of three int8 tensors, one model file per rank, every
# rank writing (no optimizer file: no optimization_groups, no transformer).
THREE = ["framework=pytorch", "workflow.train=false", "workflow.generate_data=false", "workflow.checkpoint=true",
         "checkpoint.checkpoint_folder=ckpt", "checkpoint.time_between_checkpoints=0", "checkpoint.num_checkpoints_write=1",
         "checkpoint.num_checkpoints_read=0", "checkpoint.type=all_ranks", "model.model_size_bytes=0", "model.num_layers=1",
         "checkpoint.fsync=true", "checkpoint.atomic_files=false"]
FOLDER = "ckpt/global_epoch1_step1"


def strace_calls(prefix, under):
    """Per file under `under`: (open flags, write sizes, fsyncs, fcntl F_SETFLs) from strace -ff -y."""
    files = {}
    for path in glob.glob(prefix + ".*"):
        with open(path) as f:
            for line in f:
                # The opened file's path as strace -y shows the returned descriptor: absolute.
                m = re.match(r'^openat\([^,]+, "[^"]+", ([A-Z_|]+).*\) += \d+<([^>]+)>', line)
                if m and m.group(2).startswith(under):
                    files.setdefault(m.group(2), {"flags": set(), "writes": [], "fsync": 0, "setfl": 0})
                    files[m.group(2)]["flags"] |= set(m.group(1).split("|"))
                    continue
                # Greedy: the data strace prints may hold any character.
                m = re.match(r"^(write|fsync|fcntl)\(\d+<([^>]+)>(.*)\) += (-?\d+)", line)
                if not m or m.group(2) not in files:
                    continue
                if m.group(1) == "write":
                    files[m.group(2)]["writes"].append(int(m.group(4)))
                elif m.group(1) == "fsync":
                    files[m.group(2)]["fsync"] += 1
                elif "F_SETFL" in m.group(3):
                    files[m.group(2)]["setfl"] += 1
    return files


class CheckpointLayoutTest(TrainioTest):
    def save(self, *args, ranks=2, traced=False):
        """Runs a checkpoint-only save; with `traced` (and strace installed), under strace, whose
        calls per file it returns (None otherwise)."""
        traced = traced and HAVE_STRACE
        mpirun = ["mpirun", "-np", str(ranks), TRAINIO, "run", "default", "--output", "o", *THREE, *args]
        # strace -ff follows mpirun's ranks: one trace file per process and thread.
        wrapper = ["strace", "-ff", "-y", "-e", "trace=openat,write,fsync,fcntl", "-o", self.path("s")] if traced else []
        r = self.run_command(wrapper + mpirun)
        self.assertEqual(r.code, 0, r)
        return strace_calls(self.path("s"), self.path(FOLDER) + "/") if traced else None

    def test_per_tensor_writes_each_tensor_in_a_file_of_its_own_in_calls_of_the_buffer(self):
        calls = self.save("model.layer_parameters=[3000,5000,7000]", "checkpoint.file_layout=per_tensor",
                          "checkpoint.write_buffer_bytes=4000", "checkpoint.randomize_tensor=false", traced=True)
        names = sorted(os.listdir(self.path(FOLDER)))
        self.assertEqual(names, [f"zero_pp_rank_{dp}_mp_rank_0_model_states-{k}.bin" for dp in (0, 1) for k in (0, 1, 2)])
        expected = {0: [3000], 1: [4000, 1000], 2: [4000, 3000]}
        for name in names:
            k = int(name[-5])
            path = self.path(FOLDER, name)
            with open(path, "rb") as f:
                self.assertEqual(f.read(), b"\x01" * sum(expected[k]), name)  # torch.ones of int8, nothing else
            if calls is not None:
                self.assertEqual(calls[path]["writes"], expected[k], name)
                self.assertEqual(calls[path]["fsync"], 1, name)
                self.assertNotIn("O_DIRECT", calls[path]["flags"])
        if calls is not None:
            self.assertEqual(len(calls), 6)
        c = self.summary("o")["trainio"]["checkpoint"]["checkpoints"][0]
        self.assertEqual((c["files"], c["file_bytes"], c["tensor_bytes"]), (6, 30000, 30000))
        self.assertNotIn("rename", c["io"])  # atomic_files off: written in place

    def test_per_rank_aggregates_a_ranks_tensors_in_one_file_with_o_direct(self):
        # 12288 + 20480 + 5000 = 37768 bytes: four aligned calls of 8192, then 4096 with O_DIRECT
        # and the 904-byte tail after clearing it.
        calls = self.save("model.layer_parameters=[12288,20480,5000]", "checkpoint.file_layout=per_rank",
                          "checkpoint.write_buffer_bytes=8192", "checkpoint.odirect=true", traced=True)
        self.assertEqual(sorted(os.listdir(self.path(FOLDER))), ["rank_0.bin", "rank_1.bin"])
        contents = []
        for name in ("rank_0.bin", "rank_1.bin"):
            path = self.path(FOLDER, name)
            self.assertEqual(os.path.getsize(path), 37768)
            with open(path, "rb") as f:
                contents.append(f.read())
            if calls is not None:
                self.assertEqual(calls[path]["writes"], [8192] * 4 + [4096, 904])
                self.assertIn("O_DIRECT", calls[path]["flags"])
                self.assertEqual(calls[path]["setfl"], 1)
                self.assertEqual(calls[path]["fsync"], 1)
        self.assertNotEqual(contents[0], contents[1])  # each rank's own random bytes
        self.assertNotIn(b"\x00" * 4096, contents[0])  # no hole between the tensors
        c = self.summary("o")["trainio"]["checkpoint"]["checkpoints"][0]
        self.assertEqual((c["files"], c["file_bytes"]), (2, 2 * 37768))

    def test_a_save_does_not_time_the_staging_buffers_first_touch(self):
        # A checkpoint-only run saves at once, while a thread still touches trainio's 2 x 64 MiB
        # staging buffer (memory of trainio's own, not the framework's): the save's clock starts
        # once it is ready. Before, its first touch (~0.45 s on the development VM) was timed as
        # the checkpoint's.
        r = self.run_trainio("run", "default", *THREE, "model.layer_parameters=[67108864,67108864]",
                             "checkpoint.file_layout=per_rank", "checkpoint.write_buffer_bytes=67108864", "--trace",
                             "--no-progress", "--output", "o")
        self.assertEqual(r.code, 0, r)
        with open(self.path("o", "trace-0-of-1.pfw")) as f:
            events = [json.loads(line) for line in f if line[0] not in "[]"]
        save = next(e for e in events if e["name"] == "save")
        first_open = min(e["ts"] for e in events if e["name"] == "open" and e["ts"] >= save["ts"])
        # What comes first in a save: its folder made, its file opened. A tenth of the save at most.
        self.assertLess(first_open - save["ts"], 0.1 * save["dur"], (save, first_open))

    def test_layouts_and_buffers_that_cannot_work_exit_2_before_any_io(self):
        for args, named in ((["checkpoint.file_layout=per_rank", "checkpoint.num_checkpoints_read=1",
                              "checkpoint.num_checkpoints_write=1"], "num_checkpoints_read"),
                            (["checkpoint.file_layout=per_rank", "checkpoint.odirect=true",
                              "checkpoint.write_buffer_bytes=6144"], "checkpoint.write_buffer_bytes"),
                            (["checkpoint.file_layout=per_file"], "checkpoint.file_layout")):
            r = self.run_trainio("run", "default", *THREE, "model.layer_parameters=[4096]", *args, "--output", "bad")
            self.assertEqual(r.code, 2, r)
            self.assertIn(named, r.out + r.err)
            self.assertFalse(os.path.exists(self.path("ckpt")), args)


if __name__ == "__main__":
    unittest.main()
