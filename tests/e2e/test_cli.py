"""The command line: help, exit codes, clear errors, workloads and config output."""
import os
import subprocess
from harness import TrainioTest


class CliTest(TrainioTest):
    def test_help_teaches(self):
        r = self.ok("--help")
        for word in ("run", "generate", "config", "workloads", "Examples", "Exit codes"):
            self.assertIn(word, r.out)
        r = self.ok("run", "--help")
        self.assertIn("++workload.section.key=value", r.out)
        self.assertIn("--output", r.out)

    def usage_error(self, *args):
        """A command line CLI11 refuses: exit 2, one 'trainio: usage error' line and a fix line."""
        r = self.run_trainio(*args)
        self.assertEqual(r.code, 2, r)
        self.assertRegex(r.err, r"^trainio: usage error: .+\n  fix: .+", r)
        return r.err

    def test_no_subcommand_is_a_usage_error(self):
        self.assertIn("no subcommand", self.usage_error())

    def test_unknown_option_is_a_usage_error(self):
        err = self.usage_error("run", "--bogus")
        self.assertIn("--bogus", err)
        self.assertIn("trainio run --help", err)

    def test_an_unknown_option_before_the_subcommand_is_named_not_taken_for_a_missing_subcommand(self):
        err = self.usage_error("--bogus")
        self.assertIn("unknown option '--bogus'", err)
        self.assertNotIn("A subcommand is required", err)

    def test_a_misspelled_subcommand_gets_a_suggestion(self):
        err = self.usage_error("genrate", "default")
        self.assertIn("unknown subcommand 'genrate'", err)
        self.assertIn("did you mean 'generate'", err)

    def test_counts_out_of_range_say_what_is_allowed(self):
        for args in (["config", "default", "--ranks", "0"], ["datasize", "default", "-n", "-3"]):
            err = self.usage_error(*args)
            self.assertIn("1 or more", err)
            self.assertNotIn("1.79", err)
            self.assertNotIn("e+308", err)
            self.assertNotIn("0.000000", err)

    def test_a_negative_or_non_numeric_stall_timeout_says_what_is_allowed(self):
        for value in ("-1", "abc"):
            err = self.usage_error("run", "default", "--stall-timeout", value)
            self.assertIn(f"--stall-timeout: must be a number of seconds, 0 or more, not '{value}'", err)
            self.assertIn("fix:", err)
            self.assertNotIn("e+308", err)
            self.assertNotIn("0.000000", err)

    def test_workloads_lists_shipped_ones_with_descriptions(self):
        r = self.ok("workloads")
        names = [line.split()[0] for line in r.out.splitlines()]
        for name in ("default", "unet3d_h100", "unet3d_a100"):
            self.assertIn(name, names)
        self.assertTrue(all(len(line.split()) > 3 for line in r.out.splitlines()))

    def test_config_prints_yaml_and_derived_figures(self):
        r = self.ok("config", "unet3d_h100", "--ranks", "2", "++workload.dataset.num_files_train=16")
        self.assertIn("num_files_train: 16", r.out)
        self.assertIn("# derived for 2 ranks", r.out)
        self.assertIn("1 steps x batch 7", r.out)           # floor(16 / (7 * 2))
        self.assertIn("2 dropped", r.out)
        self.assertNotIn("not acted on by this build", r.out)  # every key of unet3d is used
        self.assertEqual(r.err, "")
        r = self.ok("config", "unet3d_h100", "reader.file_access=shared")
        pending = [l for l in r.out.splitlines() if "not acted on by this build" in l]
        self.assertEqual(len(pending), 1, r.out)
        self.assertIn("reader.file_access", pending[0])

    def test_config_output_loads_again(self):
        r = self.ok("config", "default", "reader.batch_size=2")
        with open(self.path("resolved.yaml"), "w") as f:
            f.write(r.out)
        again = self.ok("config", self.path("resolved.yaml"))
        strip = lambda text: [l for l in text.splitlines() if not l.startswith("#")]
        self.assertEqual(strip(again.out), strip(r.out))

    def test_config_keys_lists_every_key(self):
        r = self.ok("config", "--keys")
        for key in ("reader.batch_size", "dataset.record_length_bytes", "checkpoint.fsync", "train.computation_time"):
            self.assertIn(key, r.out)
        self.assertIn("no effect (DLIO ignores it too)", r.out)

    def test_config_keys_of_one_section(self):
        keys = [line for line in self.ok("config", "--keys", "reader").out.splitlines() if not line.startswith(" ")]
        self.assertIn("reader.batch_size", keys)
        self.assertTrue(keys and all(k.startswith("reader.") for k in keys), keys)
        err = self.usage_error("config", "--keys", "readr")
        self.assertIn("no section 'readr'", err)
        self.assertIn("did you mean 'reader'", err)

    def test_config_error_has_location_suggestion_and_exit_2(self):
        with open(self.path("bad.yaml"), "w") as f:
            f.write("framework: pytorch\nreader:\n  data_loader: pytorch\n  batchsize: 4\n")
        r = self.run_trainio("config", self.path("bad.yaml"))
        self.assertEqual(r.code, 2, r)
        self.assertIn("bad.yaml:4:3", r.err)
        self.assertIn("did you mean 'reader.batch_size'?", r.err)
        self.assertNotIn("terminate", r.err)
        self.assertEqual(len(r.err.strip().splitlines()), 2, r)  # one message and its fix

    def test_wrong_value_names_key_and_expectation(self):
        r = self.run_trainio("run", "default", "reader.batch_size=abc")
        self.assertEqual(r.code, 2, r)
        self.assertIn("reader.batch_size: expected an integer >= 1, got 'abc'", r.err)
        r = self.run_trainio("run", "default", "reader.batch_size=-3")
        self.assertEqual(r.code, 2, r)

    def test_impossible_combination(self):
        r = self.run_trainio("config", "default", "framework=tensorflow", "reader.data_loader=pytorch")
        self.assertEqual(r.code, 2, r)
        self.assertIn("do not go together", r.err)

    def test_unknown_workload(self):
        r = self.run_trainio("config", "unet3d_h1000")
        self.assertEqual(r.code, 2, r)
        self.assertIn("did you mean 'unet3d_h100'", r.err)

    def test_odirect_with_tensorflow_over_tfrecord_is_a_config_error(self):
        r = self.run_trainio("config", "default", "framework=tensorflow", "reader.data_loader=tensorflow",
                             "dataset.format=tfrecord", "reader.odirect=true")
        self.assertEqual(r.code, 2, r)
        self.assertIn("reader.odirect does not apply to the tensorflow loader", r.err)

    def test_native_dali_with_framework_access_is_a_config_error(self):
        r = self.run_trainio("run", "default", "reader.data_loader=native_dali", "reader.access=framework",
                             "dataset.data_folder=d")
        self.assertEqual(r.code, 2, r)
        self.assertIn("native_dali", r.err)
        self.assertIn("remove reader.access", r.err)
        self.assertFalse(os.path.exists(self.path("d")))  # refused before any I/O


class SubcommandHelpTest(TrainioTest):
    def test_each_subcommand_shows_its_own_examples(self):
        seen = set()
        subs = ("run", "generate", "config", "validate", "workloads", "datasize", "report", "compare", "sweep",
                "max-accelerators")
        for sub in subs:
            out = self.ok(sub, "--help").out
            examples = out[out.index("Examples:"):]
            lines = [line for line in examples.splitlines()[1:] if line.startswith("  trainio") or "trainio " + sub in line]
            self.assertTrue(any(f"trainio {sub}" in line for line in lines), f"{sub}: {examples}")
            self.assertIn("Exit codes", examples)
            seen.add(examples)
        self.assertEqual(len(seen), len(subs))  # no two subcommands share their examples
