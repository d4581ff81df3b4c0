"""Every format trainio writes is read back by an independent reader and must hold the expected
samples: TFRecord by a parser written for the tests from TensorFlow's format description."""
import glob
import os
import re
import shutil

from harness import TrainioTest, corrupt
import tfrecord_parser


class TfRecordTest(TrainioTest):
    ARGS = ["framework=tensorflow", "reader.data_loader=tensorflow", "dataset.format=tfrecord",
            "dataset.data_folder=tf", "dataset.num_files_train=3", "dataset.num_files_eval=1",
            "dataset.num_samples_per_file=7", "dataset.record_length_bytes=2500", "dataset.file_prefix=part"]

    def test_records_examples_crcs_and_dali_index(self):
        self.ok("generate", "default", *self.ARGS)
        files = sorted(glob.glob(self.path("tf/train/*/*.tfrecord")))
        self.assertEqual(len(files), 3)
        images = set()
        for f in files:
            records = list(tfrecord_parser.read_records(f))
            self.assertEqual(len(records), 7)
            index_lines = []
            for offset, size, data in records:
                features = tfrecord_parser.parse_example(data)
                kind, values = features["image"]
                self.assertEqual(kind, "bytes")
                self.assertEqual(len(values[0]), 50 * 50)   # floor(sqrt(2500)) squared
                self.assertEqual(features["size"], ("int64", [50]))
                images.add(bytes(values[0][:64]))
                index_lines.append(f"{offset} {size}")
            name = os.path.basename(f)
            with open(self.path("tf/index/train", name + ".idx")) as idx:
                self.assertEqual(idx.read().splitlines(), index_lines)
        self.assertEqual(len(images), 21)  # every record has its own content
        self.assertEqual(len(glob.glob(self.path("tf/index/valid/*.idx"))), 1)
        self.ok("validate", "default", *self.ARGS)

    def test_a_flipped_byte_is_a_crc_error(self):
        self.ok("generate", "default", *self.ARGS)
        f = self.path("tf/train/0/part_0_of_3.tfrecord")
        corrupt(f, 3000)
        with self.assertRaises(ValueError):
            list(tfrecord_parser.read_records(f))
        r = self.run_trainio("validate", "default", *self.ARGS)
        self.assertEqual(r.code, 1, r)
        self.assertIn("bad data CRC", r.out)


class OtherFormatsTest(TrainioTest):
    def generate(self, fmt, *args):
        self.ok("generate", "default", f"dataset.format={fmt}", "dataset.data_folder=d", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "dataset.num_subfolders_train=0", *args)
        return sorted(glob.glob(self.path(f"d/train/*.{fmt}")))

    def test_csv_reads_in_pandas(self):
        import numpy as np
        import pandas as pd
        files = self.generate("csv", "dataset.num_files_train=3", "dataset.num_samples_per_file=4",
                              "dataset.record_length_bytes=100")
        self.assertEqual(len(files), 3)
        for f in files:
            df = pd.read_csv(f, header=None)
            self.assertEqual(df.shape, (4, 100))
            values = df.to_numpy()
            self.assertTrue(((values >= 0) & (values <= 254)).all())
            self.assertGreater(len(np.unique(values)), 100)
        self.ok("validate", "default", "dataset.format=csv", "dataset.data_folder=d", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "dataset.num_subfolders_train=0", "dataset.num_files_train=3",
                "dataset.num_samples_per_file=4", "dataset.record_length_bytes=100")

    def test_jpeg_and_png_open_in_pil(self):
        from PIL import Image
        for fmt, pil_format in (("jpeg", "JPEG"), ("png", "PNG")):
            files = self.generate(fmt, "dataset.num_files_train=4", "dataset.record_length_bytes=10000",
                                  "dataset.record_length_bytes_stdev=3000", "reader.data_loader=pytorch")
            sizes = set()
            for f in files:
                with Image.open(f) as img:
                    self.assertEqual(img.format, pil_format)
                    self.assertEqual(img.mode, "L")
                    img.load()
                    sizes.add(img.size)
            self.assertGreater(len(sizes), 1)  # sizes vary with the stdev
            shutil.rmtree(self.path("d"))

    def test_indexed_binary_reads_with_numpy(self):
        import numpy as np
        files = self.generate("indexed_binary", "dataset.num_files_train=2", "dataset.num_samples_per_file=10",
                              "dataset.record_length_bytes=4096")
        for f in files:
            offsets = np.fromfile(f + ".off.idx", dtype="<u8")
            sizes = np.fromfile(f + ".sz.idx", dtype="<u8")
            self.assertEqual(list(offsets), [i * 4096 for i in range(10)])
            self.assertEqual(list(sizes), [4096] * 10)
            self.assertEqual(os.path.getsize(f), 40960)

    def test_tar_shards_follow_webdataset(self):
        import tarfile
        files = self.generate("tar", "dataset.num_files_train=2", "dataset.num_samples_per_file=5",
                              "dataset.record_length_bytes=1000")
        for f in files:
            self.assertEqual(os.path.getsize(f) % 10240, 0)
            with tarfile.open(f) as t:
                members = t.getmembers()
                self.assertEqual(len(members), 10)
                stem = os.path.basename(f).split(".")[0]
                self.assertEqual(members[0].name, f"{stem}_000000.bin")
                self.assertEqual(members[1].name, f"{stem}_000000.cls")
                self.assertEqual(members[0].size, 31 * 31)
                self.assertEqual(t.extractfile(members[1]).read(), b"0")
        self.ok("run", "default", "dataset.format=tar", "dataset.data_folder=d", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "dataset.num_subfolders_train=0", "dataset.num_files_train=2",
                "dataset.num_samples_per_file=5", "dataset.record_length_bytes=1000", "workflow.generate_data=false",
                "reader.batch_size=2", "train.computation_time=0", "--output", "o")

    def test_synthetic_needs_no_files(self):
        self.ok("run", "default", "dataset.format=synthetic", "dataset.data_folder=nowhere", "workflow.evaluation=false",
                "train.computation_time=0", "--output", "o")
        self.assertFalse(os.path.exists(self.path("nowhere")))
        t = self.summary("o")["trainio"]
        self.assertEqual(t["train"]["samples"], 64 * 3)
        self.assertEqual(t["epochs"][0]["train"]["bytes_read"], 0)


STORAGE_CALLS = ("openat(", "open(", "newfstatat(", "fstat(", "statx(", "lstat(", "flock(", "getcwd(", "pwrite64(",
                 "write(", "pread64(", "read(", "ftruncate(", "lseek(", "close(", "rename(", "unlink(")


def joined_calls(lines):
    """strace -f lines with each call interrupted by another thread's ("<unfinished ...>") joined
    to its end ("<... call resumed>"), in the order the calls began."""
    joined, pending = [], {}
    for line in lines:
        m = re.match(r"(\d+)\s+(.*)$", line)
        if not m:
            continue
        pid, rest = m.groups()
        if rest.endswith(" <unfinished ...>"):
            pending[pid] = len(joined)
            joined.append(f"{pid} {rest[:-len(' <unfinished ...>')]}")
        elif rest.startswith("<... ") and pid in pending:
            at = pending.pop(pid)
            joined[at] += re.sub(r"\s+= ", " = ", re.sub(r"^<\.\.\. \w+ resumed>", "", rest))
        else:
            joined.append(line)
    return joined


def hdf5_calls_of(lines, name):
    """The system calls writing data file `name` (through its temporary name), from the first
    open of the temporary to the open that hands it over to be synced (its close and rename
    follow once its sync is done, on the generator's time: test_durability.py checks them), on
    the thread that opened it: names, descriptors, buffers and stat structures elided."""
    out, pid, fd = [], None, None
    for line in joined_calls(lines):
        m = re.match(r"(\d+)\s+(.*)$", line)
        if not m:
            continue
        if pid is None:
            if "." + name + ".trainio-tmp" in m.group(2) and m.group(2).startswith("openat("):
                pid = m.group(1)
            else:
                continue
        if m.group(1) != pid:
            continue
        call = m.group(2)
        opened = re.match(r'openat\(AT_FDCWD, "[^"]*", [^)]*\) = (\d+)$', call)
        if opened:
            fd = opened.group(1)
        if fd is not None:
            call = re.sub(rf"\b{fd}\b(?=[,)])", "FD", call)
            call = re.sub(rf"= {fd}$", "= FD", call)
        call = re.sub(r'"[^"]*' + re.escape(name) + r'[^"]*"', "NAME", call)
        call = re.sub(r'"(?:[^"\\]|\\.)*"(\.\.\.)?', "BUF", call)
        call = re.sub(r"\{st_mode=[^}]*\}", "STAT", call)
        call = re.sub(r"\s+=", " =", call)  # strace aligns results with spaces
        if not call.startswith(STORAGE_CALLS):
            continue  # memory, signals (a sanitizer's runtime makes its own): not storage
        if not ("(FD" in call or "NAME" in call or call.startswith("getcwd(")):
            continue  # another descriptor (a runtime's pipe): not this file
        out.append(call)
        if call.startswith("openat(") and "O_RDONLY" in call:
            break
    return out


class Hdf5Test(TrainioTest):
    def generate(self, *args):
        self.ok("generate", "default", "dataset.format=hdf5", "dataset.data_folder=h", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "dataset.num_subfolders_train=0", "dataset.num_files_train=2", *args)
        return sorted(glob.glob(self.path("h/train/*.hdf5")))

    def test_default_layout_reads_in_h5py(self):
        import h5py
        import numpy as np
        for f in self.generate("dataset.num_samples_per_file=5", "dataset.record_length_bytes=10000"):
            with h5py.File(f, "r") as h:
                self.assertEqual(sorted(h.keys()), ["labels", "records_0"])
                self.assertEqual(h["records_0"].shape, (5, 100, 100))
                self.assertEqual(h["records_0"].dtype, np.uint8)
                self.assertIsNone(h["records_0"].chunks)
                self.assertEqual(list(h["labels"][:]), [0] * 5)
                self.assertEqual(h["labels"].dtype, np.int64)
                self.assertGreater(len(np.unique(h["records_0"][2])), 200)

    def test_every_layout_option(self):
        import h5py
        import numpy as np
        files = self.generate("dataset.num_samples_per_file=6", "dataset.record_dims=[6,32,16]",
                              "dataset.record_element_type=float32", "dataset.hdf5.num_dset_per_record=3",
                              "dataset.hdf5.chunk_dims=[2,2,32,16]", "dataset.compression=gzip",
                              "dataset.compression_level=6", "dataset.hdf5.max_shape=[4,64,64]")
        for f in files:
            with h5py.File(f, "r") as h:
                self.assertEqual(sorted(h.keys()), ["labels", "records_0", "records_1", "records_2"])
                d = h["records_1"]
                self.assertEqual(d.shape, (6, 2, 32, 16))
                self.assertEqual(d.dtype, np.float32)
                self.assertEqual(d.chunks, (2, 2, 32, 16))
                self.assertEqual(d.compression, "gzip")
                self.assertEqual(d.compression_opts, 6)
                self.assertEqual(d.maxshape, (6, 4, 64, 64))
                d[:]  # every chunk inflates
        self.ok("validate", "default", "dataset.format=hdf5", "dataset.data_folder=h", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "dataset.num_subfolders_train=0", "dataset.num_files_train=2",
                "dataset.num_samples_per_file=6", "dataset.record_dims=[6,32,16]",
                "dataset.record_element_type=float32", "dataset.hdf5.num_dset_per_record=3",
                "dataset.hdf5.chunk_dims=[2,2,32,16]", "dataset.compression=gzip", "dataset.compression_level=6",
                "dataset.hdf5.max_shape=[4,64,64]")

    def test_float16_matches_numpy(self):
        import h5py
        import numpy as np
        for f in self.generate("dataset.record_dims=[8,8]", "dataset.record_element_type=float16"):
            with h5py.File(f, "r") as h:
                self.assertEqual(h["records_0"].dtype, np.float16)

    def test_files_after_the_first_make_libhdf5s_system_calls(self):
        """The first file is written by libhdf5, the next ones of its layout replay its calls
        (format/hdf5/hdf5_write_template.hpp): under strace, every file's calls are the first one's,
        from libhdf5's probe open to the hand-over for its sync, and every file reads back in h5py."""
        import h5py
        import numpy as np
        strace = shutil.which("strace")
        if not strace:
            self.skipTest("strace is not installed")
        trace = self.path("generate.trace")
        self.ok("generate", "default", "dataset.format=hdf5", "dataset.data_folder=h", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "dataset.num_subfolders_train=0", "dataset.num_files_train=6",
                "dataset.num_samples_per_file=3", "dataset.record_length_bytes=70000",
                "dataset.hdf5.num_dset_per_record=2", wrapper=[strace, "-f", "-o", trace])
        with open(trace) as f:
            lines = f.read().splitlines()
        per_file = [hdf5_calls_of(lines, f"img_{i}_of_6.hdf5") for i in range(6)]
        self.assertIn("flock(FD, LOCK_EX|LOCK_NB) = 0", per_file[0])
        self.assertGreaterEqual(sum(c.startswith("pwrite64") for c in per_file[0]), 4)
        for i in range(1, 6):
            self.assertEqual(per_file[i], per_file[0], f"file {i}")
        for f in sorted(glob.glob(self.path("h/train/*.hdf5"))):
            with h5py.File(f, "r") as h:
                self.assertEqual(sorted(h.keys()), ["labels", "records_0", "records_1"])
                self.assertEqual(h["records_1"].shape[0], 3)
                self.assertGreater(len(np.unique(h["records_1"][2])), 200)
                self.assertEqual(list(h["labels"][:]), [0] * 3)

    def test_impossible_layouts_are_config_errors(self):
        r = self.run_trainio("generate", "default", "dataset.format=hdf5", "dataset.data_folder=h",
                             "dataset.record_dims=[8,8]", "dataset.hdf5.chunk_dims=[1,16,8]")
        self.assertEqual(r.code, 2, r)
        self.assertIn("chunk_dims", r.err)
        r = self.run_trainio("generate", "default", "dataset.format=hdf5", "dataset.data_folder=h",
                             "dataset.compression=lzf")
        self.assertEqual(r.code, 2, r)
        self.assertIn("lzf", r.err)
