#!/usr/bin/env python3
"""End-to-end tests of `pathbench fleet` with the real binary on real H200 results
(tests/fixtures/fleet: nine runs of an unchanged node, one run beside `pathbench stress`).

    python3 tests/e2e/test_fleet.py --pathbench build/release/pathbench --source . [--chromium PATH]

Checks: the nine are judged with no outlier (exit 0); adding the contended run flags it, with
the other GPU process as its difference, in the table, JSON, JUnit and HTML (exit 1); a directory
is read with other JSON passed over; too few nodes exit 2; bad input exits 3 naming the file and
writes nothing. The HTML page is rendered by headless Chromium when it is installed.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

import harness

PATHBENCH: Path = Path("pathbench")
SOURCE: Path = Path(".")


def fleet(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PATHBENCH), "fleet", *map(str, args)], capture_output=True, text=True,
                          timeout=120)


class Fleet(unittest.TestCase):
    nine: list[Path]
    contended: Path

    @classmethod
    def setUpClass(cls) -> None:
        fixtures = SOURCE / "tests" / "fixtures" / "fleet"
        cls.nine = sorted((fixtures / "h200").glob("run-*.json"))
        cls.contended = fixtures / "h200-contended.json"

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="pathbench-fleet-"))

    def tearDown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_nine_unchanged_runs_have_no_outlier(self) -> None:
        self.assertEqual(len(self.nine), 9)
        out = self.tmp / "fleet.json"
        proc = fleet(*self.nine, "--json", out)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("9 nodes", proc.stdout)
        self.assertIn("pathbench fleet: no outlier", proc.stdout)
        report = json.loads(out.read_text())
        self.assertEqual(report["schema"], "pathbench.fleet/v1")
        self.assertEqual(report["outliers"], 0)
        (group,) = report["groups"]
        self.assertTrue(group["judged"])
        self.assertEqual(len(group["metrics"]), 29)
        self.assertEqual(sorted(n["label"] for n in group["nodes"]), [p.stem for p in self.nine])
        for m in group["metrics"]:
            self.assertEqual(len(m["nodes"]), 9, m["case"])
            for v in m["nodes"]:
                self.assertFalse(v["outlier"], (m["case"], v))
                self.assertGreaterEqual(v["z_limit"], 3.5)

    def test_contended_run_is_flagged_with_its_difference(self) -> None:
        junit, html, out = self.tmp / "fleet.xml", self.tmp / "fleet.html", self.tmp / "fleet.json"
        proc = fleet(*self.nine, self.contended, "--json", out, "--junit", junit, "--html", html)
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn("OUTLIER  h200-contended", proc.stdout)
        self.assertIn("another compute process", proc.stdout)
        report = json.loads(out.read_text())
        self.assertEqual(report["outliers"], 1)
        first = report["groups"][0]["nodes"][0]
        self.assertEqual(first["label"], "h200-contended")
        self.assertTrue(first["outlier"])
        self.assertTrue(any("direction=d2h" in f or "direction=h2d" in f for f in first["findings"]))
        self.assertTrue(any(d["field"] == "environment/noise" and d["majority"] == "none"
                            and d["majority_count"] == 9 for d in first["differences"]), first["differences"])
        for node in report["groups"][0]["nodes"][1:]:
            self.assertFalse(node["outlier"], node["label"])
        suites = ET.parse(junit).getroot()
        self.assertEqual(suites.get("tests"), "10")
        self.assertEqual(suites.get("failures"), "1")
        failed = [c.get("name") for c in suites.iter("testcase") if c.find("failure") is not None]
        self.assertEqual(failed, ["h200-contended"])
        page = html.read_text()
        self.assertLess(page.index("h200-contended"), page.index("run-1"), "outliers first")
        self.assertIn("(outlier)", page)
        chromium = CHROMIUM or shutil.which("chromium") or "/usr/bin/chromium"
        if Path(chromium).exists():
            shot = self.tmp / "fleet.png"
            profile = tempfile.mkdtemp(prefix="pathbench-chromium-")
            try:
                subprocess.run([chromium, "--headless", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage",
                                "--no-first-run", f"--user-data-dir={profile}", f"--screenshot={shot}",
                                "--window-size=1400,1200", html.resolve().as_uri()],
                               capture_output=True, text=True, timeout=120)
            finally:
                shutil.rmtree(profile, ignore_errors=True)
            self.assertTrue(shot.is_file() and shot.stat().st_size > 10000, "Chromium rendered the page")

    def test_eighteen_runs_of_two_nodes_stay_green(self) -> None:
        # Two sets of nine runs (two H200 nodes of one type): single-run tails make suspects
        # (one metric just beyond its threshold), never an outlier.
        out = self.tmp / "fleet.json"
        proc = fleet(self.nine[0].parent, self.nine[0].parent.parent / "h200-b", "--json", out)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("18 nodes", proc.stdout)
        report = json.loads(out.read_text())
        nodes = report["groups"][0]["nodes"]
        self.assertEqual(len(nodes), 18)
        for n in nodes:
            self.assertFalse(n["outlier"], n)
            self.assertLessEqual(n["outlier_metrics"], 1, n)
            self.assertEqual(n["suspect"], n["outlier_metrics"] == 1)

    def test_membw_contention_is_flagged_with_the_busy_cpu(self) -> None:
        fixtures = self.nine[0].parent.parent
        proc = fleet(fixtures / "h200-b", fixtures / "h200-b-membw.json")
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn("OUTLIER  h200-b-membw", proc.stdout)
        self.assertRegex(proc.stdout, r"differs: CPU busy during the run \d+ % \(group: median \d+ % on 9 of 9\)")

    def test_directory_input_passes_over_other_json(self) -> None:
        results = self.tmp / "results"
        results.mkdir()
        for p in self.nine[:4]:
            shutil.copy(p, results / p.name)
        (results / "fleet.json").write_text(json.dumps({"schema": "pathbench.fleet/v1"}))
        proc = fleet(results)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("4 nodes", proc.stdout)
        self.assertIn("fleet.json is not a pathbench.result/v1 file: passed over", proc.stderr)

    def test_too_few_nodes_exit_2(self) -> None:
        proc = fleet(*self.nine[:2])
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn("at least 3 are needed", proc.stdout)

    def test_bad_input_exit_3_and_nothing_written(self) -> None:
        bad = self.tmp / "bad.json"
        doc = json.loads(self.nine[0].read_text())
        doc["cases"][0]["status"] = "exploded"
        bad.write_text(json.dumps(doc))
        out = self.tmp / "fleet.json"
        for args, needle in (((*self.nine[:3], bad), "bad.json"),
                             ((*self.nine[:3], self.tmp / "missing.json"), "missing.json"),
                             ((*self.nine[:3], "--z-limit", "0"), "--z-limit"),
                             ((*self.nine[:3], "--alpha", "1"), "--alpha")):
            proc = fleet(*args, "--json", out)
            self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
            self.assertIn(needle, proc.stderr)
            self.assertNotIn("Traceback", proc.stderr)
            self.assertFalse(out.exists(), "nothing written on bad input")
        # A named file that is not a result is bad input, unlike one met in a directory.
        other = self.tmp / "other.json"
        other.write_text(json.dumps({"schema": "pathbench.fleet/v1"}))
        proc = fleet(*self.nine[:3], other)
        self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
        self.assertIn("other.json", proc.stderr)


CHROMIUM: str | None = None


def main() -> int:
    global PATHBENCH, SOURCE, CHROMIUM
    PATHBENCH, SOURCE, rest = harness.parse_binary_args(__doc__ or "")
    if "--chromium" in rest:
        i = rest.index("--chromium")
        CHROMIUM = rest[i + 1]
        del rest[i:i + 2]
    return harness.run_unittests(rest)


if __name__ == "__main__":
    sys.exit(main())
