"""Checkpoints loaded on another layout than the save's (docs/checkpoints.md, "Restart on another
layout"): a save on 4 ranks (tensor 2, ZeRO 1) loaded on 3 ranks with tensor parallelism 1, each
rank's pread calls (strace) against the ranges worked out here from the documented layout and the
files themselves (zipfile and the pickle); config errors; verify catches an edited figure."""
import glob
import json
import os
import pickle
import re
import shutil
import unittest
import zipfile

from harness import TrainioTest

H, FFN, VOCAB, HEADS, KV_HEADS, LAYERS = 512, 1024, 1000, 8, 2, 2
TINY = ["model.type=transformer", f"model.num_layers={LAYERS}", f"model.transformer.hidden_size={H}",
        f"model.transformer.num_attention_heads={HEADS}", f"model.transformer.num_kv_heads={KV_HEADS}",
        f"model.transformer.ffn_hidden_size={FFN}", f"model.transformer.vocab_size={VOCAB}", "framework=pytorch",
        "workflow.train=false", "workflow.generate_data=false", "workflow.checkpoint=true",
        "checkpoint.checkpoint_folder=ckpt", "checkpoint.time_between_checkpoints=0"]
KV = H // HEADS * KV_HEADS
PARAMETERS = 2 * VOCAB * H + LAYERS * (H + H * (H + 2 * KV) + H * H + H + 3 * FFN * H) + H


def layer_tensors(layer):
    """(elements, split by tensor parallelism) of each tensor of a layer, as docs/checkpoints.md says."""
    if layer in (0, LAYERS + 1):
        return [(H * VOCAB, True)]
    if layer == LAYERS + 2:
        return [(H, False)]
    return [(H, False), (H * (H + 2 * KV), True), (H * H, True), (H, False), (2 * FFN * H, True), (FFN * H, True)]


def stage_layers(pp, stage):
    per, rem = LAYERS // pp, LAYERS % pp
    start = stage * (per + 1) + 1 if stage < rem else rem * (per + 1) + (stage - rem) * per + 1
    end = start + per if stage < rem else start + per - 1
    if stage == pp - 1:
        end = LAYERS + 2
    if stage == 0:
        start = 0
    return range(start, end + 1)


class _Key:
    def __init__(self, key):
        self.key = key


class _Unpickler(pickle.Unpickler):
    """data.pkl read without torch: each tensor becomes the key of its storage record."""
    def find_class(self, module, name):
        if name == "_rebuild_tensor_v2":
            return lambda storage, *rest: storage
        return type(name, (), {})

    def persistent_load(self, pid):
        return _Key(pid[2])


def data_offsets(path):
    """{storage key: (data offset, size)} of a torch.save archive, from its own local headers."""
    out = {}
    with zipfile.ZipFile(path) as z, open(path, "rb") as f:
        state = _Unpickler(z.open("archive/data.pkl")).load()
        for info in z.infolist():
            m = re.match(r"archive/data/(\d+)$", info.filename)
            if not m:
                continue
            f.seek(info.header_offset + 26)
            name_len, extra_len = int.from_bytes(f.read(2), "little"), int.from_bytes(f.read(2), "little")
            out[m.group(1)] = (info.header_offset + 30 + name_len + extra_len, info.file_size)
        return state, out, z.start_dir


def expected_reads(folder, saved, load, rank):
    """{(file, offset, length)} of tensor data rank `rank` of layout `load` reads from the ZeRO-1 save
    of layout `saved` (tensor, data; pipeline 1), worked out from the documented layout."""
    (ts, ds), (tl, dl) = saved, load
    reads = set()
    cache = {}

    def record(name, *keys):
        if name not in cache:
            cache[name] = data_offsets(os.path.join(folder, name))
        state, offsets, _ = cache[name]
        for k in keys:
            state = state[k]
        return offsets[state.key]

    tp, dp = rank % tl, rank // tl
    for layer in stage_layers(1, 0):
        for i, (e, split) in enumerate(layer_tensors(layer)):
            need = (tp * (e // tl), (tp + 1) * (e // tl)) if split else (0, e)
            for t in (range(ts) if split else [tp % ts]):
                have = (t * (e // ts), (t + 1) * (e // ts)) if split else (0, e)
                lo, hi = max(need[0], have[0]), min(need[1], have[1])
                if lo < hi:
                    off, _ = record(f"model_{t}_model_states.pt", str(layer), str(i))
                    reads.add((f"model_{t}_model_states.pt", off + (lo - have[0]) * 2, (hi - lo) * 2))
    # Optimizer: three groups of P/(DP x MP) fp32 elements per rank, ordered by (mp, dp); small groups 5h.
    n, ns = PARAMETERS // (dl * tl), PARAMETERS // (ds * ts)
    a = (rank % tl * dl + dp) * n
    first = None
    for g in range(3):
        k = a // ns
        while k < ds * ts and k * ns < a + n:
            lo, hi = max(a, k * ns), min(a + n, (k + 1) * ns)
            name = f"zero_pp_rank_{k % ds}_mp_rank_{k // ds}_optim_states.pt"
            first = first or name
            off, _ = record(name, str(2 * g))
            reads.add((name, off + (lo - k * ns) * 4, (hi - lo) * 4))
            k += 1
        name = f"zero_pp_rank_{(a // ns) % ds}_mp_rank_{(a // ns) // ds}_optim_states.pt"
        off, size = record(name, str(2 * g + 1))
        reads.add((name, off, size))
    return reads


def strace_reads(prefix):
    """{rank: [(file, offset, length)]} of every pread64 on a checkpoint file, by process."""
    out = {}
    for path in glob.glob(prefix + ".*"):
        fds, rank, reads = {}, None, []
        with open(path) as f:
            lines = f.readlines()
        for line in lines:
            m = re.match(r'openat\(AT_FDCWD, "([^"]+)".*\) = (\d+)', line)
            if m:
                fds[m.group(2)] = m.group(1)
                r = re.search(r"/\.?(\d+)_records\.jsonl", m.group(1))
                if r:
                    rank = int(r.group(1))
                continue
            m = re.match(r"pread64\((\d+), .*, (\d+), (\d+)\) = (\d+)", line)
            if m and "/global_epoch" in fds.get(m.group(1), ""):
                reads.append((os.path.basename(fds[m.group(1)]), int(m.group(3)), int(m.group(2))))
        if rank is not None:
            out[rank] = reads
    return out


class ReshardTest(TrainioTest):
    SAVE = [*TINY, "model.parallelism.tensor=2", "model.parallelism.zero_stage=1"]

    def save_on_four(self):
        self.ok("run", "default", *self.SAVE, "checkpoint.num_checkpoints_write=1", "checkpoint.num_checkpoints_read=0",
                "--output", "w", ranks=4)

    @unittest.skipUnless(shutil.which("strace"), "strace shows the ranges each rank reads")
    def test_three_ranks_read_exactly_their_ranges_of_a_four_rank_save(self):
        self.save_on_four()
        folder = self.path("ckpt", "global_epoch1_step1")
        prefix = self.path("st")
        r = self.ok("run", "default", *self.SAVE, "checkpoint.num_checkpoints_write=0", "checkpoint.num_checkpoints_read=1",
                    "checkpoint.load_parallelism.tensor=1", "--resume-from", "w", "--output", "r", ranks=3,
                    wrapper=["strace", "-qq", "-e", "trace=openat,pread64", "-o", prefix, "-ff"])
        self.assertIn("resharded: saved tensor 2 x pipeline 1 x data 2 (4 ranks), loaded tensor 1 x pipeline 1 x data 3", r.out)
        traced = strace_reads(prefix)
        self.assertEqual(sorted(traced), [0, 1, 2])
        readers, index_bytes, data_bytes, shard = {}, 0, 0, 0
        for rank, reads in traced.items():
            want = expected_reads(folder, (2, 2), (1, 3), rank)
            tails = {}
            for name in {f for f, _, _ in reads}:
                _, offsets, start_dir = data_offsets(os.path.join(folder, name))
                tails[name] = (start_dir, os.path.getsize(os.path.join(folder, name)) - start_dir)
                readers[name] = readers.get(name, 0) + 1
            data = [x for x in reads if x[2] != tails[x[0]][1] and x[2] > 200]  # not the index, not a local header
            index = [x for x in reads if x not in data]
            self.assertEqual(set(data), want, f"rank {rank}")
            self.assertEqual(len(data), len(want), f"rank {rank} reads each range once")
            # Every file read starts with its central directory and end records, in one call.
            for name, (start_dir, length) in tails.items():
                self.assertIn((name, start_dir, length), index)
            index_bytes += sum(n for _, _, n in index)
            data_bytes += sum(n for _, _, n in data)
            shard += 2 * PARAMETERS + 4 * 3 * (PARAMETERS // 3 + 5 * H)  # the whole model in fp16, its optimizer third
        s = self.summary("r")
        load = s["trainio"]["checkpoint"]["checkpoints"][0]
        rs = load["reshard"]
        self.assertEqual((rs["saved_layout"]["ranks"], rs["load_layout"]["ranks"]), (4, 3))
        self.assertEqual((rs["data_bytes"], rs["index_bytes"], rs["shard_bytes"]), (data_bytes, index_bytes, shard))
        self.assertAlmostEqual(rs["read_amplification"], (data_bytes + index_bytes) / shard, places=12)
        self.assertEqual(rs["files_read"], len(readers))
        self.assertEqual(rs["readers_per_file_max"], max(readers.values()))  # the model files: all 3 ranks
        self.assertEqual(rs["readers_per_file_max"], 3)
        self.assertAlmostEqual(rs["readers_per_file_mean"], sum(readers.values()) / len(readers), places=12)
        self.assertEqual(load["file_bytes"], data_bytes + index_bytes)

    def test_a_zero3_read_job_on_fewer_ranks_reads_the_write_jobs_files(self):
        z3 = [*TINY, "model.parallelism.zero_stage=3"]
        self.ok("run", "default", *z3, "checkpoint.num_checkpoints_write=1", "checkpoint.num_checkpoints_read=0",
                "--output", "w", ranks=4)
        r = self.ok("run", "default", *z3, "checkpoint.num_checkpoints_write=0", "checkpoint.num_checkpoints_read=1",
                    "--resume-from", "w", "--output", "r", ranks=2)
        rs = self.summary("r")["trainio"]["checkpoint"]["checkpoints"][0]["reshard"]
        self.assertEqual((rs["saved_layout"]["data"], rs["load_layout"]["data"]), (4, 2))
        # Each rank reads two saved ranks' files whole (their shards are halves of its own): one reader each.
        self.assertEqual((rs["files_read"], rs["readers_per_file_max"], rs["readers_per_file_min"]), (8, 1, 1))
        self.assertEqual(rs["unsaved_bytes"], 0)
        self.assertLess(rs["read_amplification"], 1.001)
        self.assertIn("resharded", r.out)

    def test_impossible_layouts_are_config_errors_naming_the_key(self):
        self.save_on_four()
        r = self.run_trainio("run", "default", *self.SAVE, "checkpoint.num_checkpoints_write=0", "checkpoint.num_checkpoints_read=1",
                             "--resume-from", "w", "--output", "r", ranks=3)  # tensor 2 kept: 3 ranks do not fit
        self.assertEqual(r.code, 2, r)
        self.assertIn("checkpoint.load_parallelism", r.err)
        self.assertIn("not a multiple of tensor x pipeline", r.err)
        r = self.run_trainio("run", "default", *self.SAVE, "checkpoint.num_checkpoints_write=0", "checkpoint.num_checkpoints_read=1",
                             "checkpoint.load_parallelism.tensor=3", "--resume-from", "w", "--output", "r", ranks=3)
        self.assertEqual(r.code, 2, r)
        self.assertIn("checkpoint.load_parallelism.tensor", r.err)
        r = self.run_trainio("run", "default", *self.SAVE, "checkpoint.num_checkpoints_write=1", "checkpoint.num_checkpoints_read=0",
                             "checkpoint.load_parallelism.tensor=1", "--output", "x", ranks=2)
        self.assertEqual(r.code, 2, r)
        self.assertIn("checkpoint.load_parallelism is set, but the run loads no checkpoint", r.err)

    def test_verify_catches_an_edited_amplification(self):
        self.save_on_four()
        self.ok("run", "default", *self.SAVE, "checkpoint.num_checkpoints_write=0", "checkpoint.num_checkpoints_read=1",
                "checkpoint.load_parallelism.tensor=1", "--resume-from", "w", "--output", "r", ranks=2)
        self.assertEqual(self.run_trainio("verify", "r").code, 0)
        s = self.read_json("r", "summary.json")
        s["trainio"]["checkpoint"]["checkpoints"][0]["reshard"]["read_amplification"] *= 1.001
        self.write_json(s, "r", "summary.json")
        self.unverified.add("r")
        v = self.run_trainio("verify", "r")
        self.assertNotEqual(v.code, 0)
        self.assertIn("reshard.read_amplification", v.out)


if __name__ == "__main__":
    unittest.main()
