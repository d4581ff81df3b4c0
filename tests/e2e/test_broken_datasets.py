"""A broken dataset never yields a result. Per format one tiny dataset is generated, then one file
is damaged in each way a file breaks (cut in half, last byte missing, emptied, header or tail
overwritten, index inconsistent); every time `validate` and `run` must exit 1 naming the file, `run`
with a `fix:` line, no decoder text printed raw, and no summary.json."""
import os
import shutil

from harness import TrainioTest

COMMON = ["dataset.data_folder=d", "dataset.num_files_train=4", "dataset.num_files_eval=0",
          "workflow.evaluation=false", "dataset.num_subfolders_train=0", "dataset.record_length_bytes=4096",
          "reader.batch_size=2", "train.epochs=1", "train.computation_time=0"]

# What libjpeg's and libpng's default handlers print on stderr: never seen raw.
RAW_DECODER_TEXT = ("Premature end of JPEG file", "Corrupt JPEG data", "Not a JPEG file", "libpng warning",
                    "libpng error", "JPEG datastream contains no image", "Bogus marker")


def truncate_half(path):
    os.truncate(path, os.path.getsize(path) // 2)


def cut_last_byte(path):
    os.truncate(path, os.path.getsize(path) - 1)


def empty(path):
    os.truncate(path, 0)


def overwrite(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset if offset >= 0 else os.path.getsize(path) + offset)
        f.write(data)


def overwrite_header(path):
    overwrite(path, 0, b"\x00garbage\x00")


def overwrite_tail(path):
    overwrite(path, -32, b"\x00" * 32)


def bytes_before_the_end_marker(path):
    # libjpeg only warns ("Corrupt JPEG data: N extraneous bytes before marker 0xd9"): an error in
    # validate. The run does not decode (that is the framework's CPU time), and two bytes inside
    # the entropy-coded data look like coded data to a marker walk: only validate catches this.
    # 32 bytes, not 2: libjpeg's bit buffer reads up to 8 bytes past the last code it needs, so
    # whether a few inserted bytes stay unread (and draw the warning) depends on the image's data.
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[:-2] + b"\x00\x07" * 16 + data[-2:])


def padding_chunk_changed(path):
    # trainio's PNGs reach their planned size with a private "paDd" chunk before the image data:
    # Pillow reads it, so the run checks its CRC as it does every chunk's.
    with open(path, "rb") as f:
        data = f.read()
    at = data.index(b"paDd") + 4
    overwrite(path, at, bytes([data[at] ^ 0x01]))


def cut_inner_tar_padding(path):
    # The first member's data (64 x 64 = 4096 bytes) needs no padding; its .cls member does:
    # remove one byte of that padding, so every later header sits one byte early.
    with open(path, "rb") as f:
        data = f.read()
    cls_padding = 512 + 4096 + 512 + 1
    with open(path, "wb") as f:
        f.write(data[:cls_padding] + data[cls_padding + 1:])


def index_entry_changed(path):
    overwrite(path + ".off.idx", 8, (12345).to_bytes(8, "little"))


def index_cut(path):
    os.truncate(path + ".sz.idx", 8)


def index_too_long(path):
    with open(path + ".off.idx", "ab") as f:
        f.write((8192).to_bytes(8, "little"))


def data_replaced_by_a_folder(path):
    os.remove(path)
    os.mkdir(path)


def data_unreadable(path):
    os.chmod(path, 0)
    # Root reads any file whatever its mode bits, unless it runs without those capabilities.
    if os.geteuid() == 0:
        return ("setpriv", "--bounding-set=-dac_override,-dac_read_search")
    return ()


class BrokenDatasetTest(TrainioTest):
    def setUp(self):
        super().setUp()
        self.failures = []

    def check_format(self, fmt, damages, extra=(), victim_index=1, validate_only=()):
        args = [f"dataset.format={fmt}", *COMMON, *extra]
        self.ok("generate", "default", *args)
        self.ok("validate", "default", *args)
        victim = self.path("d", "train", f"img_{victim_index}_of_4.{fmt}")
        pristine = self.path("pristine")
        shutil.copytree(self.path("d"), pristine)
        for name, damage in damages:
            with self.subTest(format=fmt, damage=name):
                wrapper = damage(victim) or ()
                self.check_refused(args, victim, f"{fmt}/{name}", wrapper, run_too=name not in validate_only)
            shutil.rmtree(self.path("d"))
            shutil.copytree(pristine, self.path("d"))
        # The restored dataset is good again: what failed above was the damage.
        self.ok("validate", "default", *args)
        out = self.path("good")
        self.ok("run", "default", *args, "workflow.generate_data=false", "--output", out)
        self.assertTrue(os.path.exists(os.path.join(out, "summary.json")))

    def check_refused(self, args, victim, label, wrapper=(), run_too=True):
        name = os.path.basename(victim)
        r = self.run_trainio("validate", "default", *args, wrapper=wrapper)
        self.assertEqual(r.code, 1, f"{label}: validate\n{r}")
        self.assertIn(name, r.out, f"{label}: validate\n{r}")
        for line in r.err.splitlines() + r.out.splitlines():
            self.assertFalse(line.startswith(RAW_DECODER_TEXT), f"{label}: raw decoder text from validate\n{r}")
        if not run_too:
            return
        self.runs = getattr(self, "runs", 0) + 1
        out = self.path(f"out-{self.runs}")
        r = self.run_trainio("run", "default", *args, "workflow.generate_data=false", "--output", out, wrapper=wrapper)
        self.assertEqual(r.code, 1, f"{label}: run\n{r}")
        self.assertIn(name, r.err, f"{label}: run\n{r}")
        self.assertIn("fix:", r.err, f"{label}: run\n{r}")
        for line in r.err.splitlines():
            self.assertFalse(line.startswith(RAW_DECODER_TEXT), f"{label}: raw decoder text on stderr\n{r}")
        self.assertFalse(os.path.exists(os.path.join(out, "summary.json")), f"{label}: run wrote a summary\n{r}")

    BASIC = [("cut in half", truncate_half), ("last byte missing", cut_last_byte), ("emptied", empty),
             ("header overwritten", overwrite_header)]

    def test_jpeg(self):
        self.check_format("jpeg", self.BASIC + [("tail overwritten", overwrite_tail),
                                               ("bytes before the end marker", bytes_before_the_end_marker)],
                          # The run checks the JPEG's structure, not its decoded pixels (see
                          # bytes_before_the_end_marker and docs/formats.md, "Broken files").
                          validate_only=["bytes before the end marker"])

    def test_png(self):
        self.check_format("png", self.BASIC + [("tail overwritten", overwrite_tail),
                                              ("padding chunk changed", padding_chunk_changed)])

    def test_csv(self):
        self.check_format("csv", self.BASIC + [("tail overwritten", overwrite_tail)],
                          ["dataset.num_samples_per_file=2", "dataset.record_length_bytes=400"])

    def test_tar(self):
        self.check_format("tar", self.BASIC + [("inner padding byte cut", cut_inner_tar_padding)],
                          ["dataset.num_samples_per_file=2"])

    def test_indexed_binary(self):
        self.check_format("indexed_binary",
                          [("cut in half", truncate_half), ("last byte missing", cut_last_byte), ("emptied", empty),
                           ("index entry changed", index_entry_changed), ("index cut", index_cut),
                           ("index too long", index_too_long), ("data file replaced by a folder", data_replaced_by_a_folder),
                           ("data file unreadable", data_unreadable)],
                          ["dataset.num_samples_per_file=2"])

    def test_mmap_indexed_binary(self):
        # The mapped reader checks the three files' sizes; index entries are only read by validate
        # (reading them in the run would add page faults numpy's reader does not make).
        self.check_format("mmap_indexed_binary",
                          [("cut in half", truncate_half), ("last byte missing", cut_last_byte), ("emptied", empty),
                           ("index cut", index_cut), ("index too long", index_too_long),
                           ("data file unreadable", data_unreadable)],
                          ["dataset.num_samples_per_file=2"])

    def test_parquet(self):
        # The run reads the footer and the projected chunks' bytes without decoding pages (as the
        # DLIO fork's reader does, and pyarrow never checks the leading magic): a damaged first
        # page header is validate's to find.
        self.check_format("parquet", self.BASIC + [("tail overwritten", overwrite_tail)],
                          ["dataset.num_samples_per_file=2"], validate_only=["header overwritten"])

    def test_formats_that_already_failed_cleanly(self):
        for fmt, extra in (("npz", []), ("npy", []), ("hdf5", []),
                           ("tfrecord", ["framework=tensorflow", "reader.data_loader=tensorflow"]),
                           ("tfrecord", ["reader.data_loader=dali"])):
            with self.subTest(format=fmt, extra=extra):
                self.check_format(fmt, [("cut in half", truncate_half), ("last byte missing", cut_last_byte),
                                        ("emptied", empty), ("header overwritten", overwrite_header)],
                                  ["dataset.num_samples_per_file=2", *extra])
                shutil.rmtree(self.path("d"))
                shutil.rmtree(self.path("pristine"))
                shutil.rmtree(self.path("good"))

    def test_a_broken_image_stops_every_rank(self):
        args = ["dataset.format=jpeg", *COMMON]
        self.ok("generate", "default", *args, ranks=2)
        victim = self.path("d", "train", "img_3_of_4.jpeg")
        truncate_half(victim)
        r = self.run_trainio("run", "default", *args, "workflow.generate_data=false", "--output", "o", ranks=2)
        self.assertEqual(r.code, 1, r)
        self.assertIn("img_3_of_4.jpeg", r.err)
        self.assertIn("fix:", r.err)
        self.assertNotIn("MPI_ABORT", r.err)
        self.assertFalse(os.path.exists(self.path("o", "summary.json")), r)
        r = self.run_trainio("validate", "default", *args, ranks=2)
        self.assertEqual(r.code, 1, r)
        self.assertIn("img_3_of_4.jpeg", r.out)
