"""HDF5 reader threads read concurrently: with reader.read_threads=4 the storage reads of different
threads overlap in time in the --trace output (DLIO's PyTorch workers are processes and read HDF5
files in parallel; a process-wide HDF5 lock held across the reads would allow one at a time)."""
import json
import os
import unittest

from harness import TrainioTest

# 1 MiB samples, 8 per file, 24 files: about 200 reads of 1 MiB per epoch. With the page cache
# emptied before each epoch every read waits for the disk, so four threads that may read together
# are certain to; one thread at a time can never show two reads in flight.
DATA = ["dataset.format=hdf5", "dataset.num_files_train=24", "dataset.num_samples_per_file=8",
        "dataset.record_length_bytes=1048576", "dataset.num_files_eval=0", "dataset.num_subfolders_train=0",
        "workflow.evaluation=false"]


def read_spans(trace):
    """(start, end, tid) of every storage read in a trace file."""
    spans = []
    with open(trace) as f:
        lines = f.read().splitlines()
    assert lines[0] == "[" and lines[-1] == "]", "a trace is framed by [ and ]"
    for line in lines[1:-1]:
        e = json.loads(line)
        if e.get("cat") == "POSIX" and e.get("name") == "read":
            spans.append((e["ts"], e["ts"] + e["dur"], e["tid"]))
    return spans


def most_in_flight(spans):
    """The largest number of reads of different threads in flight at one instant."""
    events = sorted([(s, 1, t) for s, _, t in spans] + [(e, -1, t) for _, e, t in spans],
                    key=lambda x: (x[0], x[1]))  # at equal times ends come first: touching is not overlapping
    active, best = {}, 0
    for _, step, tid in events:
        active[tid] = active.get(tid, 0) + step
        best = max(best, sum(1 for n in active.values() if n > 0))
    return best


class Hdf5ConcurrencyTest(TrainioTest):
    def run_traced(self, *args, data_args=()):
        data = self.path("data")
        self.ok("generate", "default", f"dataset.data_folder={data}", *DATA, *data_args)
        r = self.ok("run", "default", f"dataset.data_folder={data}", *DATA, *data_args, "workflow.generate_data=false",
                    "reader.read_threads=4", "reader.batch_size=4", "train.epochs=1", "reader.evict=fadvise",
                    "train.computation_time=0", *args, "--trace", "--output", self.path("o"))
        spans = read_spans(self.path("o", "trace-0-of-1.pfw"))
        self.assertGreaterEqual(len({t for _, _, t in spans}), 4, "four reader threads read")
        self.log = r.out + r.err
        return spans

    def test_reads_of_different_threads_overlap(self):
        spans = self.run_traced()
        self.assertGreaterEqual(most_in_flight(spans), 2, "at most one HDF5 read was ever in flight")

    def test_reads_overlap_with_files_kept_open(self):
        spans = self.run_traced("reader.read_type=memory")
        self.assertGreaterEqual(most_in_flight(spans), 2, "at most one HDF5 read was ever in flight")

    def test_chunked_reads_overlap(self):
        spans = self.run_traced(data_args=["dataset.record_dims=[512,2048]", "dataset.hdf5.chunk_dims=[1,256,2048]"])
        self.assertGreaterEqual(most_in_flight(spans), 2, "at most one HDF5 read was ever in flight")
        self.assertNotIn("take turns", self.log)

    def test_compressed_reads_take_turns_and_say_so(self):
        spans = self.run_traced(data_args=["dataset.record_dims=[512,2048]", "dataset.compression=gzip",
                                           "dataset.compression_level=1"])
        self.assertEqual(most_in_flight(spans), 1)
        self.assertEqual(self.log.count("compressed datasets are read through libhdf5"), 1, self.log)

    def test_the_helper_counts_overlap(self):
        self.assertEqual(most_in_flight([(0, 10, 1), (10, 20, 2)]), 1)
        self.assertEqual(most_in_flight([(0, 10, 1), (5, 20, 2), (6, 7, 3)]), 3)
        self.assertEqual(most_in_flight([(0, 10, 1), (2, 3, 1)]), 1)


if __name__ == "__main__":
    unittest.main()
