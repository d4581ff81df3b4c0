"""The framework loaders end to end: TensorFlow's TFRecord pipeline (file sharding, interleave,
shuffle buffer, record sharding, map threads) and its failures; TensorFlow's generators for other
formats; DALI's pipelines; DLIO's synthetic loader."""
import glob
import os

from harness import TrainioTest, corrupt

TF = ["framework=tensorflow", "reader.data_loader=tensorflow", "dataset.format=tfrecord",
      "dataset.data_folder=data", "dataset.num_subfolders_train=0", "workflow.generate_data=true",
      "workflow.evaluation=false", "dataset.record_length_bytes=4096", "train.computation_time=0.001"]


class TensorflowLoaderTest(TrainioTest):
    def epochs(self, out):
        return self.summary(out)["trainio"]["epochs"]

    def test_files_are_streamed_whole_through_interleaved_slots(self):
        # 5 files x 10 records, batch 4: 12 steps (two records dropped); every file is read once,
        # in buffer-sized reads; no name is checked by list_files (docs/loaders.md).
        self.ok("run", "default", *TF, "dataset.num_files_train=5", "dataset.num_samples_per_file=10",
                "reader.batch_size=4", "reader.read_threads=2", "reader.sample_shuffle=seed",
                "reader.file_shuffle=seed", "train.epochs=2", "--output", "o")
        size = sum(os.path.getsize(f) for f in glob.glob(self.path("data/train/*.tfrecord")))
        for e in self.epochs("o"):
            t = e["train"]
            self.assertEqual(t["steps_per_rank"], 12)
            self.assertEqual(t["samples"], 48)
            self.assertEqual(t["sample_bytes"], 48 * 4096)
            self.assertEqual(t["bytes_read"], size)
            self.assertEqual(t["io"]["open"]["count"], 5)
            self.assertEqual(t["io"]["close"]["count"], 5)
            self.assertNotIn("stat", t["io"])  # no access(F_OK) per file per epoch (list_files)
            self.assertEqual(t["io"]["read"]["count"], 10)  # each 41 KB file: one read, one at the end

    def test_fewer_files_than_ranks_shard_records(self):
        # One file, two ranks: both stream the whole file and keep every other record.
        self.ok("run", "default", *TF, "dataset.num_files_train=1", "dataset.num_samples_per_file=20",
                "reader.batch_size=2", "reader.sample_shuffle=random", "reader.shuffle_size=8", "train.epochs=1",
                "--output", "o", ranks=2)
        size = os.path.getsize(self.path("data/train/img_0_of_1.tfrecord"))
        t = self.epochs("o")[0]["train"]
        self.assertEqual(t["steps_per_rank"], 5)
        self.assertEqual(t["samples"], 20)
        self.assertEqual(t["bytes_read"], 2 * size)

    def test_map_threads_spend_the_preprocess_time(self):
        # 8 steps of 4 records x 10 ms: 320 ms of map work, shared by 2 threads: at least 160 ms.
        self.ok("run", "default", *TF, "dataset.num_files_train=4", "dataset.num_samples_per_file=8",
                "reader.batch_size=4", "reader.preprocess_time=0.01", "reader.computation_threads=2",
                "train.epochs=1", "--output", "o")
        s = self.summary("o")
        self.assertEqual(s["trainio"]["epochs"][0]["train"]["samples"], 32)
        self.assertLess(s["metric"]["train_au_mean_percentage"], 50)

    def test_a_corrupt_record_stops_the_run_naming_the_file(self):
        self.ok("generate", "default", *TF, "dataset.num_files_train=2", "dataset.num_samples_per_file=4")
        corrupt(self.path("data/train/img_1_of_2.tfrecord"), 100)
        r = self.run_trainio("run", "default", *TF, "workflow.generate_data=false", "dataset.num_files_train=2",
                             "dataset.num_samples_per_file=4", "--output", "o")
        self.assertEqual(r.code, 1, r)
        self.assertIn("img_1_of_2.tfrecord", r.err)
        self.assertIn("bad data CRC", r.err)
        self.assertNotIn("Traceback", r.err)

    def test_a_missing_file_stops_the_run_when_it_is_opened(self):
        self.ok("generate", "default", *TF, "dataset.num_files_train=3", "dataset.num_samples_per_file=4")
        os.remove(self.path("data/train/img_2_of_3.tfrecord"))
        r = self.run_trainio("run", "default", *TF, "workflow.generate_data=false", "dataset.num_files_train=3",
                             "dataset.num_samples_per_file=4", "--output", "o", ranks=2)
        self.assertEqual(r.code, 1, r)
        self.assertIn("img_2_of_3.tfrecord", r.err)
        self.assertIn("No such file or directory", r.err)
        self.assertIn("fix:", r.err)
        self.assertEqual(r.err.count("img_2_of_3.tfrecord"), 1)  # reported once, by the lowest failing rank


NPZ = ["dataset.data_folder=data", "workflow.generate_data=true", "workflow.evaluation=false",
       "dataset.num_files_train=8", "dataset.num_samples_per_file=4", "dataset.record_length_bytes=4096",
       "reader.batch_size=2", "train.epochs=1", "train.computation_time=0.001", "reader.sample_shuffle=off",
       "reader.file_shuffle=off"]


class OtherLoadersTest(TrainioTest):
    def train(self, *args, ranks=None):
        self.ok("run", "default", *NPZ, *args, "--output", "o", ranks=ranks)
        return self.summary("o")["trainio"]["epochs"][0]["train"]

    def test_tensorflow_generators_load_each_file_once_per_slice(self):
        # Two generator threads walk 16 samples each, file after file: numpy loads each file once,
        # where PyTorch's read_index loads it for every sample.
        t = self.train("framework=tensorflow", "reader.data_loader=tensorflow", "reader.read_threads=2")
        self.assertEqual((t["steps_per_rank"], t["samples"]), (16, 32))
        self.assertEqual(t["io"]["open"]["count"], 8)
        self.ok("run", "default", *NPZ, "reader.data_loader=pytorch", "reader.read_threads=2", "--output", "p")
        self.assertEqual(self.summary("p")["trainio"]["epochs"][0]["train"]["io"]["open"]["count"], 32)

    def test_tensorflow_generator_slices_need_not_align_with_files(self):
        # Three threads: slices of 12, 10 and 10 samples; files split between threads load twice.
        t = self.train("framework=tensorflow", "reader.data_loader=tensorflow", "reader.read_threads=3")
        self.assertEqual(t["io"]["open"]["count"], 11)

    def test_dali_reads_each_sample_through_the_framework_reader(self):
        t = self.train("reader.data_loader=dali", "reader.read_threads=3", "reader.prefetch_size=3")
        self.assertEqual((t["steps_per_rank"], t["samples"]), (16, 32))
        self.assertEqual(t["io"]["open"]["count"], 32)

    def test_dali_ranks_take_contiguous_shards(self):
        t = self.train("reader.data_loader=dali", "reader.read_threads=2", ranks=2)
        self.assertEqual((t["steps_per_rank"], t["samples"]), (8, 32))

    def test_native_dali_reads_each_sample_once(self):
        t = self.train("reader.data_loader=native_dali", "reader.read_threads=2")
        self.assertEqual(t["samples"], 32)
        self.assertEqual(t["io"]["read"]["count"], 32)
        self.assertEqual(t["bytes_read"], 32 * 4096)

    def test_dali_without_threads_reads_in_the_training_thread(self):
        t = self.train("reader.data_loader=dali", "reader.read_threads=0")
        self.assertEqual(t["samples"], 32)

    def test_synthetic_loader_reads_nothing(self):
        t = self.train("reader.data_loader=synthetic")
        self.assertEqual(t["samples"], 32)
        self.assertEqual(t["bytes_read"], 0)
