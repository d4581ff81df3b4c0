"""Every format trainio writes is read back by an independent reader and must hold the expected
samples: TFRecord by a parser written for the tests from TensorFlow's format description."""
import glob
import os

from harness import TrainioTest
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
        with open(f, "r+b") as fh:
            fh.seek(3000)
            b = fh.read(1)
            fh.seek(3000)
            fh.write(bytes([b[0] ^ 1]))
        with self.assertRaises(ValueError):
            list(tfrecord_parser.read_records(f))
        r = self.run_trainio("validate", "default", *self.ARGS)
        self.assertEqual(r.code, 1, r)
        self.assertIn("bad data CRC", r.out)
