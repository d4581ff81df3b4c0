"""The HTML reports: self-contained files (inline SVG, no script, nothing fetched) that a real
browser renders: Debian's chromium, headless, draws them to a screenshot that holds the charts."""
import os
import re
import shutil
import subprocess
import unittest

from PIL import Image

from harness import TrainioTest
from test_checkpoint import TINY as CHECKPOINT_MODEL

CHROMIUM = shutil.which("chromium")
RUN = ["dataset.num_files_train=8", "dataset.num_samples_per_file=8", "dataset.record_length_bytes=16384",
       "dataset.record_length_bytes_stdev=0", "dataset.num_files_eval=0", "workflow.evaluation=false",
       "train.epochs=3", "train.computation_time=0.002", "reader.batch_size=2"]
# The charts' first colour (AU, sample reads, ...) and the AU target's red line, as drawn.
BLUE = (0x1f, 0x77, 0xb4)
RED = (0xd6, 0x27, 0x28)


class HtmlReportTest(TrainioTest):
    def check_self_contained(self, html):
        self.assertTrue(html.startswith("<!DOCTYPE html>"))
        self.assertNotIn("<script", html.lower())
        self.assertNotIn("<img", html.lower())
        self.assertNotIn("<link", html.lower())
        # No address but SVG's namespace name, which is never fetched.
        self.assertEqual(set(re.findall(r"https?://[^\"' )]+", html)), {"http://www.w3.org/2000/svg"})

    def screenshot(self, html_path, png):
        """Chromium's rendering of the page, as an RGB image."""
        proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                               f"--screenshot={png}", "--window-size=1400,2400", "file://" + html_path],
                              capture_output=True, text=True, timeout=120, cwd=self.dir)
        self.assertTrue(os.path.exists(png), proc.stderr[-2000:])
        return Image.open(png).convert("RGB")

    def longest_row(self, image, colour):
        """The most pixels of about `colour` in one row: a horizontal line across a chart has hundreds."""
        width, height = image.size
        data = list(image.getdata())
        near = lambda p: sum(abs(a - b) for a, b in zip(p, colour)) <= 60
        return max(sum(1 for p in data[y * width:(y + 1) * width] if near(p)) for y in range(height))

    def count(self, image, colour):
        """Pixels of about `colour` (lines at fractional positions are drawn blended)."""
        return sum(1 for p in image.getdata() if sum(abs(a - b) for a, b in zip(p, colour)) <= 60)

    def test_a_runs_charts_are_drawn_by_a_browser(self):
        self.ok("run", "default", "dataset.data_folder=d", "workflow.generate_data=true", *RUN, "--output", "a")
        self.ok("run", "default", "dataset.data_folder=d", *RUN, "--output", "b")
        self.ok("run", "default", *CHECKPOINT_MODEL, "checkpoint.num_checkpoints_write=2",
                "checkpoint.num_checkpoints_read=1", "--output", "ck")
        r = self.ok("report", self.path("a"), "--html", "a.html")
        self.assertIn("charts: a.html", r.out)
        html = self.read_text("a.html")
        self.check_self_contained(html)
        for title in ("Accelerator utilisation per epoch", "Training throughput per epoch",
                      "Measured read bandwidth per epoch", "Where each rank&#39;s step time went",
                      "Latency percentiles, epoch 3", "target 90%"):
            self.assertIn(title.replace("&#39;", "'"), html)
        self.assertEqual(html.count("<svg"), 5)
        self.assertIn("accelerator util. (AU)", html)  # the end-of-run table, too

        if not CHROMIUM:
            self.skipTest("chromium is not installed (scripts/lib/deps.sh installs it): the page was not rendered")
        image = self.screenshot(self.path("a.html"), self.path("a.png"))
        colours = image.getcolors(maxcolors=1 << 20)
        self.assertGreater(len(colours), 50, "the screenshot is blank")
        self.assertGreater(self.count(image, BLUE), 500, "no chart series was drawn")
        self.assertGreater(self.longest_row(image, RED), 200, "the AU target line was not drawn")

        # Several runs: side by side first; a checkpoint run's bandwidth chart.
        self.ok("report", self.path("a"), self.path("b"), self.path("ck"), "--html", "all.html")
        html = self.read_text("all.html")
        self.check_self_contained(html)
        self.assertIn("The runs side by side", html)
        self.assertIn("Checkpoint bandwidth", html)
        image = self.screenshot(self.path("all.html"), self.path("all.png"))
        self.assertGreater(self.count(image, BLUE), 1000)

        # Never over an existing file.
        r = self.run_trainio("report", self.path("a"), "--html", "a.html")
        self.assertEqual(r.code, 2, r)
        self.assertIn("exists", r.err)

    def test_a_sweeps_report_draws_each_point_against_the_target(self):
        self.ok("sweep", "default", "dataset.data_folder=d", "workflow.generate_data=true", *RUN,
                "--vary", "reader.read_threads=1,2", "--ranks", "1,2", "--output", "s")
        html = self.read_text("s", "report.html")
        self.check_self_contained(html)
        for title in ("AU per point", "Training throughput per point", "Measured read bandwidth per point", "target 90%"):
            self.assertIn(title, html)
        self.assertEqual(html.count("<tr>"), 5)  # a header and a row per point
        self.assertIn("ranks=2,reader.read_threads=1", html)
        # Its runs side by side are named by their points, not four times "run1".
        self.ok("report", self.path("s"), "--html", "runs.html")
        labels = re.findall(r">([^<>]+/run1)</text>", self.read_text("runs.html"))
        self.assertEqual(len(set(labels)), 4, labels)
        if not CHROMIUM:
            self.skipTest("chromium is not installed (scripts/lib/deps.sh installs it): the page was not rendered")
        image = self.screenshot(self.path("s", "report.html"), self.path("s.png"))
        self.assertGreater(self.count(image, BLUE), 500)
        self.assertGreater(self.longest_row(image, RED), 200, "the AU target line was not drawn")


if __name__ == "__main__":
    unittest.main()
