#!/usr/bin/env python3
"""End-to-end tests of the regression gate: `pathbench compare`, `baseline`, ci/gate.sh, and
`run --benchmark_out` / scenario gate blocks, with the real binary on real files.

    python3 tests/e2e/test_compare.py --pathbench build/pathbench --source . [unittest args]

Fixtures are copies of tests/fixtures/results/h200-default.json (a real H200 run) doctored here:
samples scaled and every statistic recomputed the way pathbench computes it (percentiles with
NumPy's linear interpolation, stddev with n-1, cv = stddev / mean). Needs no GPU; the two `run`
tests measure a 1 MiB host memcpy. Standard library only; finishes in a few seconds.

The rule under test: a case regresses when its median moves the bad way by more than its threshold
(gate metric threshold, else gate threshold_pct, else --threshold, default 5 %) and the two-sided
Mann-Whitney U p < alpha (0.05). Exit codes: 0 pass, 1 regression / failed case / floor not met,
2 missing or incomparable, 3 bad input (file and JSON pointer named).
"""
from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import harness

# Set by main() from --pathbench / --source.
PATHBENCH: Path = Path("pathbench")
SOURCE: Path = Path(".")

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_INCOMPLETE = 2
EXIT_BAD_INPUT = 3
COMPARE_SCHEMA = "pathbench.compare/v1"
SCENARIO_SCHEMA = "pathbench.scenario/v1"

PINNED_H2D_256M = ("copy/measure=bandwidth/direction=h2d/host_memory=pinned/host_node=local/"
                   "bytes=268435456")
PINNED_H2D_4M = ("copy/measure=bandwidth/direction=h2d/host_memory=pinned/host_node=local/"
                 "bytes=4194304")
PAGEABLE_D2H_64K = ("copy/measure=bandwidth/direction=d2h/host_memory=pageable-4k/host_node=local/"
                    "bytes=65536")
GEN5_X16_GB_PER_S = 32.0 * 16 * 128.0 / 130.0 / 8.0  # 63.015 GB/s raw per direction

Json = dict[str, Any]


# --- helpers ------------------------------------------------------------------------------------

def run(*args: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=timeout, check=False)


def pathbench(*args: str | Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return run(PATHBENCH, *args, **kwargs)


def describe(proc: subprocess.CompletedProcess[str]) -> str:
    return (f"exit {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}\n"
            f"--- stderr\n{proc.stderr[-4000:]}")


MIN_SAMPLES = 5  # fewer samples per metric cannot be tested: insufficient (exit 2)


def real_result() -> Json:
    """The real H200 run, less its cases of 3 repetitions (copy-pin-cost): the fixture predates
    the gate's minimum of 5 samples per metric, which default.json now meets."""
    with open(SOURCE / "tests/fixtures/results/h200-default.json", encoding="utf-8") as f:
        doc = json.load(f)
    doc["cases"] = [c for c in doc["cases"]
                    if all(len(m["samples"]) >= MIN_SAMPLES for m in c["metrics"].values())]
    return doc


RUN_FACTORS = (1.0, 1.001, 0.999, 1.0005, 0.9995)


def jittered_runs(doc: Json) -> list[Json]:
    """Five runs of `doc` whose medians wander by +-0.1 % (each run's samples scaled by one
    factor), started a minute apart: a baseline with a small, known between-run spread."""
    runs = []
    for i, factor in enumerate(RUN_FACTORS):
        r = copy.deepcopy(doc)
        r["context"]["start_time"] = f"2026-12-01T01:0{i}:00Z"
        r["context"]["end_time"] = f"2026-12-01T01:0{i}:30Z"
        for case in r["cases"]:
            for metric in case["metrics"].values():
                metric["samples"] = [x * factor for x in metric["samples"]]
                metric["stats"] = stats_of(metric["samples"])
        runs.append(r)
    return runs


def percentile(sorted_samples: list[float], q: float) -> float:
    """NumPy's default (linear) percentile of already sorted samples, q in [0, 1]."""
    pos = q * (len(sorted_samples) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_samples) - 1)
    return sorted_samples[lo] + (sorted_samples[hi] - sorted_samples[lo]) * (pos - lo)


def stats_of(samples: list[float]) -> Json:
    s = sorted(samples)
    n = len(s)
    mean = statistics.fmean(s)
    stddev = statistics.stdev(s) if n > 1 else 0.0
    return {"n": n, "median": statistics.median(s), "min": s[0], "max": s[-1], "mean": mean,
            "p10": percentile(s, 0.10), "p90": percentile(s, 0.90), "stddev": stddev,
            "cv": stddev / mean if mean else 0.0}


def find_case(result: Json, case_id: str) -> Json:
    for case in result["cases"]:
        if case["id"] == case_id:
            return case
    raise KeyError(case_id)


def scale_case(result: Json, case_id: str, bandwidth_factor: float) -> None:
    """Makes a copy case `bandwidth_factor` times as fast: bandwidths scale by it, times by its
    inverse; stats are recomputed from the new samples."""
    case = find_case(result, case_id)
    for metric in case["metrics"].values():
        factor = bandwidth_factor if metric["better"] == "higher" else 1 / bandwidth_factor
        metric["samples"] = [x * factor for x in metric["samples"]]
        metric["stats"] = stats_of(metric["samples"])


def set_samples(result: Json, case_id: str, metric: str, samples: list[float]) -> None:
    m = find_case(result, case_id)["metrics"][metric]
    m["samples"] = list(samples)
    m["stats"] = stats_of(m["samples"])


def file_name_label(text: str) -> str:
    """Mirrors cli::file_name_label: keep [A-Za-z0-9.-], runs of anything else become one '_'."""
    out = ""
    for ch in text:
        if ch.isascii() and (ch.isalnum() or ch in ".-"):
            out += ch
        elif out and not out.endswith("_"):
            out += "_"
    return out.rstrip("_") or "node"


def table_rows(stdout: str) -> list[str]:
    """The verdict rows of the comparison table: the lines after the header, before the floors."""
    lines = stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("verdict "))
    rows = []
    for line in lines[header + 1:]:
        if line.startswith("floor ") or re.match(r"^\d+ cases", line):
            break
        if line.startswith(" "):
            continue  # a reason under the row above
        rows.append(line)
    return rows


class TempDirTest(unittest.TestCase):
    """A fresh temporary folder per test (self.tmp), removed afterwards."""

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="pathbench-compare-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def write(self, name: str, doc: Json | str) -> Path:
        path = self.tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=1),
                        encoding="utf-8")
        return path

    def assert_exit(self, proc: subprocess.CompletedProcess[str], code: int) -> None:
        self.assertEqual(proc.returncode, code, describe(proc))

    def promote_five(self, doc: Json, directory: Path) -> Path:
        """`pathbench baseline promote` of five jittered runs of `doc`; the baseline's path."""
        files = [self.write(f"runs/run{i + 1}.json", r) for i, r in enumerate(jittered_runs(doc))]
        proc = pathbench("baseline", "promote", *files, "--dir", directory)
        self.assert_exit(proc, EXIT_OK)
        self.assertIn("5 runs", proc.stdout)
        return directory / f"{file_name_label(doc['context']['node_type'])}.json"

    def assert_bad_input(self, proc: subprocess.CompletedProcess[str], file: Path | str,
                         pointer: str) -> None:
        """Exit 3, stderr names the file and the JSON pointer ("FILE: POINTER: what")."""
        self.assert_exit(proc, EXIT_BAD_INPUT)
        self.assertIn(f"{file}: {pointer}", proc.stderr, describe(proc))


# --- compare ------------------------------------------------------------------------------------

class CompareVerdicts(TempDirTest):

    def setUp(self) -> None:
        super().setUp()
        self.baseline = self.promote_five(real_result(), self.tmp / "baselines")

    def compare(self, result: Json, *extra: str) -> tuple[subprocess.CompletedProcess[str], Json,
                                                          Path]:
        result_path = self.write("result.json", result)
        out_json = self.tmp / "compare.json"
        junit = self.tmp / "junit.xml"
        proc = pathbench("compare", self.baseline, result_path, "--json", out_json,
                         "--junit", junit, *extra)
        report = json.loads(out_json.read_text(encoding="utf-8")) if out_json.exists() else {}
        return proc, report, junit

    def test_result_against_itself_passes(self) -> None:
        # Five runs of one machine: host-timed metrics are gated only with the minimums lifted.
        proc, report, junit = self.compare(real_result(), "--min-runs-host", "1",
                                           "--min-machines-host", "1")
        self.assert_exit(proc, EXIT_OK)
        self.assertEqual(report["schema"], COMPARE_SCHEMA)
        self.assertEqual(report["exit_code"], 0)
        verdicts = {c["verdict"] for c in report["cases"]}
        self.assertEqual(verdicts, {"pass", "skipped"}, "the hugetlb case is skipped on both")
        self.assertEqual(report["summary"]["pass"], 28)
        self.assertEqual(report["summary"]["skipped"], 1)
        self.assertTrue(all(abs(m["change_pct"]) < 1e-9
                            for c in report["cases"] for m in c["metrics"]))
        self.assertTrue(all(m["n_runs"] == 5 and m["spread_known"]
                            for c in report["cases"] for m in c["metrics"]))
        self.assertIn("29 cases: 28 pass, 1 skipped; exit 0", proc.stdout)
        self.assertTrue(proc.stdout.startswith(
            "what changed since the baseline: nothing in the node's context\n"), proc.stdout)
        root = ET.parse(junit).getroot()
        self.assertEqual(root.get("failures"), "0")
        self.assertEqual(root.get("errors"), "0")

    def test_host_metrics_of_one_machine_are_not_gated_yet(self) -> None:
        # The defaults: a host-timed metric needs 8 runs of 3 machines; five runs of one machine
        # leave it "not gated yet", listed with the reason, never failing and never passing.
        doctored = real_result()
        scale_case(doctored, PAGEABLE_D2H_64K, 0.5)
        proc, report, _ = self.compare(doctored)
        self.assert_exit(proc, EXIT_OK)
        entry = next(u for u in report["not_gateable"] if u["id"] == PAGEABLE_D2H_64K)
        self.assertEqual(entry["timing_class"], "host")
        self.assertIn("not gated yet", entry["reason"])
        self.assertIn("5 baseline runs cannot show its tail (8 needed", entry["reason"])
        self.assertEqual(find_case(report, PINNED_H2D_256M)["verdict"], "pass")
        self.assertIn("not gated yet", proc.stdout)

    def test_ten_percent_slower_pinned_h2d_is_regression(self) -> None:
        doctored = real_result()
        scale_case(doctored, PINNED_H2D_256M, 0.9)
        proc, report, junit = self.compare(doctored)
        self.assert_exit(proc, EXIT_FAILURE)

        # The table lists it first.
        rows = table_rows(proc.stdout)
        self.assertTrue(rows[0].startswith("regression"), rows[0])
        self.assertIn(PINNED_H2D_256M, rows[0])
        self.assertIn("-10.00%", rows[0])
        self.assertEqual(sum(r.startswith("regression") for r in rows), 1, rows)

        # --json: first, with the test's numbers.
        first = report["cases"][0]
        self.assertEqual(first["id"], PINNED_H2D_256M)
        self.assertEqual(first["verdict"], "regression")
        metric = first["metrics"][0]
        self.assertEqual(metric["name"], "bandwidth")
        self.assertEqual(metric["verdict"], "regression")
        self.assertLess(metric["p_value"], 0.05)
        self.assertAlmostEqual(metric["change_pct"], -10.0, places=6)
        self.assertAlmostEqual(metric["ratio"], 0.9, places=9)
        self.assertEqual(metric["threshold_pct"], 15.0)  # the device class's ceiling
        self.assertEqual(metric["threshold_mode"], "ceiling")
        self.assertIn(metric["threshold_source"], ("derived", "class_floor"))
        self.assertAlmostEqual(metric["detectable_change_pct"], -metric["effective_threshold_pct"])
        self.assertEqual(metric["timing_class"], "device")
        self.assertLess(metric["p_between"], 0.05)
        self.assertEqual((metric["n_baseline"], metric["n_result"]), (45, 9))
        self.assertEqual(report["summary"]["regression"], 1)
        self.assertEqual(report["exit_code"], 1)

        # --junit: parses, a <failure> for that case, counts consistent.
        root = ET.parse(junit).getroot()
        failing = [tc.get("name") for tc in root.iter("testcase")
                   if tc.find("failure") is not None]
        self.assertIn(PINNED_H2D_256M, failing)
        case = next(tc for tc in root.iter("testcase") if tc.get("name") == PINNED_H2D_256M)
        self.assertEqual(case.find("failure").get("type"), "regression")
        suite = root.find("testsuite")
        self.assertEqual(int(suite.get("tests")), len(list(root.iter("testcase"))))
        self.assertEqual(int(suite.get("failures")), len(list(root.iter("failure"))))
        self.assertEqual(int(suite.get("errors")), len(list(root.iter("error"))))
        self.assertEqual(int(suite.get("skipped")), len(list(root.iter("skipped"))))

    def test_regression_alone_fails_with_floors_passing(self) -> None:
        # 4 MiB copies are not held to a floor: exit 1 comes from the regression itself.
        doctored = real_result()
        scale_case(doctored, PINNED_H2D_4M, 0.9)
        proc, report, _ = self.compare(doctored)
        self.assert_exit(proc, EXIT_FAILURE)
        self.assertTrue(all(f["verdict"] == "pass" for f in report["floors"]), report["floors"])
        self.assertEqual(report["cases"][0]["id"], PINNED_H2D_4M)
        self.assertEqual(report["cases"][0]["verdict"], "regression")

    def test_ten_percent_faster_is_improvement(self) -> None:
        doctored = real_result()
        scale_case(doctored, PINNED_H2D_4M, 1.1)
        proc, report, _ = self.compare(doctored)
        self.assert_exit(proc, EXIT_OK)
        self.assertEqual(find_case(report, PINNED_H2D_4M)["verdict"], "improvement")

    def test_threshold_from_command_line_and_result_gate(self) -> None:
        # The threshold is derived from the five runs (about 1.4 % here): a 3 % loss of a quiet
        # device path fails by default (issue 28: a fixed 5-8 % let it through).
        doctored = real_result()
        scale_case(doctored, PINNED_H2D_4M, 0.97)
        proc, report, _ = self.compare(doctored)
        self.assert_exit(proc, EXIT_FAILURE)
        metric = find_case(report, PINNED_H2D_4M)["metrics"][0]
        self.assertEqual(metric["verdict"], "regression")
        self.assertLess(metric["effective_threshold_pct"], 3)

        # --threshold is a ceiling: below what this node type needs, the metric is not gateable.
        proc, report, _ = self.compare(doctored, "--threshold", "0.5")
        self.assert_exit(proc, EXIT_OK)
        self.assertEqual(find_case(report, PINNED_H2D_4M)["verdict"], "unstable")

        # A gate block in the result wins over --threshold; "fixed" makes it the threshold.
        find_case(doctored, PINNED_H2D_4M)["gate"] = {"threshold_pct": 5, "fixed": True}
        proc, report, _ = self.compare(doctored, "--threshold", "0.5")
        self.assert_exit(proc, EXIT_OK)
        metric = find_case(report, PINNED_H2D_4M)["metrics"][0]
        self.assertEqual((metric["verdict"], metric["threshold_pct"], metric["threshold_mode"],
                          metric["threshold_source"]), ("pass", 5, "fixed", "fixed"))

        # A metric's own entry wins over the block's percentage.
        find_case(doctored, PINNED_H2D_4M)["gate"] = {"threshold_pct": 0.5,
                                                       "metrics": {"bandwidth": 10}}
        proc, report, _ = self.compare(doctored)
        self.assert_exit(proc, EXIT_FAILURE)
        metric = find_case(report, PINNED_H2D_4M)["metrics"][0]
        self.assertEqual((metric["verdict"], metric["threshold_pct"]), ("regression", 10))

    def test_metric_named_in_gate_is_gated(self) -> None:
        doctored = real_result()
        case = find_case(doctored, PINNED_H2D_4M)
        slower = [x * 1.1 for x in case["metrics"]["time_per_copy"]["samples"]]
        set_samples(doctored, PINNED_H2D_4M, "time_per_copy", slower)
        proc, _, _ = self.compare(doctored)
        self.assert_exit(proc, EXIT_OK)  # only the headline is gated

        case["gate"] = {"metrics": {"time_per_copy": 5}}
        proc, report, _ = self.compare(doctored)
        self.assert_exit(proc, EXIT_FAILURE)
        metrics = {m["name"]: m["verdict"] for m in find_case(report, PINNED_H2D_4M)["metrics"]}
        self.assertEqual(metrics, {"bandwidth": "pass", "time_per_copy": "regression"})

    def test_few_samples_are_insufficient_never_pass(self) -> None:
        doctored = real_result()
        case = find_case(doctored, PINNED_H2D_4M)
        set_samples(doctored, PINNED_H2D_4M, "bandwidth",
                    [x * 0.3 for x in case["metrics"]["bandwidth"]["samples"][:3]])
        set_samples(doctored, PINNED_H2D_4M, "time_per_copy",
                    case["metrics"]["time_per_copy"]["samples"][:3])
        proc, report, junit = self.compare(doctored)
        self.assert_exit(proc, EXIT_INCOMPLETE)  # a 70 % loss in a --quick run: not a pass
        verdict = find_case(report, PINNED_H2D_4M)
        self.assertEqual(verdict["verdict"], "insufficient_samples")
        self.assertIsNone(verdict["metrics"][0]["p_value"])
        self.assertIn("samples", verdict["reason"])
        self.assertEqual(ET.parse(junit).getroot().get("errors"), "1")
        # --allow-few-samples judges on the threshold alone: the 70 % loss is a regression.
        proc, report, _ = self.compare(doctored, "--allow-few-samples")
        self.assert_exit(proc, EXIT_FAILURE)
        verdict = find_case(report, PINNED_H2D_4M)
        self.assertEqual(verdict["verdict"], "regression")
        self.assertIn("threshold alone", verdict["metrics"][0]["reason"])
        # ... and a quick run of an unchanged node passes.
        unchanged = real_result()
        set_samples(unchanged, PINNED_H2D_4M, "bandwidth",
                    find_case(unchanged, PINNED_H2D_4M)["metrics"]["bandwidth"]["samples"][:3])
        proc, report, _ = self.compare(unchanged, "--allow-few-samples")
        self.assertEqual(find_case(report, PINNED_H2D_4M)["verdict"], "pass")

    def test_missing_case_exits_2(self) -> None:
        doctored = real_result()
        doctored["cases"] = [c for c in doctored["cases"] if c["id"] != PAGEABLE_D2H_64K]
        proc, report, junit = self.compare(doctored)
        self.assert_exit(proc, EXIT_INCOMPLETE)
        self.assertRegex(proc.stdout, rf"(?m)^missing\s.*{re.escape(PAGEABLE_D2H_64K)}")
        self.assertEqual(report["cases"][0]["verdict"], "missing")
        self.assertEqual(report["summary"]["missing"], 1)
        root = ET.parse(junit).getroot()
        self.assertEqual(root.get("errors"), "1")

    def test_new_and_failed_cases(self) -> None:
        doctored = real_result()
        extra = copy.deepcopy(find_case(doctored, PINNED_H2D_4M))
        extra["id"] = PINNED_H2D_4M.replace("bytes=4194304", "bytes=8388608")
        extra["params"]["bytes"] = 8388608
        doctored["cases"].append(extra)
        proc, report, _ = self.compare(doctored)
        self.assert_exit(proc, EXIT_OK)
        self.assertEqual(find_case(report, extra["id"])["verdict"], "new")

        failed = find_case(doctored, PINNED_H2D_4M)
        failed["status"] = "failed"
        failed["reason"] = "copy_pattern: destination mismatch after sample 3"
        proc, report, junit = self.compare(doctored)
        self.assert_exit(proc, EXIT_FAILURE)
        self.assertEqual(report["cases"][0]["id"], PINNED_H2D_4M)
        self.assertEqual(report["cases"][0]["verdict"], "failed")
        root = ET.parse(junit).getroot()
        case = next(tc for tc in root.iter("testcase") if tc.get("name") == PINNED_H2D_4M)
        self.assertEqual(case.find("failure").get("type"), "failed")

    def narrow_result(self) -> Json:
        """The same run as if the GPU sat in an x8 slot: topology, fingerprint and node type
        change together, as a real inventory would write them."""
        narrow = real_result()
        ctx = narrow["context"]
        ctx["gpus"][0]["pcie_width_max"] = 8
        ctx["gpus"][0]["pcie_width_current"] = 8
        ctx["node_type"] = "NVIDIA H200 x1 / PCIe Gen5 x8 / 1 NUMA"
        ctx["topology_fingerprint"] = hashlib.sha256(b"h200 in an x8 slot").hexdigest()
        for case in narrow["cases"]:
            if case["status"] == "ok" and case["params"].get("host_memory") is not None \
                    and case["params"].get("measure") == "bandwidth":
                scale_case(narrow, case["id"], 0.5)
        return narrow

    def test_different_topology_is_incomparable(self) -> None:
        proc, report, junit = self.compare(self.narrow_result())
        self.assert_exit(proc, EXIT_INCOMPLETE)
        self.assertIn("pcie_width_max=16", proc.stdout)
        self.assertIn("pcie_width_max=8", proc.stdout)
        self.assertIn("node_type", proc.stdout)
        self.assertIn("--across", proc.stdout)
        self.assertNotIn("\npass ", proc.stdout, "no case verdicts between different nodes")
        self.assertEqual(report["cases"], [])
        self.assertTrue(any("pcie_width_max" in line for line in report["incomparable"]))
        root = ET.parse(junit).getroot()
        self.assertTrue(any(e.get("type") == "incomparable" for e in root.iter("error")))

    def test_across_gives_ratio_table(self) -> None:
        proc, report, _ = self.compare(self.narrow_result(), "--across")
        self.assert_exit(proc, EXIT_OK)
        self.assertEqual(report["mode"], "across")
        self.assertEqual(report["incomparable"], [])
        header = next(line for line in proc.stdout.splitlines() if line.startswith("verdict "))
        self.assertIn("ratio", header)
        self.assertNotIn("threshold", header)
        row = next(line for line in proc.stdout.splitlines()
                   if line.rstrip().endswith(PINNED_H2D_256M))
        self.assertIn(" 0.500 ", row)
        ok_cases = [c for c in report["cases"] if c["verdict"] != "skipped"]
        self.assertTrue(ok_cases)
        for case in ok_cases:
            self.assertEqual(case["verdict"], "across", case["id"])
        self.assertAlmostEqual(find_case(report, PINNED_H2D_256M)["metrics"][0]["ratio"], 0.5,
                               places=9)

    def test_identity_ignores_run_state(self) -> None:
        # Clocks, current link, free memory, driver and time are state, not topology.
        doctored = real_result()
        ctx = doctored["context"]
        ctx["gpus"][0]["clock_sm_mhz"] = 345
        ctx["mem_available_bytes"] = 1 << 30
        ctx["driver_version"] = "590.1"
        ctx["start_time"] = "2026-12-01T00:00:00Z"
        proc, report, _ = self.compare(doctored)
        self.assert_exit(proc, EXIT_OK)
        self.assertEqual(report["incomparable"], [])


class CompareBadInput(TempDirTest):

    def setUp(self) -> None:
        super().setUp()
        self.good = self.write("good.json", real_result())

    def check_both_sides(self, bad: Path, pointer: str) -> None:
        self.assert_bad_input(pathbench("compare", self.good, bad), bad, pointer)
        self.assert_bad_input(pathbench("compare", bad, self.good), bad, pointer)
        self.assert_bad_input(pathbench("compare", "--floors", bad), bad, pointer)

    def test_wrong_schema(self) -> None:
        doc = real_result()
        doc["schema"] = "pathbench.result/v2"
        self.check_both_sides(self.write("schema.json", doc), "/schema")

    def test_corrupted_json(self) -> None:
        text = (SOURCE / "tests/fixtures/results/h200-default.json").read_text(encoding="utf-8")
        bad = self.write("truncated.json", text[: len(text) // 2])
        self.check_both_sides(bad, "/")
        self.assertIn("not valid JSON",
                      pathbench("compare", self.good, bad).stderr)

    def test_sample_that_is_a_string(self) -> None:
        doc = real_result()
        index = next(i for i, c in enumerate(doc["cases"]) if c["id"] == PINNED_H2D_256M)
        doc["cases"][index]["metrics"]["bandwidth"]["samples"][3] = "55.5"
        self.check_both_sides(self.write("string_sample.json", doc),
                              f"/cases/{index}/metrics/bandwidth/samples/3")

    def test_gate_threshold_that_is_a_string(self) -> None:
        doc = real_result()
        doc["cases"][7]["gate"] = {"threshold_pct": "x"}
        self.check_both_sides(self.write("gate.json", doc), "/cases/7/gate/threshold_pct")

    def test_gate_block_checked_like_a_scenario_gate(self) -> None:
        # A result's gate block is read back with the rules the scenario file's block obeys
        # (scenario_file.cpp: percentages in (0, 1000], keys threshold_pct and metrics only);
        # otherwise a hand-edited baseline gates with a negative threshold or a misspelt key.
        cases = {
            "negative_metric": ({"metrics": {"bandwidth": -3}}, "/cases/7/gate/metrics/bandwidth"),
            "zero_threshold": ({"threshold_pct": 0}, "/cases/7/gate/threshold_pct"),
            "misspelt_key": ({"thresold_pct": 2}, "/cases/7/gate/thresold_pct"),
        }
        for name, (gate, pointer) in cases.items():
            with self.subTest(name):
                doc = real_result()
                doc["cases"][7]["gate"] = gate
                bad = self.write(f"{name}.json", doc)
                self.assert_bad_input(pathbench("compare", self.good, bad), bad, pointer)

    def test_missing_file(self) -> None:
        missing = self.tmp / "nope.json"
        self.assert_bad_input(pathbench("compare", self.good, missing), missing, "/")

    def test_usage_errors(self) -> None:
        self.assert_exit(pathbench("compare", self.good), EXIT_BAD_INPUT)
        self.assert_exit(pathbench("compare", "--floors", self.good, self.good), EXIT_BAD_INPUT)
        self.assert_exit(pathbench("compare", self.good, self.good, "--alpha", "1.5"),
                         EXIT_BAD_INPUT)
        self.assert_exit(pathbench("compare", self.good, self.good, "--threshold", "-1"),
                         EXIT_BAD_INPUT)
        self.assert_exit(pathbench("compare", self.good, self.good, "--min-runs-host", "0"),
                         EXIT_BAD_INPUT)
        self.assert_exit(pathbench("compare", self.good, self.good, "--min-machines-host", "0"),
                         EXIT_BAD_INPUT)


class CompareFloors(TempDirTest):

    def test_real_result_meets_its_floors(self) -> None:
        json_out = self.tmp / "floors.json"
        proc = pathbench("compare", "--floors", SOURCE / "tests/fixtures/results/h200-default.json",
                         "--json", json_out)
        self.assert_exit(proc, EXIT_OK)
        floor_lines = [line for line in proc.stdout.splitlines() if line.startswith("floor ")]
        self.assertEqual(len(floor_lines), 5, proc.stdout)  # the link + 4 pinned/registered 256 MiB
        self.assertTrue(all(line.startswith("floor pass") for line in floor_lines), floor_lines)
        self.assertTrue(any("gpu0/pcie_link" in line for line in floor_lines))
        self.assertTrue(any(PINNED_H2D_256M in line for line in floor_lines))
        report = json.loads(json_out.read_text(encoding="utf-8"))
        self.assertEqual(report["mode"], "floors")
        self.assertNotIn("baseline", report)

    def test_half_of_the_link_is_below_floor(self) -> None:
        doc = real_result()
        median = find_case(doc, PINNED_H2D_256M)["metrics"]["bandwidth"]["stats"]["median"]
        scale_case(doc, PINNED_H2D_256M, 0.5 * GEN5_X16_GB_PER_S / median)
        path = self.write("half.json", doc)
        json_out = self.tmp / "floors.json"
        junit = self.tmp / "floors.xml"
        proc = pathbench("compare", "--floors", path, "--json", json_out, "--junit", junit)
        self.assert_exit(proc, EXIT_FAILURE)
        self.assertRegex(proc.stdout, rf"(?m)^floor below_floor\s+{re.escape(PINNED_H2D_256M)}")
        floor = next(f for f in json.loads(json_out.read_text())["floors"]
                     if f["id"] == PINNED_H2D_256M)
        self.assertEqual(floor["verdict"], "below_floor")
        self.assertAlmostEqual(floor["fraction"], 0.5, places=6)
        root = ET.parse(junit).getroot()
        self.assertEqual(root.get("failures"), "1")

    def test_floor_fraction_option(self) -> None:
        proc = pathbench("compare", "--floors", SOURCE / "tests/fixtures/results/h200-default.json",
                         "--floor-fraction", "0.95")
        self.assert_exit(proc, EXIT_FAILURE)
        self.assertIn("below_floor", proc.stdout)


# --- baselines and ci/gate.sh -------------------------------------------------------------------

class Baselines(TempDirTest):

    def setUp(self) -> None:
        super().setUp()
        self.result = self.write("result.json", real_result())
        self.dir = self.tmp / "baselines"
        self.label = file_name_label(real_result()["context"]["node_type"])

    def test_promote_writes_node_type_file(self) -> None:
        self.assertEqual(self.label, "NVIDIA_H200_x1_PCIe_Gen5_x16_1_NUMA")
        proc = pathbench("baseline", "promote", self.result, "--dir", self.dir)
        self.assert_exit(proc, EXIT_OK)
        written = self.dir / f"{self.label}.json"
        self.assertTrue(written.is_file(), describe(proc))
        baseline = json.loads(written.read_text(encoding="utf-8"))
        self.assertEqual(baseline["schema"], "pathbench.baseline/v1")
        self.assertEqual(len(baseline["runs"]), 1)
        self.assertEqual(baseline["context"], real_result()["context"])
        self.assertIn("spread is unknown", proc.stdout)  # one run says what it cannot know

        again = pathbench("baseline", "promote", self.result, "--dir", self.dir)
        self.assert_bad_input(again, written, "/")
        self.assertIn("--force", again.stderr)

        doctored = real_result()
        scale_case(doctored, PINNED_H2D_4M, 1.1)
        newer = self.write("newer.json", doctored)
        self.assert_exit(pathbench("baseline", "promote", newer, "--dir", self.dir, "--force"),
                         EXIT_OK)
        baseline = json.loads(written.read_text(encoding="utf-8"))
        bw = find_case(baseline, PINNED_H2D_4M)["metrics"]["bandwidth"]
        self.assertEqual(bw["runs"][0]["samples"],
                         find_case(doctored, PINNED_H2D_4M)["metrics"]["bandwidth"]["samples"])

    def test_promote_several_runs_keeps_every_run_and_the_spread(self) -> None:
        path = self.promote_five(real_result(), self.dir)
        baseline = json.loads(path.read_text(encoding="utf-8"))
        self.assertEqual(len(baseline["runs"]), 5)
        bw = find_case(baseline, PINNED_H2D_256M)["metrics"]["bandwidth"]
        self.assertEqual(len(bw["runs"]), 5)
        medians = sorted(r["median"] for r in bw["runs"])
        self.assertAlmostEqual(bw["between_run"]["center"], medians[2])
        # Run factors 1 +- .001, +- .0005: the standard deviation (0.079 %) beats the scaled MAD.
        self.assertAlmostEqual(bw["between_run"]["spread_pct"],
                               100 * statistics.stdev(RUN_FACTORS), places=6)
        self.assertEqual(bw["timing_class"], "device")

    def test_spread_table_and_unstable_metrics(self) -> None:
        # PAGEABLE_D2H_64K's runs wander by +-40 % around the median (a spread of about 30 %),
        # far above the 10 % threshold its gate block sets.
        runs = jittered_runs(real_result())
        for run_doc, factor in zip(runs, (1.0, 1.4, 0.6, 1.2, 0.8)):
            case = find_case(run_doc, PAGEABLE_D2H_64K)
            case["gate"] = {"threshold_pct": 10}
            for metric in case["metrics"].values():
                metric["samples"] = [x * factor for x in metric["samples"]]
                metric["stats"] = stats_of(metric["samples"])
        files = [self.write(f"wide{i}.json", r) for i, r in enumerate(runs)]
        self.assert_exit(pathbench("baseline", "promote", *files, "--dir", self.dir), EXIT_OK)
        baseline = self.dir / f"{self.label}.json"
        table = run(sys.executable, SOURCE / "reports/spread.py", baseline)
        self.assert_exit(table, EXIT_OK)
        row = next(line for line in table.stdout.splitlines() if PAGEABLE_D2H_64K in line)
        self.assertIn("**not gateable**", row)
        self.assertIn("| 10 % |", row)
        bad = run(sys.executable, SOURCE / "reports/spread.py", self.result)
        self.assert_exit(bad, EXIT_BAD_INPUT)
        self.assertIn(f"{self.result}: /schema", bad.stderr)
        self.assertNotIn("Traceback", bad.stderr)

        # The gate reports it in its own section and never fails on it, even after a 50 % loss.
        doc = real_result()
        scale_case(doc, PAGEABLE_D2H_64K, 0.5)
        out_json = self.tmp / "c.json"
        proc = pathbench("compare", baseline, self.write("r.json", doc), "--json", out_json)
        self.assert_exit(proc, EXIT_OK)
        self.assertIn("not gateable on this node type", proc.stdout)
        self.assertRegex(proc.stdout, rf"(?m)^  unstable +spread +\d+\.\d+ %, needs +\d+\.\d+ % "
                                      rf"\(ceiling +10\.0 %\).*{re.escape(PAGEABLE_D2H_64K)}")
        report = json.loads(out_json.read_text(encoding="utf-8"))
        unstable = {u["id"]: u for u in report["not_gateable"]}
        self.assertIn(PAGEABLE_D2H_64K, unstable)
        self.assertEqual(unstable[PAGEABLE_D2H_64K]["threshold_pct"], 10)
        # The device paths' quiet runs are gated; only host-timed metrics wait for more runs.
        self.assertTrue(all(u["timing_class"] == "host" for u in unstable.values()), unstable)
        self.assertEqual(find_case(report, PAGEABLE_D2H_64K)["verdict"], "unstable")

    def test_promote_refusals_write_nothing(self) -> None:
        runs = jittered_runs(real_result())
        other = copy.deepcopy(runs[4])
        other["context"]["node_type"] = "NVIDIA H100 x8 / PCIe Gen5 x16 / 2 NUMA"
        unfinished = copy.deepcopy(runs[2])
        unfinished["context"]["end_time"] = ""
        quick = copy.deepcopy(runs[3])
        set_samples(quick, PINNED_H2D_4M, "bandwidth",
                    find_case(quick, PINNED_H2D_4M)["metrics"]["bandwidth"]["samples"][:3])
        for name, doc, code, pointer in (
                ("other-type.json", other, EXIT_INCOMPLETE, "/context/node_type"),
                ("unfinished.json", unfinished, EXIT_BAD_INPUT, "/context/end_time"),
                ("quick.json", quick, EXIT_BAD_INPUT, "/samples")):
            files = [self.write(f"ok{i}.json", r) for i, r in enumerate(runs[:2])]
            bad = self.write(name, doc)
            proc = pathbench("baseline", "promote", *files, bad, "--dir", self.dir)
            self.assert_exit(proc, code)
            self.assertIn(f"{bad}: ", proc.stderr)
            self.assertIn(pointer, proc.stderr)
            self.assertFalse(self.dir.exists() and any(self.dir.iterdir()), name)

    def test_promote_refuses_failed_case(self) -> None:
        doc = real_result()
        find_case(doc, PINNED_H2D_4M)["status"] = "failed"
        find_case(doc, PINNED_H2D_4M)["reason"] = "latch timed out"
        bad = self.write("failed.json", doc)
        proc = pathbench("baseline", "promote", bad, "--dir", self.dir)
        self.assert_bad_input(proc, bad, "/cases/")
        self.assertIn(PINNED_H2D_4M, proc.stderr)
        self.assertFalse((self.dir / f"{self.label}.json").exists())

    def test_path(self) -> None:
        expected = self.dir / f"{self.label}.json"
        proc = pathbench("baseline", "path", self.result, "--dir", self.dir)
        self.assert_exit(proc, EXIT_INCOMPLETE)
        self.assertEqual(proc.stdout.strip(), str(expected))
        self.assertIn("no baseline", proc.stderr)
        self.assert_exit(pathbench("baseline", "promote", self.result, "--dir", self.dir), EXIT_OK)
        proc = pathbench("baseline", "path", self.result, "--dir", self.dir)
        self.assert_exit(proc, EXIT_OK)
        self.assertEqual(proc.stdout.strip(), str(expected))


class BaselineUpdates(TempDirTest):
    """`pathbench baseline update BASELINE RESULT... [--keep N]`: runs added, the newest N kept,
    the statistics recomputed, and promote's refusals (nothing written)."""

    def setUp(self) -> None:
        super().setUp()
        self.baseline = self.promote_five(real_result(), self.tmp / "baselines")

    def later_run(self, minute: int, factor: float) -> Path:
        """A run of the node `minute` minutes after 01:00 (the promoted runs took 01:00-01:04),
        its samples scaled by `factor`."""
        doc = real_result()
        doc["context"]["start_time"] = f"2026-12-01T01:{minute:02d}:00Z"
        doc["context"]["end_time"] = f"2026-12-01T01:{minute:02d}:30Z"
        for case in doc["cases"]:
            for metric in case["metrics"].values():
                metric["samples"] = [x * factor for x in metric["samples"]]
                metric["stats"] = stats_of(metric["samples"])
        return self.write(f"runs/later{minute}.json", doc)

    def update(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return pathbench("baseline", "update", self.baseline, *args)

    def test_update_grows_the_baseline_and_keeps_the_newest(self) -> None:
        added = [self.later_run(6, 1.01), self.later_run(5, 0.99)]
        proc = self.update(*added)
        self.assert_exit(proc, EXIT_OK)
        for path in added:
            self.assertRegex(proc.stdout, rf"(?m)^added {re.escape(str(path))} \(host ")
        self.assertNotIn("dropped", proc.stdout)
        self.assertIn("(7 runs,", proc.stdout)  # promote's summary line
        baseline = json.loads(self.baseline.read_text(encoding="utf-8"))
        self.assertEqual(len(baseline["runs"]), 7)
        self.assertEqual([r["file"] for r in baseline["runs"][-2:]], [str(p) for p in added[::-1]])
        bw = find_case(baseline, PINNED_H2D_256M)["metrics"]["bandwidth"]
        self.assertEqual(len(bw["runs"]), 7)
        self.assertEqual(bw["between_run"]["n_runs"], 7)

        # --keep 4: the four newest of eight runs stay, the statistics are theirs alone.
        newest = self.later_run(7, 1.02)
        proc = self.update(newest, "--keep", "4")
        self.assert_exit(proc, EXIT_OK)
        self.assertEqual(len(re.findall(r"(?m)^dropped .*older than the newest 4 runs$",
                                        proc.stdout)), 4, describe(proc))
        self.assertIn(f"dropped {self.tmp / 'runs/run1.json'} (host ", proc.stdout)
        baseline = json.loads(self.baseline.read_text(encoding="utf-8"))
        self.assertEqual([r["start_time"] for r in baseline["runs"]],
                         [f"2026-12-01T01:0{m}:00Z" for m in (4, 5, 6, 7)])
        bw = find_case(baseline, PINNED_H2D_256M)["metrics"]["bandwidth"]
        medians = sorted(r["median"] for r in bw["runs"])
        self.assertEqual(bw["between_run"]["n_runs"], 4)
        self.assertAlmostEqual(bw["between_run"]["center"], (medians[1] + medians[2]) / 2)
        self.assertEqual(baseline["context"]["start_time"], "2026-12-01T01:07:00Z")
        # What promoting the kept runs writes, but for the time it was written.
        kept = [self.tmp / "runs/run5.json", *added[::-1], newest]
        self.assert_exit(pathbench("baseline", "promote", *kept, "--dir", self.tmp / "again"),
                         EXIT_OK)
        again = json.loads((self.tmp / "again" / self.baseline.name).read_text(encoding="utf-8"))
        for doc in (baseline, again):
            del doc["created"]
        self.assertEqual(baseline, again)

    def test_bad_input_exits_3_naming_the_file_and_writes_nothing(self) -> None:
        before = self.baseline.read_bytes()
        failed_doc = real_result()
        failed_doc["context"]["start_time"] = "2026-12-01T01:09:00Z"
        find_case(failed_doc, PINNED_H2D_4M)["status"] = "failed"
        find_case(failed_doc, PINNED_H2D_4M)["reason"] = "latch timed out"
        failed = self.write("failed.json", failed_doc)
        other_doc = json.loads(self.later_run(8, 1.0).read_text(encoding="utf-8"))
        other_doc["context"]["node_type"] = "NVIDIA H100 x8 / PCIe Gen5 x16 / 2 NUMA"
        other = self.write("other-type.json", other_doc)
        broken = self.write("broken.json", "{\"schema\": ")
        not_a_baseline = self.write("result-as-baseline.json", real_result())
        good = self.later_run(6, 1.0)
        cases: list[tuple[str, list[str | Path], int, str]] = [
            ("failed case", [self.baseline, good, failed], EXIT_BAD_INPUT, f"{failed}: /cases/"),
            ("invalid result", [self.baseline, broken], EXIT_BAD_INPUT, f"{broken}: "),
            ("missing result", [self.baseline, self.tmp / "gone.json"], EXIT_BAD_INPUT,
             f"{self.tmp / 'gone.json'}: "),
            ("run already in the baseline", [self.baseline, self.tmp / "runs/run3.json"],
             EXIT_BAD_INPUT, f"{self.tmp / 'runs/run3.json'}: /context/start_time: the same run as "
                             f"{self.baseline} run 3 ({self.tmp / 'runs/run3.json'})"),
            ("keep 0", [self.baseline, good, "--keep", "0"], EXIT_BAD_INPUT, "--keep"),
            ("other node type", [self.baseline, other], EXIT_INCOMPLETE,
             f"{other}: /context/node_type"),
            ("invalid baseline", [broken, good], EXIT_BAD_INPUT, f"{broken}: "),
            ("a result as the baseline", [not_a_baseline, good], EXIT_BAD_INPUT,
             f"{not_a_baseline}: /schema"),
        ]
        for name, args, code, message in cases:
            with self.subTest(name):
                proc = pathbench("baseline", "update", *args)
                self.assert_exit(proc, code)
                self.assertIn(message, proc.stderr, describe(proc))
                self.assertEqual(proc.stdout, "")
                self.assertEqual(self.baseline.read_bytes(), before)
                self.assertEqual(list(self.baseline.parent.iterdir()), [self.baseline])
        self.assertEqual(json.loads(not_a_baseline.read_text(encoding="utf-8")), real_result())

    def test_help_explains_it(self) -> None:
        proc = pathbench("baseline", "update", "--help")
        self.assert_exit(proc, EXIT_OK)
        for text in ("--keep", "--allow-noisy", "newest", "BASELINE".lower()):
            self.assertIn(text, proc.stdout.lower())


class GateScript(TempDirTest):

    def setUp(self) -> None:
        super().setUp()
        self.result = self.write("result.json", real_result())
        self.baselines = self.tmp / "baselines"
        self.baselines.mkdir()
        self.junit = self.tmp / "out" / "junit.xml"
        self.json = self.tmp / "out" / "compare.json"
        self.junit.parent.mkdir()
        self.env = dict(os.environ, PATHBENCH=str(PATHBENCH))

    def gate(self, result: Path, *extra: str) -> subprocess.CompletedProcess[str]:
        return run("bash", SOURCE / "ci/gate.sh", result, "--baselines", self.baselines,
                   "--junit", self.junit, "--json", self.json, *extra, env=self.env, cwd=self.tmp)

    def test_without_baseline_checks_floors_and_exits_2(self) -> None:
        proc = self.gate(self.result)
        self.assert_exit(proc, EXIT_INCOMPLETE)
        self.assertIn("no baseline", proc.stderr)
        self.assertIn("baseline promote", proc.stderr)
        root = ET.parse(self.junit).getroot()
        classes = {tc.get("classname") for tc in root.iter("testcase")}
        self.assertEqual(classes, {"pathbench.floors"})
        self.assertEqual(json.loads(self.json.read_text())["mode"], "floors")

    def test_without_baseline_failing_floor_exits_1(self) -> None:
        doc = real_result()
        median = find_case(doc, PINNED_H2D_256M)["metrics"]["bandwidth"]["stats"]["median"]
        scale_case(doc, PINNED_H2D_256M, 0.5 * GEN5_X16_GB_PER_S / median)
        proc = self.gate(self.write("half.json", doc))
        self.assert_exit(proc, EXIT_FAILURE)

    def test_with_baseline_same_result_passes(self) -> None:
        self.promote_five(real_result(), self.baselines)
        proc = self.gate(self.result)
        self.assert_exit(proc, EXIT_OK)
        root = ET.parse(self.junit).getroot()
        self.assertEqual(root.get("failures"), "0")
        self.assertGreater(int(root.get("tests")), 30)
        self.assertEqual(json.loads(self.json.read_text())["mode"], "gate")

    def test_with_baseline_slower_result_fails(self) -> None:
        self.promote_five(real_result(), self.baselines)
        doc = real_result()
        scale_case(doc, PINNED_H2D_256M, 0.9)
        proc = self.gate(self.write("slower.json", doc))
        self.assert_exit(proc, EXIT_FAILURE)
        # The fixture's scenario file is not here to re-run: the suspect stays unconfirmed.
        self.assertIn("cannot confirm", proc.stderr)
        root = ET.parse(self.junit).getroot()
        case = next(tc for tc in root.iter("testcase") if tc.get("name") == PINNED_H2D_256M)
        self.assertIsNotNone(case.find("failure"))

    def test_extra_arguments_reach_compare(self) -> None:
        self.promote_five(real_result(), self.baselines)
        doc = real_result()
        scale_case(doc, PINNED_H2D_4M, 0.97)
        slower = self.write("slower.json", doc)
        # The derived threshold (~1.4 %) catches the 3 % loss; a 0.5 % ceiling passed through
        # to pathbench gate makes the metric not gateable instead.
        self.assert_exit(self.gate(slower), EXIT_FAILURE)
        self.assert_exit(self.gate(slower, "--", "--threshold", "0.5"), EXIT_OK)

    def test_bad_result_exits_3(self) -> None:
        bad = self.write("bad.json", "{")
        self.assert_exit(self.gate(bad), EXIT_BAD_INPUT)


# --- run: Google Benchmark output and scenario gate blocks ---------------------------------------

def tiny_scenario(gate: Any = None) -> Json:
    scenario: Json = {
        "name": "tiny-memcpy",
        "family": "host_memory",
        "repetitions": 5,
        "min_time": 0.01,
        "axes": {"measure": ["memcpy"], "page": ["4k", "thp"], "bytes": ["1MiB"]},
    }
    if gate is not None:
        scenario["gate"] = gate
    return {"schema": SCENARIO_SCHEMA, "scenarios": [scenario]}


class GateConfirmation(TempDirTest):
    """`ci/gate.sh` re-runs suspects for real: host_memory memcpy cases measured on this machine
    (no GPU needed), with the baseline or the result doctored 1000x to create the suspect. The
    judged metric is time_per_copy (unbounded, unlike a bandwidth loss). Every metric of the
    scenario gets the largest fixed threshold a gate block allows, 1000 % (fixed: host-timed
    metrics of five runs of one machine are otherwise not gated yet): a loaded 2-core CI machine
    (the sanitizer stage runs tests two at a time, beside whatever else the machine does) made
    memcpy re-runs under ASan 2.6-3x slower than the baseline's runs, which confirmed a doctored
    20x change against a 200 % threshold. Re-runs 11x slower than their own baseline are far
    beyond that; the doctored 1000x change still crosses the threshold by far, and a bandwidth
    loss is at most -100 %, so the doctored bandwidth can never be confirmed."""

    FACTOR = 1000.0

    MEMCPY_4K = "host_memory/measure=memcpy/page=4k/bytes=1048576"

    def setUp(self) -> None:
        super().setUp()
        self.scenario = self.write("scenarios/memcpy.json",
                                   tiny_scenario({"threshold_pct": 1000, "fixed": True,
                                                  "metrics": {"time_per_copy": 1000}}))
        self.baselines = self.tmp / "baselines"
        self.env = dict(os.environ, PATHBENCH=str(PATHBENCH))

    def measure(self, name: str) -> Json:
        out = self.tmp / "runs" / name
        proc = pathbench("run", "scenarios/memcpy.json", "--out", out, cwd=self.tmp, timeout=120)
        self.assert_exit(proc, EXIT_OK)
        return json.loads(out.read_text(encoding="utf-8"))

    def gate(self, result: Path) -> tuple[subprocess.CompletedProcess[str], Json, Path]:
        junit, out_json = self.tmp / "junit.xml", self.tmp / "gate.json"
        # --allow-noisy: these runs are real, on a CI machine whose hypervisor may steal its CPUs
        # (seen here: 6-21 % steal, which refuses the runs, exit 2). Confirmation is what is
        # tested; refusing noisy runs has its own tests (NoiseAndChanges) on recorded environments.
        proc = run("bash", SOURCE / "ci/gate.sh", result, "--baselines", self.baselines,
                   "--junit", junit, "--json", out_json, "--", "--allow-noisy", env=self.env,
                   cwd=self.tmp, timeout=300)
        report = json.loads(out_json.read_text(encoding="utf-8")) if out_json.exists() else {}
        return proc, report, junit

    def promote(self, runs: list[Json]) -> None:
        files = [self.write(f"runs/base{i}.json", r) for i, r in enumerate(runs)]
        self.assert_exit(pathbench("baseline", "promote", *files, "--dir", self.baselines,
                                   "--allow-noisy"), EXIT_OK)

    def test_regression_that_does_not_reproduce_is_flaky(self) -> None:
        self.promote([self.measure(f"b{i}.json") for i in range(5)])
        doctored = self.measure("result.json")
        for case in doctored["cases"]:
            if case["id"] == self.MEMCPY_4K:
                for metric in case["metrics"].values():
                    factor = 1 / self.FACTOR if metric["better"] == "higher" else self.FACTOR
                    metric["samples"] = [x * factor for x in metric["samples"]]
                    metric["stats"] = stats_of(metric["samples"])
        proc, report, junit = self.gate(self.write("runs/doctored.json", doctored))
        self.assert_exit(proc, EXIT_OK)
        self.assertIn("re-run 2 of 2", proc.stderr)
        metric = find_case(report, self.MEMCPY_4K)["metrics"][1]
        self.assertEqual(metric["name"], "time_per_copy")
        self.assertEqual(metric["verdict"], "flaky", describe(proc))
        self.assertEqual(metric["label"], "flaky (1/3)")
        self.assertEqual(len(metric["confirmation"]["rerun_medians"]), 2)
        self.assertRegex(proc.stdout, r"(?m)^flaky \(1/3\)")
        self.assertRegex(proc.stdout, r"(?m)^\s+re-runs: ")
        root = ET.parse(junit).getroot()
        self.assertEqual(root.get("failures"), "0")
        self.assertTrue((self.tmp / "runs" / "doctored.reruns" / "rerun-2.json").is_file())

    def test_regression_that_reproduces_is_confirmed(self) -> None:
        # A baseline twenty times as fast as this machine: every real run regresses.
        fast = []
        for i in range(5):
            r = self.measure(f"b{i}.json")
            for case in r["cases"]:
                for metric in case["metrics"].values():
                    factor = self.FACTOR if metric["better"] == "higher" else 1 / self.FACTOR
                    metric["samples"] = [x * factor for x in metric["samples"]]
                    metric["stats"] = stats_of(metric["samples"])
            fast.append(r)
        self.promote(fast)
        result = self.write("runs/now.json", self.measure("now.json"))
        proc, report, junit = self.gate(result)
        self.assert_exit(proc, EXIT_FAILURE)
        metric = find_case(report, self.MEMCPY_4K)["metrics"][1]
        self.assertEqual(metric["label"], "regression (confirmed 3/3)", describe(proc))
        self.assertTrue(metric["confirmation"]["confirmed"])
        self.assertTrue(all(c > 1000 for c in metric["confirmation"]["rerun_changes_pct"]))
        self.assertRegex(proc.stdout, r"(?m)^regression \(confirmed 3/3\)")
        failure = next(tc for tc in ET.parse(junit).getroot().iter("testcase")
                       if tc.get("name") == self.MEMCPY_4K).find("failure")
        self.assertIn("confirmed 3/3", failure.get("message"))


def with_environment(doc: Json, steal_pct: float, other_process: bool = False) -> Json:
    """`doc` with a recorded run environment: CPU steal over the run, optionally another compute
    process on GPU 0 at the end (the shape pathbench run writes; see README)."""
    doc = copy.deepcopy(doc)
    gpu: Json = {"index": 0, "source": "nvml", "clock_event_reasons": ["gpu_idle"],
                 "processes": []}
    end_gpu = copy.deepcopy(gpu)
    if other_process:
        end_gpu["processes"] = [{"pid": 4242, "name": "python3", "used_memory_bytes": 1 << 30,
                                 "self": False}]
    doc["context"]["environment"] = {
        "start": {"time": "2026-12-01T01:00:00Z", "gpus": [gpu]},
        "end": {"time": "2026-12-01T01:00:30Z", "gpus": [end_gpu]},
        "cpu_share": {"steal_pct": steal_pct, "iowait_pct": 0.1, "busy_pct": 8.0},
        "other_gpu_processes": other_process,
    }
    return doc


class NoiseAndChanges(TempDirTest):

    def setUp(self) -> None:
        super().setUp()
        self.baseline = self.promote_five(with_environment(real_result(), 0.2),
                                          self.tmp / "baselines")

    def compare(self, doc: Json, *extra: str) -> tuple[subprocess.CompletedProcess[str], Json,
                                                      Path]:
        result, out_json, junit = (self.write("result.json", doc), self.tmp / "c.json",
                                   self.tmp / "junit.xml")
        proc = pathbench("compare", self.baseline, result, "--json", out_json, "--junit", junit,
                         *extra)
        return proc, json.loads(out_json.read_text(encoding="utf-8")), junit

    def test_result_taken_under_steal_is_refused(self) -> None:
        doc = with_environment(real_result(), 12.5)
        scale_case(doc, PINNED_H2D_4M, 0.9)  # even a real-looking regression is not judged
        proc, report, junit = self.compare(doc)
        self.assert_exit(proc, EXIT_INCOMPLETE)
        self.assertIn("incomparable: noisy", proc.stdout)
        self.assertRegex(proc.stdout, r"noisy: result: CPU steal was 12\.5 %")
        self.assertTrue(report["noise"])
        self.assertEqual(ET.parse(junit).getroot().get("errors"), "1")
        proc, report, _ = self.compare(doc, "--allow-noisy")
        self.assert_exit(proc, EXIT_FAILURE)
        self.assertIn("--allow-noisy", proc.stdout)

    def test_another_gpu_process_is_refused(self) -> None:
        proc, report, _ = self.compare(with_environment(real_result(), 0.1, other_process=True))
        self.assert_exit(proc, EXIT_INCOMPLETE)
        self.assertIn("pid 4242 (python3", proc.stdout)

    def test_quiet_result_is_judged(self) -> None:
        proc, report, _ = self.compare(with_environment(real_result(), 0.3))
        self.assert_exit(proc, EXIT_OK)
        self.assertEqual(report["noise"], [])

    def test_what_changed_comes_first(self) -> None:
        doc = with_environment(real_result(), 0.1)
        before = doc["context"]["driver_version"]
        doc["context"]["driver_version"] = "590.44.01"
        doc["context"]["bios_version"] = "9.99"
        proc, report, junit = self.compare(doc)
        self.assert_exit(proc, EXIT_OK)
        lines = proc.stdout.splitlines()
        self.assertEqual(lines[0], "what changed since the baseline:")
        self.assertEqual(lines[1], f"  driver {before} → 590.44.01")
        self.assertTrue(lines[2].startswith("  BIOS version "), lines[2])
        self.assertEqual(report["changes"][0]["field"], "driver_version")
        self.assertEqual(report["changes"][0]["result"], "590.44.01")
        suite = ET.parse(junit).getroot().find("testsuite")
        props = {p.get("name"): p.get("value") for p in suite.find("properties")}
        self.assertEqual(props["changed.driver_version"], f"driver {before} → 590.44.01")
        self.assertEqual(list(suite)[0].tag, "properties")


class RunOutputs(TempDirTest):

    def test_benchmark_out_json(self) -> None:
        scenario = self.write("tiny.json", tiny_scenario())
        out = self.tmp / "result.json"
        bm = self.tmp / "bm.json"
        proc = pathbench("run", scenario, "--out", out, "--benchmark_out", bm,
                         "--benchmark_out_format", "json", timeout=120)
        self.assert_exit(proc, EXIT_OK)
        result = json.loads(out.read_text(encoding="utf-8"))
        ids = [c["id"] for c in result["cases"]]
        self.assertEqual(len(ids), 2)
        self.assertTrue(all(c["status"] == "ok" for c in result["cases"]), result["cases"])

        native = json.loads(bm.read_text(encoding="utf-8"))
        self.assertIn("context", native)
        benchmarks = native["benchmarks"]
        iterations = [b for b in benchmarks if b["run_type"] == "iteration"]
        aggregates = [b for b in benchmarks if b["run_type"] == "aggregate"]
        self.assertEqual(len(iterations), len(ids) * 5)
        self.assertTrue(aggregates, "Google Benchmark's mean/median/stddev per case")
        for case_id in ids:
            mine = [b for b in iterations if b["name"].startswith(case_id + "/")
                    or b["name"] == case_id]
            self.assertEqual(len(mine), 5, case_id)
            self.assertEqual(sorted(b["repetition_index"] for b in mine), list(range(5)))
            self.assertTrue(any(a["name"].startswith(case_id) and a["aggregate_name"] == "median"
                                for a in aggregates), case_id)
        for b in benchmarks:
            self.assertTrue(any(b["name"].startswith(i) for i in ids), b["name"])

        # The result is a valid baseline for itself. --allow-noisy: a real run on a CI machine whose
        # hypervisor may steal its CPUs (seen: 5.3 % steal, exit 2); the noise rule has its own tests.
        self.assert_exit(pathbench("compare", out, out, "--allow-noisy"), EXIT_OK)

    def test_unknown_benchmark_out_format_fails_before_measuring(self) -> None:
        scenario = self.write("tiny.json", tiny_scenario())
        out = self.tmp / "result.json"
        bm = self.tmp / "bm.xml"
        started = time.monotonic()
        proc = pathbench("run", scenario, "--out", out, "--benchmark_out", bm,
                         "--benchmark_out_format", "xml")
        self.assert_exit(proc, EXIT_BAD_INPUT)
        self.assertIn("--benchmark_out_format", proc.stderr)
        self.assertIn("xml", proc.stderr)
        self.assertFalse(out.exists(), "nothing was measured or written")
        self.assertFalse(bm.exists())
        self.assertLess(time.monotonic() - started, 10)

    def test_scenario_gate_reaches_the_result(self) -> None:
        gate = {"threshold_pct": 7, "metrics": {"time_per_copy": 12}}
        scenario = self.write("gated.json", tiny_scenario(gate))
        out = self.tmp / "result.json"
        proc = pathbench("run", scenario, "--out", out, timeout=120)
        self.assert_exit(proc, EXIT_OK)
        result = json.loads(out.read_text(encoding="utf-8"))
        self.assertEqual(len(result["cases"]), 2)
        for case in result["cases"]:
            self.assertEqual(case.get("gate"), gate, case["id"])

        # The gate block drives the comparison: time_per_copy is gated at 12 %. --allow-noisy: a
        # real run, as above.
        json_out = self.tmp / "compare.json"
        self.assert_exit(pathbench("compare", out, out, "--json", json_out, "--allow-noisy"), EXIT_OK)
        for case in json.loads(json_out.read_text(encoding="utf-8"))["cases"]:
            thresholds = {m["name"]: m["threshold_pct"] for m in case["metrics"]}
            self.assertEqual(thresholds, {"bandwidth": 7, "time_per_copy": 12}, case["id"])

    def test_bad_gate_blocks_exit_3_with_pointer(self) -> None:
        bad_gates: dict[str, tuple[Any, str]] = {
            "string_threshold": ({"threshold_pct": "x"}, "/scenarios/0/gate/threshold_pct"),
            "unknown_key": ({"threshold_pct": 3, "bogus": 1}, "/scenarios/0/gate/bogus"),
            "string_metric": ({"metrics": {"bandwidth": "x"}},
                              "/scenarios/0/gate/metrics/bandwidth"),
            "negative": ({"threshold_pct": -1}, "/scenarios/0/gate/threshold_pct"),
            "not_object": (5, "/scenarios/0/gate"),
        }
        for name, (gate, pointer) in bad_gates.items():
            with self.subTest(name):
                scenario = self.write(f"{name}.json", tiny_scenario(gate))
                out = self.tmp / f"{name}-result.json"
                proc = pathbench("run", scenario, "--out", out)
                self.assert_bad_input(proc, scenario, pointer)
                self.assertFalse(out.exists())


# ------------------------------------------------------------------------------------------------

def main() -> int:
    global PATHBENCH, SOURCE
    PATHBENCH, SOURCE, rest = harness.parse_binary_args(__doc__.splitlines()[0])
    return harness.run_unittests(rest)


if __name__ == "__main__":
    sys.exit(main())
