"""The --trace files (trace-<rank>-of-<size>.pfw), read the way docs/results.md says they can be:
a "[" line, one JSON object per line, a "]" line. Thread and process names, the table from file
hash to path, and times to the nanosecond."""
import datetime
import json
import os
import re
import socket

from harness import TrainioTest

RUN = ["dataset.data_folder=data", "dataset.num_files_train=16", "dataset.num_files_eval=4",
       "dataset.record_length_bytes=4096", "train.computation_time=0.001", "evaluation.eval_time=0.001",
       "train.epochs=2", "reader.batch_size=2"]
CHECKPOINT = ["workflow.checkpoint=true", "checkpoint.checkpoint_folder=ck", "checkpoint.checkpoint_after_epoch=1"]


def read_trace(path):
    """The events of a trace by the documented rule: the first line is "[", the last "]", and
    every line between them is one JSON object (no comma)."""
    with open(path) as f:
        lines = f.read().splitlines()
    assert lines[0] == "[" and lines[-1] == "]", "a trace is framed by a [ line and a ] line"
    return [json.loads(line) for line in lines[1:-1]]


def ns(value):
    """A time the trace writes in microseconds with three decimals, as integer nanoseconds."""
    return round(value * 1000)


def fnv1a(text):
    h = 1469598103934665603
    for b in text.encode():
        h = ((h ^ b) * 1099511628211) % 2**64
    return h or 1


class TraceFileTest(TrainioTest):
    def traced(self, *args, ranks=2):
        self.ok("run", "default", *RUN, "--trace", *args, "--output", "o", ranks=ranks)
        return {rank: read_trace(self.path("o", f"trace-{rank}-of-{ranks}.pfw")) for rank in range(ranks)}

    def test_each_line_is_one_json_object_and_the_whole_file_is_not_json(self):
        self.traced(ranks=1)
        with open(self.path("o", "trace-0-of-1.pfw")) as f:
            text = f.read()
        self.assertTrue(text.startswith("[\n"))
        self.assertTrue(text.endswith("\n]"), "ends with ] and no newline after it")
        # dfanalyzer's rule (dftracer): skip lines that start with [ or ], json.loads each other one.
        objects = [json.loads(line) for line in text.splitlines(keepends=True) if line[0] not in "[]"]
        self.assertGreater(len(objects), 100)
        self.assertTrue(all(isinstance(o, dict) and "ph" in o for o in objects))
        # As docs/results.md says: one object per line with no commas, so not one JSON document.
        with self.assertRaises(json.JSONDecodeError):
            json.loads(text)

    def test_steps_hold_their_wait_and_compute(self):
        traces = self.traced("output.trace_every=2")
        for rank, events in traces.items():
            spans = [e for e in events if e["ph"] == "X"]
            self.assertTrue(all(e["pid"] == rank and e["dur"] >= 0 and e["ts"] >= 0 for e in spans))
            names = [e["name"] for e in spans]
            self.assertEqual(names.count("step"), 2 * 4 + 2 * 2)  # training and evaluation steps
            self.assertEqual(names.count("batch_wait"), names.count("step"))
            self.assertEqual(names.count("train"), 2)
            calls = [e for e in spans if e["cat"] == "POSIX"]
            self.assertTrue(calls)
            self.assertTrue(all("fhash" in e["args"] and "size" in e["args"] for e in calls))
            # Every step's wait and compute lie inside it, to the nanosecond.
            steps = [e for e in spans if e["name"] == "step"]
            for e in spans:
                if e["name"] in ("batch_wait", "compute"):
                    self.assertTrue(any(ns(s["ts"]) <= ns(e["ts"]) and ns(e["ts"]) + ns(e["dur"]) <= ns(s["ts"]) + ns(s["dur"])
                                        for s in steps if s["args"] == e["args"]), e)

    def test_every_thread_and_rank_is_named(self):
        traces = self.traced(*CHECKPOINT)
        host = socket.gethostname()
        for rank, events in traces.items():
            meta = [e for e in events if e["ph"] == "M"]
            process = [e["args"]["name"] for e in meta if e["name"] == "process_name"]
            self.assertEqual(process, [f"rank {rank} on host {host}"])
            self.assertEqual([e["args"]["sort_index"] for e in meta if e["name"] == "process_sort_index"], [rank])
            names = {}
            for e in meta:
                if e["name"] == "thread_name":
                    self.assertEqual(e["pid"], rank)
                    self.assertNotIn(e["tid"], names, "one name per thread")
                    names[e["tid"]] = e["args"]["name"]
            spans = [e for e in events if e["ph"] == "X"]
            self.assertEqual({e["tid"] for e in spans} - set(names), set(), "every thread with events has a name")
            by_name = {}
            for e in spans:
                by_name.setdefault(names[e["tid"]], set()).add(e["name"])
            self.assertIn("step", by_name["main (training loop)"])
            self.assertIn("save", by_name["main (training loop)"])
            self.assertEqual(sorted(n for n in by_name if n.startswith("reader ")), ["reader 0", "reader 1"])
            for n in ("reader 0", "reader 1"):
                self.assertIn("read", by_name[n])

    def test_every_file_hash_names_its_real_file_before_it_is_used(self):
        traces = self.traced(*CHECKPOINT, "output.trace_every=3")
        for rank, events in traces.items():
            seen = {}  # (tid, hash) -> path, as the FH entries come
            calls = {}  # hash -> the calls on it
            for e in events:
                if e["ph"] == "M" and e["name"] == "FH":
                    key = (e["tid"], e["args"]["value"])
                    self.assertNotIn(key, seen, "a small run names each file once per thread")
                    seen[key] = e["args"]["name"]
                elif e["ph"] == "X" and "fhash" in e["args"]:
                    self.assertIn((e["tid"], e["args"]["fhash"]), seen, f"{e} comes before its file's FH entry")
                    calls.setdefault(e["args"]["fhash"], set()).add(e["name"])
            self.assertGreaterEqual(len(calls), 10)
            for (_, fhash), path in seen.items():
                self.assertEqual(fnv1a(path), int(fhash, 16), path)
                full = path if os.path.isabs(path) else self.path(path)
                # Calls on folders (mkdir, fsync of a folder) name the folder; reads and writes a file.
                self.assertTrue(os.path.exists(full), f"{path} does not exist")
                if calls[fhash] & {"read", "write"}:
                    self.assertTrue(os.path.isfile(full), f"{path} is no file")
            paths = set(seen.values())
            self.assertTrue(any(p.startswith("data/train/") and p.endswith(".npz") for p in paths), paths)
            if rank == 0:  # checkpoint.type rank_zero: rank 0 writes the checkpoint
                self.assertTrue(any(p.startswith("ck/") and p.endswith(".pt") for p in paths), paths)
            self.assertFalse(any(p.endswith(".trainio-tmp") for p in paths), "a file written under a temporary name is named by its final name")

    def test_times_to_the_nanosecond_from_one_origin(self):
        traces = self.traced(*CHECKPOINT)
        with open(self.path("o", "trace-0-of-2.pfw")) as f:
            lines = f.read().splitlines()[1:-1]
        spans = [line for line in lines if '"ph":"X"' in line]
        self.assertTrue(all(re.search(r'"ts":\d+\.\d{3},"dur":\d+\.\d{3},', line) for line in spans), spans[:3])
        fractions = {ns(json.loads(line)["dur"]) % 1000 for line in spans}
        self.assertGreater(len(fractions), 10, "durations keep their nanoseconds")
        origins = []
        for rank, events in traces.items():
            meta = {e["args"]["name"]: e["args"]["value"] for e in events if e["ph"] == "M" and e["name"] == "PR"}
            self.assertEqual(meta["rank"], rank)
            self.assertEqual(meta["hostname"], socket.gethostname())
            origins.append(meta["time_origin_unix_us"])
        self.assertEqual(origins[0], origins[1], "every rank counts from rank 0's origin")
        start = self.summary("o")["start"]
        self.assertIsInstance(origins[0], int)
        # The origin is the trace's start, in wall-clock microseconds: close to the run's start.
        run_start = datetime.datetime.strptime(start, "%Y-%m-%dT%H:%M:%S.%f").timestamp() * 1e6
        self.assertLess(abs(origins[0] - run_start), 60e6)
