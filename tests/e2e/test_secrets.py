"""Secrets never leave: a secret given as an override (any key named *secret*, *password* or
*token*) or in a URL's user-info is shown and stored as ***, in everything a run, a sweep and a
failing run leave (console, dlio.log, results, .hydra files, campaign records, errors); a misspelled
key's value is never echoed; credentials in endpoint_url are refused before anything runs."""
import os
import uuid

from harness import TrainioTest

SECRET = "trainio-secret-" + uuid.uuid4().hex
TINY = ["dataset.data_folder=d", "dataset.num_files_train=8", "dataset.num_samples_per_file=2",
        "dataset.record_length_bytes=4096", "dataset.num_files_eval=0", "workflow.evaluation=false",
        "dataset.num_subfolders_train=0", "dataset.num_subfolders_eval=0", "train.epochs=1", "reader.batch_size=2"]
SECRET_OVERRIDE = f"storage.storage_options.secret_access_key={SECRET}"


class SecretsTest(TrainioTest):
    def setUp(self):
        super().setUp()
        self.outputs = []  # every command's stdout and stderr

    def trainio(self, *args, **kw):
        r = self.run_trainio(*args, **kw)
        self.outputs.append(r.out + r.err)
        return r

    def assert_nowhere(self, secret=SECRET):
        """The secret is in no file under the scratch folder and in no command's output."""
        for text in self.outputs:
            self.assertNotIn(secret, text)
        searched = 0
        for folder, _, files in os.walk(self.dir):
            for name in files:
                path = os.path.join(folder, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                with open(path, "rb") as f:
                    self.assertNotIn(secret.encode(), f.read(), path)
                searched += 1
        return searched

    def test_a_run_a_sweep_and_failing_runs_keep_the_secret_nowhere(self):
        # A run that finishes, with everything it can write.
        r = self.trainio("run", "default", *TINY, "workflow.generate_data=true", SECRET_OVERRIDE,
                         "workflow.profiling=true", "--trace", "--log-level", "debug", "--output", "run")
        self.assertEqual(r.code, 0, r)
        config = self.summary("run")["trainio"]["workload"]["config"]["storage"]["storage_options"]
        self.assertEqual(config["secret_access_key"], "***")
        self.assertIn("secret_access_key=***", self.read_text("run", ".hydra", "overrides.yaml"))
        self.assertRegex(self.read_text("run", ".hydra", "config.yaml"), r"secret_access_key: (\"\*\*\*\"|'\*\*\*')")

        # `config` shows the workload.
        r = self.trainio("config", "default", *TINY, SECRET_OVERRIDE)
        self.assertEqual(r.code, 0, r)
        self.assertIn("secret_access_key: '***'", r.out)

        # A sweep, then a second one into its folder that is refused: the refusal names the words.
        sweep = ["sweep", "default", *TINY, SECRET_OVERRIDE, "--vary", "reader.batch_size=1,2", "-o", "sw"]
        r = self.trainio(*sweep)
        self.assertEqual(r.code, 0, r)
        self.assertIn("secret_access_key=***", self.read_text("sw", "campaign.json"))
        r = self.trainio("sweep", "default", *TINY, "train.epochs=2", SECRET_OVERRIDE, "--vary", "reader.batch_size=1",
                         "-o", "sw")
        self.assertEqual(r.code, 2, r)
        self.assertIn("secret_access_key=***", r.err)
        # Rerun as it was: the same words (the secret compared as given), resumed, nothing run again.
        r = self.trainio(*sweep)
        self.assertEqual(r.code, 0, r)
        # A secret cannot be swept over: its values would name the points' folders.
        r = self.trainio("sweep", "default", *TINY, "--vary", f"storage.storage_options.secret_access_key=a,{SECRET}",
                         "-o", "sw2")
        self.assertEqual(r.code, 2, r)

        # Failing runs: a misspelled secret key (with and without 'secret' in its name), a value
        # of the wrong kind, a bad override, credentials in the endpoint's URL.
        for bad in [f"storage.storage_options.secret_acess_key={SECRET}",
                    f"storage.storage_options.scret_access_key={SECRET}",
                    f"storage.storage_options.secret_access_key=[{SECRET}]",
                    f"storage.storage_options.secret_access_key={{a: {SECRET}}}",
                    f"++workload.storage.storage_options.pasword={SECRET}"]:
            with self.subTest(bad=bad):
                r = self.trainio("run", "default", *TINY, bad, "--output", "bad")
                self.assertEqual(r.code, 2, r)
                self.assertIn("fix: ", r.err)
        for url in [f"http://AKIAEXAMPLE:{SECRET}@127.0.0.1:9", f"https://{SECRET}@s3.example.com/"]:
            with self.subTest(url=url):
                r = self.trainio("run", "default", *TINY, "storage.storage_type=s3", "dataset.data_folder=s3://bucket/d",
                                 f"storage.storage_options.endpoint_url={url}", "storage.storage_options.access_key_id=A",
                                 SECRET_OVERRIDE, "framework=pytorch", "reader.data_loader=pytorch", "--output", "url")
                self.assertEqual(r.code, 2, r)
                self.assertIn("endpoint_url", r.err)
                self.assertIn("://***@", r.err)
                self.assertFalse(os.path.exists(self.path("url")))  # refused before the results folder
        r = self.trainio("run", "default", *TINY, "storage.storage_type=s3", "dataset.data_folder=s3://bucket/d",
                         "storage.storage_options.access_key_id=A", SECRET_OVERRIDE, "framework=pytorch",
                         "reader.data_loader=pytorch", "--output", "env-url",
                         env={"AWS_ENDPOINT_URL": f"http://A:{SECRET}@127.0.0.1:9"})
        self.assertEqual(r.code, 2, r)
        self.assertIn("AWS_ENDPOINT_URL", r.err)
        # A run that fails once it has begun (nothing answers at the endpoint): its dlio.log and
        # .hydra files stay.
        r = self.trainio("run", "default", *TINY, "storage.storage_type=s3", "dataset.data_folder=s3://bucket/d",
                         "storage.storage_options.endpoint_url=http://127.0.0.1:9",
                         "storage.storage_options.access_key_id=A", SECRET_OVERRIDE, "framework=pytorch",
                         "reader.data_loader=pytorch", "storage.storage_options.s3_max_attempts=1",
                         "workflow.generate_data=true", "--output", "failed", timeout=120)
        self.assertEqual(r.code, 1, r)
        self.assertIn("no answer", r.err)
        self.assertTrue(os.path.exists(self.path("failed", "dlio.log")))
        self.assertGreater(self.assert_nowhere(), 20)
