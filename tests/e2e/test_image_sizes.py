"""JPEG and PNG files hold exactly the bytes the plan gives them (d1 x d2, one byte a pixel; DLIO's
dimensions, and what the MLCommons fork writes), so the storage moves the bytes the workload says:
a JPEG of random pixels at quality 75 used to be about 56% of them (176 KiB for RetinaNet's 322,957 B
records). Checked with os.path.getsize and Pillow, and against what a run reads."""
import glob
import math
import os

from harness import TrainioTest

RETINANET = 322957                          # MLPerf Storage's RetinaNet record length
SIDE = math.isqrt(RETINANET)                # 568: DLIO's d = floor(sqrt(record_length))


class ImageSizeTest(TrainioTest):
    def generate(self, fmt, *args, workload="default"):
        self.ok("generate", workload, f"dataset.format={fmt}", "dataset.data_folder=d", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "dataset.num_subfolders_train=0", *args)
        return sorted(glob.glob(self.path(f"d/train/*.{fmt}")))

    def open_image(self, path):
        from PIL import Image
        with Image.open(path) as img:
            img.load()
            return img.format, img.mode, img.size

    def test_retinanet_jpeg_files_hold_the_record_length(self):
        files = self.generate("jpeg", "dataset.num_files_train=3", workload="retinanet_b200")
        self.assertEqual(len(files), 3)
        for f in files:
            # 568 x 568 = 322,624 B: the record length less what does not make a whole row of pixels.
            self.assertEqual(os.path.getsize(f), SIDE * SIDE)
            self.assertLess(RETINANET - os.path.getsize(f), 2 * SIDE + 1)
            self.assertEqual(self.open_image(f), ("JPEG", "L", (SIDE, SIDE)))
        self.ok("validate", "retinanet_b200", "dataset.format=jpeg", "dataset.data_folder=d", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "dataset.num_subfolders_train=0", "dataset.num_files_train=3")
        # What `config` derives (dataset bytes, the demand behind --storage-bandwidth's prediction) is
        # the bytes on disk: 322,624 B a sample, 322,624 x 24 / 0.04755 s per accelerator.
        out = self.ok("config", "retinanet_b200", "--storage-bandwidth", "10GiB/s").out
        self.assertIn(f"mean {os.path.getsize(files[0]) / 1024:.2f} KiB per sample", out)
        demand = os.path.getsize(files[0]) * 24 / 0.04755 / 2**20
        self.assertIn(f"to keep each accelerator busy: {demand:.2f} MiB/s per rank", out)

    def test_png_files_hold_the_planned_size(self):
        for record in (RETINANET, 4096, 1000):
            with self.subTest(record=record):
                files = self.generate("png", "dataset.num_files_train=2", f"dataset.record_length_bytes={record}")
                side = math.isqrt(record)
                for f in files:
                    self.assertEqual(os.path.getsize(f), side * side)
                    self.assertEqual(self.open_image(f), ("PNG", "L", (side, side)))

    def test_sizes_that_vary_with_the_stdev_are_each_files_planned_size(self):
        for fmt, pil in (("jpeg", "JPEG"), ("png", "PNG")):
            with self.subTest(format=fmt):
                files = self.generate(fmt, "dataset.num_files_train=8", "dataset.record_length_bytes=10000",
                                      "dataset.record_length_bytes_stdev=3000")
                sizes = set()
                for f in files:
                    kind, mode, (width, height) = self.open_image(f)
                    self.assertEqual((kind, mode), (pil, "L"))
                    self.assertEqual(os.path.getsize(f), width * height, f)
                    sizes.add(os.path.getsize(f))
                self.assertGreater(len(sizes), 4)
                self.ok("validate", "default", f"dataset.format={fmt}", "dataset.data_folder=d",
                        "dataset.num_files_eval=0", "workflow.evaluation=false", "dataset.num_subfolders_train=0",
                        "dataset.num_files_train=8", "dataset.record_length_bytes=10000",
                        "dataset.record_length_bytes_stdev=3000")
                self.assertEqual(self.summary_bytes(fmt), sum(os.path.getsize(f) for f in files))

    def summary_bytes(self, fmt):
        """What a one-epoch run reads: every file once, whole."""
        out = self.path(f"out-{fmt}")
        self.ok("run", "default", f"dataset.format={fmt}", "dataset.data_folder=d", "dataset.num_files_eval=0",
                "workflow.evaluation=false", "dataset.num_subfolders_train=0", "dataset.num_files_train=8",
                "dataset.record_length_bytes=10000", "dataset.record_length_bytes_stdev=3000",
                "workflow.generate_data=false", "reader.batch_size=1", "train.epochs=1", "reader.read_threads=1",
                "train.computation_time=0", "--output", out)
        epochs = self.summary(out)["trainio"]["epochs"]
        self.assertEqual(len(epochs), 1)
        return epochs[0]["train"]["bytes_read"]

    def test_an_image_smaller_than_its_format_allows_is_refused(self):
        for fmt, least in (("jpeg", 331), ("png", 139)):
            with self.subTest(format=fmt):
                r = self.run_trainio("generate", "default", f"dataset.format={fmt}", "dataset.data_folder=d",
                                     "dataset.num_files_eval=0", "workflow.evaluation=false",
                                     "dataset.num_files_train=2", "dataset.record_length_bytes=100")
                self.assertEqual(r.code, 2, r)
                self.assertIn("10x10 pixels is planned as a file of 100 bytes", r.err)
                self.assertIn("takes at least", r.err)
                self.assertIn("dataset.record_length_bytes", r.err)
                self.assertFalse(glob.glob(self.path(f"d/train/*.{fmt}")))
