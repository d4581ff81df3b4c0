"""trainio's NPZ reader issues the same system calls as numpy: np.load(path, allow_pickle=True)['x']
(DLIO's NPZReader) and trainio are traced with strace on the same file and compared call by call."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from harness import TrainioTest

STRACE = shutil.which("strace")
# The calls compared. trainio's page-cache probes (cachestat; mmap/mincore/munmap before Linux 6.5)
# are left out on purpose: they are not the framework's calls (docs/io-patterns.md).
CALLS = "openat,open,read,pread64,readv,lseek,newfstatat,fstat,statx,ioctl,close,fcntl,flock,access"

NUMPY_LOAD = r"""
# argv: target, warm-up file; DLIO's NPZReader and NPYReader both call np.load(path, allow_pickle=True)
import os, sys
import numpy as np
def load(path):
    data = np.load(path, allow_pickle=True)
    return data["x"] if path.endswith(".npz") else data

load(sys.argv[2])   # warm-up: imports zipfile before the traced load
load(sys.argv[1])
"""


def calls_on(trace_file, path, every=False):
    """The calls made on `path` from its open to the close of its last descriptor, normalised:
    descriptors are numbered in order of appearance (fd0, fd1 for a dup), buffers and stat
    structures are elided, pids dropped. `every`: each open of it to its close, one after another."""
    with open(trace_file) as f:
        lines = [re.sub(r"^\d+\s+", "", line.rstrip("\n")) for line in f]
    name = os.path.basename(path)
    out, fds = [], {}
    for line in lines:
        if not fds:
            m = re.match(r'openat\(AT_FDCWD, "([^"]*)", [^)]*\) = (\d+)', line)
            if m and os.path.basename(m.group(1)) == name:
                fds[m.group(2)] = "fd0"
                out.append("openat = fd0")
            continue
        m = re.match(r"(\w+)\((\d+)(.*)\)\s+= (.*)$", line)
        if not m or m.group(2) not in fds:
            continue
        call, fd, rest, result = m.group(1), m.group(2), m.group(3), m.group(4)
        rest = re.sub(r'"(?:[^"\\]|\\.)*"(\.\.\.)?', "BUF", rest)       # buffer contents
        rest = re.sub(r"\{st_mode=[^}]*\}", "STAT", rest)               # stat structures
        rest = re.sub(r"0x[0-9a-f]+", "ADDR", rest)
        if call == "fcntl" and "F_GETFL" in rest:
            # trainio opens data files with O_NONBLOCK (ignored for regular files; docs/io-patterns.md),
            # which F_GETFL reports: the call is the same, its answer carries the flag.
            result = re.sub(r"0x([0-9a-f]+) \(flags (.*)\)", lambda g: f"0x{int(g.group(1), 16) & ~os.O_NONBLOCK:x} "
                            f"(flags {g.group(2).replace('|O_NONBLOCK', '')})", result)
        if call == "fcntl" and "F_DUPFD" in rest:
            new = result.split()[0]
            fds[new] = f"fd{len(fds)}"
            result = fds[new]
        out.append(f"{call}({fds[fd]}{rest}) = {result}")
        if call == "close":
            del fds[fd]
            if not fds and not every:
                break
    return out


H5PY_READ = r"""
# argv: target, warm-up file, sample; DLIO's HDF5Reader: h5py.File(path, 'r')['records_i'][sample]
import os, sys
import h5py

def read(path, sample):
    f = h5py.File(path, "r")
    i = 0
    while f"records_{i}" in f:
        f[f"records_{i}"][sample]
        i += 1
    f.close()

read(sys.argv[2], 0)
read(sys.argv[1], int(sys.argv[3]))
"""


# DLIO's readers for the other formats, one sample each (argv: target, warm-up file).
PYTHON_READ = r"""
import os, sys
import numpy as np

def read(path):
    if path.endswith(".csv"):
        import pandas as pd
        pd.read_csv(path, compression="infer", header=None).to_numpy()
    elif path.endswith(".jpeg") or path.endswith(".png"):
        from PIL import Image
        np.asarray(Image.open(path))
    elif path.endswith(".indexed_binary"):
        size = int(os.environ["SAMPLE_BYTES"])
        f = open(path, "rb")
        f.seek(0)
        image = np.empty(size, dtype=np.uint8)
        f.readinto(image)
        f.close()

read(sys.argv[2])
read(sys.argv[1])
"""


# TensorFlow cannot be installed here: this re-states, from TensorFlow's source, what
# TFRecordDataset does to one file (argv: target, warm-up file, buffer size B): PosixRandomAccessFile
# opens it; RecordReader reads the 12-byte header and then data + CRC of each record through a
# BufferedInputStream of B bytes, whose FillBuffer asks PosixRandomAccessFile::Read for B bytes at
# the stream position, and that loops pread until it has them or pread returns 0.
TF_READ = r"""
import os, struct, sys

def stream(path, B):
    fd = os.open(path, os.O_RDONLY)
    pos, buf, eof = 0, b"", False
    def read_n(n):
        nonlocal pos, buf, eof
        out = b""
        while len(out) < n:
            if not buf:
                if eof:
                    break
                while len(buf) < B:                 # FillBuffer -> Read(pos, B)
                    got = os.pread(fd, B - len(buf), pos)
                    if not got:
                        eof = True
                        break
                    buf += got
                    pos += len(got)
                if not buf:
                    break
            take = min(n - len(out), len(buf))
            out, buf = out + buf[:take], buf[take:]
        return out
    while True:
        header = read_n(12)
        if len(header) < 12:
            break
        (length,) = struct.unpack("<Q", header[:8])
        read_n(length + 4)
    os.close(fd)

B = int(sys.argv[3])
stream(sys.argv[2], B)
stream(sys.argv[1], B)
"""


# DLIO's PyTorch checkpointing: with open(name, "rb") as f: torch.load(f) (argv: target, warm-up
# file), and with open(name, "wb") as f: torch.save(state, f) of the state read from argv[3],
# with DLIO's keys (str(i) makes a new string object each time).
# A PyTorch Dataset over TFRecord files: a plain Python loop on Python's file object (the
# `tfrecord` package's iterator reads the same way, and calls tell() per record besides).
# argv: target, warm-up file (of the target's record size), records, read type: "memory" reads
# the file through, "on_demand" opens, seeks and closes per record.
PYTHON_TFRECORD = r"""
import struct, sys
def through(path):
    with open(path, "rb") as f:
        while True:
            head = f.read(12)
            if len(head) < 12:
                break
            f.read(struct.unpack("<Q", head[:8])[0])
            f.read(4)
def each(path, records, sized_by):
    with open(sized_by, "rb") as f:
        head = f.read(12)
    size = 12 + struct.unpack("<Q", head[:8])[0] + 4
    for i in range(records):
        with open(path, "rb") as f:
            f.seek(i * size)
            f.read(12)
            f.read(size - 16)
            f.read(4)
through(sys.argv[2])
if sys.argv[4] == "memory":
    through(sys.argv[1])
else:
    each(sys.argv[1], int(sys.argv[3]), sys.argv[2])
"""

TORCH_LOAD = r"""
import os, sys, torch
def load(path):
    with open(path, "rb") as f:
        return torch.load(f)
load(sys.argv[2])
load(sys.argv[1])
"""

TORCH_SAVE = r"""
import os, sys, torch
def fresh(d):
    return {(str(int(k)) if k.isdigit() else k): (fresh(v) if isinstance(v, dict) else v) for k, v in d.items()}
state = fresh(torch.load(sys.argv[3]))
with open(sys.argv[2], "wb") as f:
    torch.save(state, f)
with open(sys.argv[1], "wb") as f:
    torch.save(state, f)
"""
CHECKPOINT_CALLS = CALLS + ",write,fsync,rename"
HAVE_TORCH = subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode == 0


@unittest.skipUnless(STRACE, "strace is not installed")
class IoPatternTest(TrainioTest):
    def trace_python(self, script, *args, env=None, calls=CALLS):
        trace = self.path("python.trace")
        subprocess.run([STRACE, "-f", "-e", f"trace={calls}", "-o", trace, "/usr/bin/python3", "-c", script,
                        *args], check=True, cwd=self.dir, capture_output=True, env=dict(os.environ, **(env or {})))
        return calls_on(trace, args[0])

    def trace_trainio(self, data_folder, target, args, every=False):
        trace = self.path("trainio.trace")
        r = self.run_trainio("run", "default", f"dataset.data_folder={data_folder}", *args,
                             "workflow.generate_data=false", "reader.read_threads=0", "reader.batch_size=1",
                             "reader.file_shuffle=off", "reader.sample_shuffle=off", "train.epochs=1",
                             "workflow.evaluation=false", "dataset.num_files_eval=0", "--output",
                             self.path("out-" + os.path.basename(data_folder)),
                             wrapper=[STRACE, "-f", "-e", f"trace={CALLS}", "-o", trace])
        self.assertEqual(r.code, 0, r)
        return calls_on(trace, target, every)

    def compare(self, data_folder, args, ext="npz", sample_bytes=0):
        r = self.ok("generate", "default", f"dataset.data_folder={data_folder}", "dataset.num_files_eval=0",
                    "workflow.evaluation=false", "dataset.num_subfolders_train=0", *args)
        target = os.path.join(data_folder, "train", f"img_1_of_2.{ext}")
        warmup = os.path.join(data_folder, "train", f"img_0_of_2.{ext}")
        ours = self.trace_trainio(data_folder, target, ["dataset.num_subfolders_train=0", *args])
        if ext in ("npz", "npy"):
            numpy = self.trace_python(NUMPY_LOAD, target, warmup)
        elif ext == "hdf5":
            numpy = self.trace_python(H5PY_READ, target, warmup, "0")
        else:
            numpy = self.trace_python(PYTHON_READ, target, warmup, env={"SAMPLE_BYTES": str(sample_bytes)})
        self.assertGreaterEqual(len(numpy), 6)  # a non-empty trace: open, reads, close
        self.assertEqual(ours, numpy)
        return ours

    def test_one_mebibyte_sample(self):
        calls = self.compare(self.path("data"), ["dataset.num_files_train=2", "dataset.record_length_bytes=1048576"])
        self.assertEqual(sum(c.startswith("read(") for c in calls), 17)
        self.assertEqual(sum(c.startswith("lseek(") for c in calls), 21)

    def test_small_samples_three_per_file(self):
        self.compare(self.path("data"), ["dataset.num_files_train=2", "dataset.record_length_bytes=4096",
                                         "dataset.num_samples_per_file=3", "reader.batch_size=1"])

    def test_deflated_npz(self):
        # savez_compressed members: zipfile inflates as it goes, so the reads follow the data.
        self.compare(self.path("data"), ["dataset.num_files_train=2", "dataset.record_length_bytes=1048576",
                                         "dataset.compression=zip"])

    def test_npy(self):
        calls = self.compare(self.path("data"), ["dataset.num_files_train=2", "dataset.record_length_bytes=1048576",
                                                 "dataset.format=npy"], ext="npy")
        self.assertIn("fcntl(fd0, F_DUPFD_CLOEXEC, 0) = fd1", calls)

    def test_small_npy(self):
        self.compare(self.path("data"), ["dataset.num_files_train=2", "dataset.record_length_bytes=1024",
                                         "dataset.format=npy"], ext="npy")

    def test_hdf5_contiguous(self):
        calls = self.compare(self.path("data"), ["dataset.num_files_train=2", "dataset.record_length_bytes=65536",
                                                 "dataset.format=hdf5", "dataset.num_samples_per_file=4"], ext="hdf5")
        self.assertIn("flock(fd0, LOCK_SH|LOCK_NB) = 0", calls)

    def test_hdf5_chunked_gzip_two_datasets(self):
        self.compare(self.path("data"), ["dataset.num_files_train=2", "dataset.record_dims=[4,64,64]",
                                         "dataset.hdf5.num_dset_per_record=2", "dataset.hdf5.chunk_dims=[1,2,32,64]",
                                         "dataset.compression=gzip", "dataset.format=hdf5",
                                         "dataset.num_samples_per_file=3"], ext="hdf5")

    def test_csv(self):
        self.compare(self.path("data"), ["dataset.num_files_train=2", "dataset.record_length_bytes=40000",
                                         "dataset.num_samples_per_file=4", "dataset.format=csv"], ext="csv")

    def test_jpeg(self):
        self.compare(self.path("data"), ["dataset.num_files_train=2", "dataset.record_length_bytes=1048576",
                                         "dataset.format=jpeg"], ext="jpeg")

    def test_png(self):
        self.compare(self.path("data"), ["dataset.num_files_train=2", "dataset.record_length_bytes=1048576",
                                         "dataset.format=png"], ext="png")

    def test_small_png(self):
        self.compare(self.path("data"), ["dataset.num_files_train=2", "dataset.record_length_bytes=4096",
                                         "dataset.format=png"], ext="png")

    def test_pil_reads_every_byte_of_an_image_once(self):
        # Image files hold exactly the planned bytes (RetinaNet's record length: 568 x 568) and
        # Pillow reads each of them once, so a run moves the bytes the workload says.
        for ext in ("jpeg", "png"):
            with self.subTest(format=ext):
                data = self.path(f"data-{ext}")
                calls = self.compare(data, ["dataset.num_files_train=2", "dataset.record_length_bytes=322957",
                                            f"dataset.format={ext}"], ext=ext)
                size = os.path.getsize(os.path.join(data, "train", f"img_1_of_2.{ext}"))
                self.assertEqual(size, 568 * 568)
                self.assertEqual(sum(int(c.rsplit("= ", 1)[1]) for c in calls if c.startswith("read(")), size)

    def test_indexed_binary(self):
        self.compare(self.path("data"), ["dataset.num_files_train=2", "dataset.record_length_bytes=1048576",
                                         "dataset.num_samples_per_file=3", "dataset.format=indexed_binary"],
                     ext="indexed_binary", sample_bytes=1048576)

    def compare_tfrecord(self, args, buffer_bytes):
        data = self.path("data")
        tf = ["framework=tensorflow", "reader.data_loader=tensorflow", "dataset.format=tfrecord",
              "dataset.num_subfolders_train=0", "dataset.num_files_train=2", *args]
        self.ok("generate", "default", f"dataset.data_folder={data}", "dataset.num_files_eval=0",
                "workflow.evaluation=false", *tf)
        target = os.path.join(data, "train", "img_1_of_2.tfrecord")
        warmup = os.path.join(data, "train", "img_0_of_2.tfrecord")
        ours = self.trace_trainio(data, target, tf)
        reference = self.trace_python(TF_READ, target, warmup, str(buffer_bytes))
        self.assertEqual(ours, reference)
        with open(self.path("trainio.trace")) as f:
            trace = f.read()
        # TensorFlow opens with O_RDONLY alone (no O_CLOEXEC, unlike Python); trainio adds O_NONBLOCK
        # to every read open, which Linux ignores for regular files, so that a FIFO in a data file's
        # place cannot block the run (docs/io-patterns.md). TensorFlow's list_files checks
        # every file of the split with access() on every rank each epoch; trainio leaves that storm
        # out (docs/io-patterns.md): the dataset marker and validate vouch for the files.
        self.assertRegex(trace, r'openat\(AT_FDCWD, "[^"]*img_1_of_2.tfrecord", O_RDONLY\|O_NONBLOCK\) = \d+')
        self.assertEqual(trace.count('.tfrecord", F_OK'), 0)
        size = os.path.getsize(target)
        preads = [c for c in ours if c.startswith("pread64(")]
        self.assertEqual(len(preads), size // buffer_bytes + (2 if size % buffer_bytes else 1))
        return ours

    def test_tfrecord_default_buffer(self):
        calls = self.compare_tfrecord(["dataset.record_length_bytes=1048576", "dataset.num_samples_per_file=2"],
                                      262144)
        self.assertIn("pread64(fd0, BUF, 262144, 262144) = 262144", calls)

    def test_tfrecord_transfer_size(self):
        self.compare_tfrecord(["dataset.record_length_bytes=1048576", "dataset.num_samples_per_file=3",
                               "reader.transfer_size=1048576"], 1048576)

    def test_tfrecord_small_records(self):
        # The whole file comes in the first read; the second returns 0.
        calls = self.compare_tfrecord(["dataset.record_length_bytes=2500", "dataset.num_samples_per_file=8"], 262144)
        self.assertEqual(len(calls), 4)  # open, pread, pread = 0, close

    def compare_python_tfrecord(self, read_type, records):
        data = self.path("data")
        args = ["framework=pytorch", "reader.data_loader=pytorch", "dataset.format=tfrecord",
                "dataset.num_subfolders_train=0", "dataset.num_files_train=2", "dataset.record_length_bytes=10000",
                f"dataset.num_samples_per_file={records}", f"reader.read_type={read_type}"]
        self.ok("generate", "default", f"dataset.data_folder={data}", "dataset.num_files_eval=0",
                "workflow.evaluation=false", *args)
        target = os.path.join(data, "train", "img_1_of_2.tfrecord")
        warmup = os.path.join(data, "train", "img_0_of_2.tfrecord")
        ours = self.trace_trainio(data, target, args, every=True)
        self.trace_python(PYTHON_TFRECORD, target, warmup, str(records), read_type)
        reference = calls_on(self.path("python.trace"), target, every=True)
        self.maxDiff = None
        self.assertEqual(ours, reference)
        return ours

    def test_python_tfrecord_loop(self):
        calls = self.compare_python_tfrecord("memory", 5)
        self.assertEqual(sum(c.startswith("openat") for c in calls), 1)
        self.assertEqual(calls[-2], "read(fd0, BUF, 4096) = 0")  # the loop's read that finds the end

    def test_python_tfrecord_map_style(self):
        calls = self.compare_python_tfrecord("on_demand", 3)
        self.assertEqual(sum(c.startswith("openat") for c in calls), 3)
        self.assertEqual(sum(c.endswith("SEEK_SET) = 0") for c in calls), 1)  # a seek to every record, the first too

    def trace_checkpoint(self, folder, atomic):
        # No eviction: its open and close of every file would come first in the trace.
        trace = self.path("trainio.trace")
        r = self.run_trainio("run", "default", "framework=pytorch", "workflow.train=false", "workflow.checkpoint=true",
                             f"checkpoint.checkpoint_folder={folder}", "checkpoint.num_checkpoints_write=1",
                             "checkpoint.num_checkpoints_read=1", "checkpoint.time_between_checkpoints=0",
                             f"checkpoint.atomic_files={atomic}", "checkpoint.evict=none", "model.model_size_bytes=1000000",
                             "model.optimization_groups=[3000,200]", "--output", self.path("out-" + os.path.basename(folder)),
                             wrapper=[STRACE, "-f", "-e", f"trace={CHECKPOINT_CALLS}", "-o", trace])
        self.assertEqual(r.code, 0, r)
        return trace

    @unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed")
    def test_torch_load(self):
        trace = self.trace_checkpoint(self.path("ck"), "true")
        step = self.path("ck", "global_epoch1_step1")
        target = os.path.join(step, "zero_pp_rank_0_mp_rank_0_optim_states.pt")
        ours = calls_on(trace, target)  # the temporary name is written; this name is only read
        theirs = self.trace_python(TORCH_LOAD, target, os.path.join(step, "model_states-0.pt"))
        self.assertEqual(ours, theirs)
        self.assertGreater(len(ours), 20)

    @unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed")
    def test_torch_save(self):
        trace = self.trace_checkpoint(self.path("ck"), "false")
        step = self.path("ck", "global_epoch1_step1")
        ours = calls_on(trace, os.path.join(step, "model_states-0.pt"))
        os.makedirs(self.path("py"))
        shutil.copy(os.path.join(step, "model_states-0.pt"), self.path("py", "source.pt"))
        theirs = self.trace_python(TORCH_SAVE, self.path("py", "model_states-0.pt"), self.path("py", "warm.pt"),
                                   self.path("py", "source.pt"), calls=CHECKPOINT_CALLS)
        self.assertEqual(ours, theirs)
        self.assertIn("write(fd0, BUF, 1000000) = 1000000", ours)  # the tensor in one write, as Python

    def test_a_large_block_size_file_system(self):
        # tmpfs with huge pages reports st_blksize = 2 MiB: Python's buffer, and trainio's, follow it.
        mount = self.tmpfs("huge", "size=64m,huge=always")
        probe = os.path.join(mount, "probe")
        open(probe, "w").close()
        if os.stat(probe).st_blksize < 1 << 20:
            self.skipTest("this kernel's tmpfs does not report huge blocks for files")
        os.remove(probe)
        calls = self.compare(os.path.join(mount, "data"),
                             ["dataset.num_files_train=2", "dataset.record_length_bytes=4194304"])
        self.assertIn("read(fd0, BUF, 2097152) = 2097152", calls)


if __name__ == "__main__":
    unittest.main()
