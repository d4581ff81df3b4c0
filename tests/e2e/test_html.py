"""The HTML reports: self-contained files (inline SVG, no script, nothing fetched) that a real
browser renders: Debian's chromium, headless, draws them to a screenshot that holds the charts."""
import csv
import json
import os
import re
import shutil
import subprocess
import unittest
import xml.etree.ElementTree as ET

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
SVG = "{http://www.w3.org/2000/svg}"
UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def charts(html):
    """Each chart of a page by its title (its aria-label), as parsed SVG."""
    out = {}
    for m in re.finditer(r"<svg .*?</svg>", html, re.S):
        root = ET.fromstring(m.group(0))
        out[root.get("aria-label")] = root
    return out


def marks(chart, tag):
    """A chart's bars ("rect") or points ("circle") that carry a value: (label, value, element),
    from each one's <title>, "LABEL: VALUE"."""
    out = []
    for e in chart.iter(SVG + tag):
        title = e.find(SVG + "title")
        if title is not None:
            label, _, value = title.text.rpartition(": ")
            out.append((label, float(value), e))
    return out


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
                      "Training latency percentiles, whole run (3 epochs)", "target 90%"):
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

    def test_the_latency_chart_shows_the_tables_population(self):
        """The latency chart and the table under it give the same figures: every epoch's training
        together, as summary.json's trainio.train holds them (the last epoch's alone differ)."""
        self.ok("run", "default", "dataset.data_folder=d", "workflow.generate_data=true", *RUN, "--output", "a")
        self.ok("report", self.path("a"), "--html", "a.html")
        html = self.read_text("a.html")
        chart = [(title, c) for title, c in charts(html).items() if "atency percentiles" in title]
        self.assertEqual(len(chart), 1, list(charts(html)))
        title, chart = chart[0]
        plotted = {label: value for label, value, _ in marks(chart, "rect")}
        table = re.search(r"<pre>(.*)</pre>", html, re.S).group(1)
        s = self.summary("a")
        for name, key in (("sample read", "sample_read_seconds"), ("batch wait", "batch_wait_seconds")):
            row = re.search(name + r"\s+p50 (\S+ \S+)  p90 (\S+ \S+)  p99 (\S+ \S+)  max (\S+ \S+)", table)
            self.assertIsNotNone(row, table)
            printed = [float(v.split()[0]) * UNITS[v.split()[1]] for v in row.groups()]
            # The table rounds to its last printed digit ("3.8 us" stands for 3.75-3.85 us).
            rounding = [0.5 * 10.0 ** -len(v.split()[0].partition(".")[2]) * UNITS[v.split()[1]] for v in row.groups()]
            for p, text, half in zip(("p50", "p90", "p99", "max"), printed, rounding):
                bar = [v for label, v in plotted.items() if label.startswith(name) and label.endswith(" " + p)]
                self.assertEqual(len(bar), 1, (name, p, plotted))
                self.assertAlmostEqual(bar[0], text, delta=half * 1.001, msg=f"{name} {p}: chart {bar[0]}, table {text}")
                self.assertAlmostEqual(bar[0], s["trainio"]["train"][key][p], delta=text * 0.001, msg=f"{name} {p}")
        self.assertEqual(title, "Training latency percentiles, whole run (3 epochs)")

    def test_a_single_writers_checkpoint_chart_shows_its_figures(self):
        """ZeRO 0 on 2 ranks: data rank 0 writes every file, rank 1 none. One rank moved all the bytes,
        so its bandwidth over the checkpoint's duration is the checkpoint's; the chart's bars are
        summary.json's figures. With checkpoint.rank_sync every rank's time runs to a barrier the idle
        rank may leave last."""
        for name, sync in (("ck", []), ("ck-sync", ["checkpoint.rank_sync=true"])):
            with self.subTest(name):
                self.check_single_writer(name, sync)

    def check_single_writer(self, name, overrides):
        self.ok("run", "default", *CHECKPOINT_MODEL, "model.parallelism.zero_stage=0", "checkpoint.num_checkpoints_write=2",
                "checkpoint.num_checkpoints_read=1", f"checkpoint.checkpoint_folder={name}-files", *overrides,
                "--output", name, ranks=2)
        s = self.summary(name)
        checkpoints = s["trainio"]["checkpoint"]["checkpoints"]
        self.assertEqual([(c["kind"], c["index"], c["ranks_with_data"]) for c in checkpoints],
                         [("save", 1, 1), ("save", 2, 1), ("load", 1, 1)])
        self.ok("report", self.path(name), "--html", name + ".html")
        chart = [c for title, c in charts(self.read_text(name + ".html")).items() if title.startswith("Checkpoint bandwidth")]
        self.assertEqual(len(chart), 1)
        bars = marks(chart[0], "rect")
        of = lambda series, category: [v for label, v, _ in bars if label.startswith(series) and label.endswith(category)]
        for c in checkpoints:
            category = f"{c['kind']} {c['index']}"
            every, slowest = of("all ranks", category), of("slowest rank", category)
            self.assertEqual((len(every), len(slowest)), (1, 1), [label for label, _, _ in bars])
            self.assertLessEqual(slowest[0], every[0], f"{category}: the slowest rank's bar is above all ranks'")
        if not overrides:
            # The rank that wrote nothing only made the folder: its time is its own, not its wait for rank 0.
            writer, idle = self.read_json(name, "0_per_epoch_stats.json"), self.read_json(name, "1_per_epoch_stats.json")
            for key in ("save_ckpt1", "save_ckpt2"):
                self.assertLess(idle["1"][key]["duration"], writer["1"][key]["duration"] / 2, key)
        for c in checkpoints:
            # The writer's own I/O took longest; its bytes are all the checkpoint's, over the same duration.
            self.assertEqual(c["slowest_rank"], 0)
            self.assertEqual(c["slowest_rank_file_bytes"], c["file_bytes"])
            self.assertAlmostEqual(c["slowest_rank_bytes_per_second"], c["bytes_per_second"], delta=c["bytes_per_second"] * 1e-9)
            category = f"{c['kind']} {c['index']}"
            every, slowest = of("all ranks", category)[0], of("slowest rank", category)[0]
            self.assertAlmostEqual(every, c["bytes_per_second"] / 2**30, delta=every * 1e-3)
            self.assertAlmostEqual(slowest, c["slowest_rank_bytes_per_second"] / 2**30, delta=every * 1e-3)
        # The legend says what each bar is.
        legend = [t.text for t in chart[0].iter(SVG + "text")]
        self.assertIn("all ranks' bytes / duration", legend)
        self.assertIn("slowest rank's bytes / duration", legend)

    def test_a_sweeps_report_draws_each_point_against_the_target(self):
        self.ok("sweep", "default", "dataset.data_folder=d", "workflow.generate_data=true", *RUN,
                "--vary", "reader.read_threads=1,2", "--ranks", "1,2", "--output", "s")
        html = self.read_text("s", "report.html")
        self.check_self_contained(html)
        # No line joins two configurations: ranks on the x axis, one line per figure and read_threads
        # value, each point where sweep.csv puts it.
        au = [c for title, c in charts(html).items() if title.startswith("AU ")]
        self.assertEqual(len(au), 1, list(charts(html)))
        lines = list(au[0].iter(SVG + "polyline"))
        self.assertEqual(len(lines), 4, "a line per figure (AU mean, lowest epoch) and read_threads value")
        with open(self.path("s", "sweep.csv")) as f:
            rows = {(r["ranks"], r["reader.read_threads"]): r for r in csv.DictReader(f)}
        at = {}  # where each configuration's points are drawn
        for label, value, e in marks(au[0], "circle"):
            m = re.fullmatch(r"(AU mean|lowest epoch) \(reader\.read_threads=(\d+)\), ranks (\d+)", label)
            self.assertIsNotNone(m, f"{label!r} does not name its configuration")
            figure, threads, ranks = m.groups()
            column = "au_mean_percent" if figure == "AU mean" else "au_min_percent"
            self.assertAlmostEqual(value, float(rows[(ranks, threads)][column]), delta=0.01, msg=label)
            at.setdefault((e.get("cx"), e.get("cy")), set()).add((figure, threads))
        joined = []
        for line in lines:
            vertices = [tuple(v.split(",")) for v in line.get("points").split()]
            self.assertEqual(len(vertices), 2, "a vertex per rank count")
            common = set.intersection(*(at.get(v, set()) for v in vertices))
            self.assertTrue(common, f"a line joins points of different configurations: {[at.get(v) for v in vertices]}")
            joined.append(common)
        self.assertEqual(set.union(*joined), {(f, t) for f in ("AU mean", "lowest epoch") for t in ("1", "2")})
        for title in ("AU against ranks", "Training throughput against ranks", "Measured read bandwidth against ranks",
                      "target 90%"):
            self.assertIn(title, html)
        self.assertEqual(html.count("<tr>"), 5)  # a header and a row per point
        self.assertIn("ranks=2,reader.read_threads=1", html)
        # The bars, too, by configuration.
        for title, column in (("Training throughput against ranks", "samples_per_second_mean"),
                              ("Measured read bandwidth against ranks", "read_MiB_per_second_mean")):
            bars = marks(charts(html)[title], "rect")
            self.assertEqual(len(bars), 4, title)
            for label, value, _ in bars:
                m = re.fullmatch(r".* \(reader\.read_threads=(\d+)\), ranks (\d+)", label)
                self.assertIsNotNone(m, label)
                expected = float(rows[(m.group(2), m.group(1))][column])
                self.assertAlmostEqual(value, expected, delta=max(0.06, expected * 1e-3), msg=label)
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
