#!/usr/bin/env python3
"""End-to-end tests of the pathbench command line: the real binary, real files, real exit codes.

    python3 tests/e2e/test_cli.py --pathbench build/pathbench --source . [unittest args]

Runs on any Linux machine: without a GPU the copy family must skip with a reason, with one it must
run. Every measurement here is tiny (KiB..MiB buffers, 1..5 repetitions, min_time 0.01 s), so the
whole file finishes in well under two minutes on two cores.

Conventions under test (DESIGN.md): exit codes 0 success, 1 a case failed, 2 incomplete, 3 bad
input or usage; messages name the file and the JSON pointer ("FILE: POINTER: what"); the result
file is pathbench.result/v1 with context, scenario files + sha256, start/end time and every sample.
"""
from __future__ import annotations

import concurrent.futures
import datetime
import hashlib
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from typing import Any

import harness

# Set by main() from --pathbench / --source.
PATHBENCH: Path = Path("pathbench")
SOURCE: Path = Path(".")

EXIT_OK = 0
EXIT_BAD_INPUT = 3
SCENARIO_SCHEMA = "pathbench.scenario/v1"
RESULT_SCHEMA = "pathbench.result/v1"
STAT_FIELDS = ("n", "median", "min", "max", "mean", "p10", "p90", "stddev", "cv")

# Fields DESIGN.md ("The result file", context) asks the inventory for.
INVENTORY_FIELDS = (
    "tool_version", "git_sha", "hostname", "node_type", "topology_fingerprint", "cpu_model",
    "numa_nodes", "cpuset", "mems_allowed", "cpuset_aligned_with_gpu", "thp_enabled",
    "numa_balancing", "hugepages_total", "hugepages_free", "kernel", "bios_version",
    "cuda_runtime_version", "cuda_driver_version", "driver_version", "gpus",
)
GPU_FIELDS = (
    "index", "name", "uuid", "pci_bus_id", "pcie_gen_current", "pcie_gen_max",
    "pcie_width_current", "pcie_width_max", "numa_node", "vbios",
)
# Inventory fields that describe the machine rather than its momentary state (numa_nodes is
# compared without memory_bytes: on a VM with hot-plugged memory a node's size moves).
STABLE_INVENTORY_FIELDS = (
    "tool_version", "git_sha", "hostname", "node_type", "topology_fingerprint", "cpu_model",
    "cpuset", "mems_allowed", "thp_enabled", "numa_balancing", "hugepages_total",
    "kernel", "bios_version", "cuda_runtime_version", "driver_version",
)

# Every kind of scenario-file error the brief asks for must keep a fixture (file name -> kind).
REQUIRED_BAD_FIXTURES = {
    "not_json.json": "not JSON",
    "wrong_schema.json": "wrong schema string",
    "missing_scenarios.json": "missing scenarios",
    "empty_scenarios.json": "empty scenarios array",
    "unknown_top_level_field.json": "unknown top-level field",
    "scenario_unknown_field.json": "scenario unknown field",
    "unknown_family.json": "unknown family",
    "missing_name.json": "missing name",
    "duplicate_scenario_name.json": "duplicate scenario name",
    "repetitions_zero.json": "repetitions 0",
    "repetitions_string.json": "repetitions as string",
    "min_time_negative.json": "min_time negative",
    "missing_axes.json": "missing axes",
    "unknown_axis.json": "unknown axis for the family",
    "empty_axis_list.json": "empty axis list",
    "bytes_not_a_size.json": "string for bytes that is not a size",
    "direction_integer.json": "integer for direction",
    "value_not_allowed.json": "value not allowed (h2x)",
    "range_last_before_first.json": "bad range pow2 [30, 10]",
    "unknown_range_kind.json": "unknown range kind",
    "duplicate_axis_value.json": "duplicate axis value",
    "duplicate_key.json": "a key twice in one object",
    "exclude_names_non_axis.json": "exclude naming a non-axis",
    "exclude_removes_every_case.json": "exclude removing every case",
    "invalid_combination_d2d_host_memory.json": "d2d with host_memory",
    "size_exceeds_host_memory.json": "size that does not fit in memory",
    "missing_required_axis.json": "copy without bytes",
}
# memcpy of 1 TiB needs 2 TiB; a machine with that much available cannot show the error.
SIZE_FIXTURE = "size_exceeds_host_memory.json"
SIZE_FIXTURE_NEEDS = 2 << 40


# ------------------------------------------------------------------------------------------------
# Helpers


def run_pb(*args: str | os.PathLike[str], cwd: Path | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Runs pathbench with `args`; never raises on a non-zero exit."""
    cmd = [str(PATHBENCH), *map(str, args)]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          check=False)


def describe(proc: subprocess.CompletedProcess[str]) -> str:
    """Everything needed to understand a failing assertion about a run."""
    return (f"\n$ {' '.join(proc.args)}\nexit {proc.returncode}\n--- stdout ---\n"
            f"{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}")


_INVENTORY: dict[str, Any] | None = None


def inventory() -> dict[str, Any]:
    """The machine's inventory, read once through `pathbench inventory`."""
    global _INVENTORY
    if _INVENTORY is None:
        proc = run_pb("inventory")
        if proc.returncode != 0:
            raise AssertionError("pathbench inventory failed" + describe(proc))
        _INVENTORY = json.loads(proc.stdout)
    return _INVENTORY


def no_gpu_reason() -> str | None:
    """Why the copy family cannot run here, or None when a usable GPU is present."""
    inv = inventory()
    if inv.get("cuda_unavailable_reason"):
        return inv["cuda_unavailable_reason"]
    if not inv.get("gpus"):
        return "inventory lists no GPU"
    return None


def scenario_doc(*scenarios: dict[str, Any]) -> dict[str, Any]:
    return {"schema": SCENARIO_SCHEMA, "scenarios": list(scenarios)}


def host_scenario(name: str, axes: dict[str, Any], repetitions: int = 5,
                  min_time: float = 0.01) -> dict[str, Any]:
    return {"name": name, "family": "host_memory", "repetitions": repetitions,
            "min_time": min_time, "axes": axes}


def write_json(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def case_id(family: str, params: dict[str, Any]) -> str:
    """The id DESIGN.md defines: family/axis=value/... in axis order, strings unquoted."""
    parts = [family]
    for name, value in params.items():
        parts.append(f"{name}={value if isinstance(value, str) else json.dumps(value)}")
    return "/".join(parts)


def file_name_label(text: str) -> str:
    """Mirror of cli::file_name_label: [A-Za-z0-9.-] kept, runs of others become one '_'."""
    out = ""
    for c in text:
        if c.isascii() and (c.isalnum() or c in ".-"):
            out += c
        elif out and not out.endswith("_"):
            out += "_"
    out = out.rstrip("_")
    return out or "node"


def numa_layout(inv: dict[str, Any]) -> list[tuple[int, list[int]]]:
    return [(node["id"], node["cpus"]) for node in inv["numa_nodes"]]


def parse_utc(text: str) -> datetime.datetime:
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", text):
        raise AssertionError(f"{text!r} is not an ISO 8601 UTC time (YYYY-MM-DDTHH:MM:SSZ)")
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def list_dir(path: Path) -> list[str]:
    return sorted(os.listdir(path)) if path.exists() else []


class ResultAssertions(unittest.TestCase):
    """Structural checks every result file must pass, whatever it measured."""

    def load_result(self, path: Path) -> dict[str, Any]:
        self.assertTrue(path.is_file(), f"no result file at {path}")
        with path.open() as f:
            result = json.load(f)
        self.check_result(result)
        return result

    def check_result(self, result: dict[str, Any]) -> None:
        self.assertEqual(result.get("schema"), RESULT_SCHEMA)
        context = result.get("context")
        self.assertIsInstance(context, dict)
        for field in INVENTORY_FIELDS + ("scenario_files", "start_time", "end_time"):
            self.assertIn(field, context, f"context lacks {field}")
        start, end = parse_utc(context["start_time"]), parse_utc(context["end_time"])
        self.assertLessEqual(start, end)
        self.assertIsInstance(context["scenario_files"], list)
        self.assertGreater(len(context["scenario_files"]), 0)
        for ref in context["scenario_files"]:
            self.assertEqual(set(ref), {"path", "sha256"})
            self.assertRegex(ref["sha256"], r"^[0-9a-f]{64}$")
        cases = result.get("cases")
        self.assertIsInstance(cases, list)
        ids = [c["id"] for c in cases]
        self.assertEqual(len(ids), len(set(ids)), "case ids must be unique within a run")
        for case in cases:
            with self.subTest(case=case.get("id")):
                self.check_case(case)

    def check_case(self, case: dict[str, Any]) -> None:
        for field in ("id", "scenario", "family", "params", "status", "reason", "timing_method",
                      "metrics", "checks"):
            self.assertIn(field, case)
        self.assertEqual(case["id"], case_id(case["family"], case["params"]))
        self.assertIn(case["status"], ("ok", "skipped", "failed"))
        if case["status"] == "skipped":
            self.assertTrue(case["reason"].strip(), f"{case['id']}: skipped without a reason")
            self.assertEqual(case["metrics"], {}, "a skipped case measured nothing")
            self.assertIsNone(case["timing_method"], "a skipped case was timed by nothing")
            return
        if case["status"] == "failed":
            self.assertTrue(case["reason"].strip(), f"{case['id']}: failed without a reason")
            return
        self.assertIn(case["timing_method"], ("host_steady_clock", "cuda_events_latched"))
        self.assertTrue(case["metrics"], f"{case['id']}: ok without metrics")
        for name, metric in case["metrics"].items():
            with self.subTest(metric=name):
                self.check_metric(metric)
        self.assertIsInstance(case["checks"], list)
        for check in case["checks"]:
            self.assertIsInstance(check.get("name"), str)
            self.assertIsInstance(check.get("passed"), bool)
            self.assertIsInstance(check.get("detail"), str)

    def check_metric(self, metric: dict[str, Any]) -> None:
        self.assertIsInstance(metric.get("unit"), str)
        self.assertTrue(metric["unit"])
        self.assertIn(metric.get("better"), ("higher", "lower"))
        samples = metric["samples"]
        stats = metric["stats"]
        for field in STAT_FIELDS:
            self.assertIn(field, stats)
        self.assertEqual(stats["n"], len(samples))
        self.assertTrue(all(isinstance(s, (int, float)) and math.isfinite(s) for s in samples))
        self.assertTrue(all(s > 0 for s in samples), f"non-positive sample in {samples}")
        rel = 1e-9
        self.assertAlmostEqual(stats["min"], min(samples), delta=rel * abs(min(samples)))
        self.assertAlmostEqual(stats["max"], max(samples), delta=rel * abs(max(samples)))
        mean = statistics.fmean(samples)
        self.assertAlmostEqual(stats["mean"], mean, delta=1e-9 * abs(mean))
        median = statistics.median(samples)
        self.assertAlmostEqual(stats["median"], median, delta=1e-9 * abs(median))
        self.assertLessEqual(stats["min"], stats["p10"])
        self.assertLessEqual(stats["p10"], stats["median"])
        self.assertLessEqual(stats["median"], stats["p90"])
        self.assertLessEqual(stats["p90"], stats["max"])
        self.assertGreaterEqual(stats["stddev"], 0)
        if stats["mean"] > 0:
            self.assertAlmostEqual(stats["cv"], stats["stddev"] / stats["mean"],
                                   delta=1e-9 + 1e-9 * stats["cv"])


# ------------------------------------------------------------------------------------------------
# Usage, help, version


class TestUsage(unittest.TestCase):
    def test_help(self) -> None:
        proc = run_pb("--help")
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        for word in ("pathbench", "run", "list", "inventory", "Exit codes"):
            self.assertIn(word, proc.stdout, describe(proc))

    def test_run_help(self) -> None:
        proc = run_pb("run", "--help")
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        for word in ("scenarios", "--out", "--filter", "--repetitions", "--quick", "--device",
                     "--node-type"):
            self.assertIn(word, proc.stdout, describe(proc))

    def test_list_and_inventory_help(self) -> None:
        for sub, words in (("list", ("scenarios", "--filter")), ("inventory", ("--out",))):
            with self.subTest(sub=sub):
                proc = run_pb(sub, "--help")
                self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
                for word in words:
                    self.assertIn(word, proc.stdout, describe(proc))

    def test_version(self) -> None:
        proc = run_pb("--version")
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        text = proc.stdout.strip()
        self.assertRegex(text, r"^\d+\.\d+\.\d+")
        # The version the binary prints is the one it records in every result.
        self.assertIn(inventory()["tool_version"], text)
        self.assertIn(inventory()["git_sha"], text)

    def test_usage_errors_exit_3(self) -> None:
        for args in ([], ["--no-such-option"], ["run"], ["list"], ["frobnicate"],
                     ["run", "--no-such-option", "x.json"], ["run", "--repetitions", "many", "x"]):
            with self.subTest(args=args):
                proc = run_pb(*args)
                self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
                self.assertTrue(proc.stderr.strip(), "a usage error says what is wrong")

    def test_repetitions_below_one_exit_3(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "r.json"
            for value in ("0", "-1"):
                with self.subTest(value=value):
                    proc = run_pb("run", SOURCE / "tests/fixtures/good_scenarios",
                                  f"--repetitions={value}", "--out", out)
                    self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
                    self.assertIn("--repetitions", proc.stderr)
                    self.assertFalse(out.exists())

    def test_invalid_filter_regex_exit_3(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "r.json"
            proc = run_pb("run", SOURCE / "tests/fixtures/good_scenarios", "--filter", "([",
                          "--out", out)
            self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
            self.assertIn("--filter", proc.stderr)
            self.assertIn("regular expression", proc.stderr)
            self.assertFalse(out.exists())


# ------------------------------------------------------------------------------------------------
# inventory


class TestInventory(unittest.TestCase):
    def test_fields(self) -> None:
        inv = inventory()
        for field in INVENTORY_FIELDS:
            self.assertIn(field, inv, f"inventory lacks {field}")
        for field in ("hostname", "node_type", "topology_fingerprint", "cpu_model", "kernel",
                      "thp_enabled"):
            self.assertIsInstance(inv[field], str)
            self.assertTrue(inv[field], f"{field} is empty")
        self.assertRegex(inv["topology_fingerprint"], r"^[0-9a-f]{16,}$")
        self.assertIsInstance(inv["numa_nodes"], list)
        self.assertGreaterEqual(len(inv["numa_nodes"]), 1)
        for node in inv["numa_nodes"]:
            self.assertIsInstance(node["id"], int)
            self.assertIsInstance(node["cpus"], list)
        for field in ("cpuset", "mems_allowed"):
            self.assertIsInstance(inv[field], list)
            self.assertTrue(inv[field], f"{field} is empty")
            self.assertTrue(all(isinstance(x, int) for x in inv[field]))
        # The process runs somewhere: its cpuset holds the CPU count of this machine at most.
        self.assertLessEqual(len(inv["cpuset"]), os.cpu_count() or len(inv["cpuset"]))
        self.assertIn(inv["thp_enabled"], ("always", "madvise", "never"))
        self.assertIsInstance(inv["hugepages_total"], int)
        self.assertIsInstance(inv["gpus"], list)
        self.assertIsInstance(inv["cuda_unavailable_reason"], str)
        if no_gpu_reason() is None:
            for gpu in inv["gpus"]:
                for field in GPU_FIELDS:
                    self.assertIn(field, gpu, f"GPU entry lacks {field}")

    def test_out_writes_the_same_inventory(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "sub" / "inventory.json"
            proc = run_pb("inventory", "--out", out)
            self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
            self.assertEqual(proc.stdout, "", "with --out the JSON goes to the file only")
            written = json.loads(out.read_text())
            self.assertEqual(list(written), list(inventory()), "same fields, same order")
            for field in STABLE_INVENTORY_FIELDS:
                self.assertEqual(written[field], inventory()[field], field)
            self.assertEqual(numa_layout(written), numa_layout(inventory()))
            self.assertEqual([g.get("uuid") for g in written["gpus"]],
                             [g.get("uuid") for g in inventory()["gpus"]])
            self.assertEqual(list_dir(out.parent), ["inventory.json"], "no temporary file left")

    def test_fingerprint_is_stable(self) -> None:
        proc = run_pb("inventory")
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        again = json.loads(proc.stdout)
        self.assertEqual(again["topology_fingerprint"], inventory()["topology_fingerprint"])

    def test_node_type_label(self) -> None:
        proc = run_pb("inventory", "--node-type", "e2e-label")
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        inv = json.loads(proc.stdout)
        self.assertEqual(inv["node_type"], "e2e-label")
        self.assertIs(inv["node_type_derived"], False)
        self.assertIs(inventory()["node_type_derived"], True)

    def test_out_unwritable_exit_3(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            blocker = Path(tmp) / "regular-file"
            blocker.write_text("")
            out = blocker / "inventory.json"
            proc = run_pb("inventory", "--out", out)
            self.assertEqual(proc.returncode, EXIT_BAD_INPUT,
                             "an unwritable --out is bad usage (as for run)" + describe(proc))
            self.assertIn(str(out), proc.stderr, "the message names the file")


# ------------------------------------------------------------------------------------------------
# list


class TestExportJsonLines(unittest.TestCase):
    """`pathbench export --json-lines`: every file read by pathbench's own reader, one JSON line
    each (what the report scripts read through, reports/lib/pathbench_reader.py)."""

    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="pathbench-json-lines-")
        self.tmp = Path(self._tmp.name)
        self.result = SOURCE / "tests" / "fixtures" / "results" / "h200-default.json"
        self.bad = SOURCE / "tests" / "fixtures" / "bad_results" / "bad_status.json"

    def tearDown(self) -> None:
        self._tmp.cleanup()

    def lines(self, proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
        self.assertEqual(proc.returncode, 0, describe(proc))
        return [json.loads(line) for line in proc.stdout.splitlines()]

    def test_a_result_comes_back_as_read(self) -> None:
        (line,) = self.lines(run_pb("export", "--json-lines", self.result))
        self.assertEqual(line["path"], str(self.result))
        self.assertEqual(line["schema"], "pathbench.result/v1")
        self.assertIs(line["complete"], True)
        self.assertEqual(line["incomplete_reason"], "")
        self.assertEqual(line["document"], json.loads(self.result.read_text(encoding="utf-8")))

    def test_a_baseline_with_its_spreads(self) -> None:
        runs = sorted((SOURCE / "tests" / "fixtures" / "fleet" / "h200").glob("run-*.json"))
        promote = run_pb("baseline", "promote", *runs, "--dir", self.tmp / "baselines", "--allow-noisy")
        self.assertEqual(promote.returncode, 0, describe(promote))
        (baseline,) = (self.tmp / "baselines").glob("*.json")
        (line,) = self.lines(run_pb("export", "--json-lines", "--as", "baseline", baseline))
        self.assertEqual(line["schema"], "pathbench.baseline/v1")
        self.assertEqual(line["document"], json.loads(baseline.read_text(encoding="utf-8")))
        case = line["document"]["cases"][0]
        name = next(iter(case["metrics"]))
        spread = line["between_run"][case["id"]][name]
        self.assertIsNotNone(spread["spread_pct"])
        self.assertGreater(spread["center"], 0)
        self.assertEqual(set(spread["statistics"]), {"p50", "p90", "p99", "p99.9", "max"})
        # A result is no baseline: refused at its schema before its content is looked at.
        refused = run_pb("export", "--json-lines", "--as", "baseline", self.bad)
        self.assertEqual(refused.returncode, EXIT_BAD_INPUT, describe(refused))
        self.assertIn(f"{self.bad}: /schema: ", refused.stderr)
        self.assertIn("not a baseline", refused.stderr)

    def test_several_files_at_once(self) -> None:
        trace = SOURCE / "tests" / "fixtures" / "timelines" / "overlap_event_wait.trace.json"
        lines = self.lines(run_pb("export", "--json-lines", self.result, self.result))
        self.assertEqual([line["path"] for line in lines], [str(self.result)] * 2)
        (line,) = self.lines(run_pb("export", "--json-lines", "--as", "json", trace))
        self.assertEqual(line["document"], json.loads(trace.read_text(encoding="utf-8")))

    def test_a_refused_file_writes_nothing(self) -> None:
        proc = run_pb("export", "--json-lines", self.result, self.bad, self.result)
        self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
        self.assertEqual(proc.stdout, "", "all or nothing")
        self.assertIn(f"pathbench: error: {self.bad}: /cases/0/status: ", proc.stderr)
        (error,) = [json.loads(line)["error"] for line in proc.stderr.splitlines() if line.startswith('{"error":')]
        self.assertEqual(error["path"], str(self.bad))
        self.assertEqual(error["pointer"], "/cases/0/status")
        self.assertIn(error["message"], proc.stderr)
        big = run_pb("export", "--json-lines", "--max-bytes", "100", self.result)
        self.assertEqual(big.returncode, EXIT_BAD_INPUT, describe(big))
        self.assertIn("more than the 100", big.stderr)
        self.assertEqual(big.stdout, "")

    def test_prometheus_and_json_lines_exclude_each_other(self) -> None:
        for args in (["--json-lines", "--prometheus", "-"], [], ["--as", "json"]):
            with self.subTest(args=args):
                proc = run_pb("export", *args, self.result)
                self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
                self.assertEqual(proc.stdout, "")
        proc = run_pb("export", "--prometheus", "-", self.result, self.result)
        self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
        self.assertIn("--prometheus", proc.stderr)
        help_text = run_pb("export", "--help").stdout
        self.assertIn("--json-lines", help_text)
        self.assertIn("Excludes --prometheus", help_text)


class TestList(unittest.TestCase):
    def test_default_scenarios(self) -> None:
        proc = run_pb("list", SOURCE / "scenarios/default.json")
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        lines = proc.stdout.splitlines()
        case_lines = [ln.strip() for ln in lines if ln.startswith("    ")]
        host = [ln for ln in case_lines if ln.startswith("host_memory/")]
        copy = [ln for ln in case_lines if ln.startswith("copy/")]
        self.assertTrue(host, "default.json lists host_memory cases" + describe(proc))
        self.assertTrue(copy, "default.json lists copy cases" + describe(proc))
        for name in ("host-memcpy", "copy-bandwidth", "copy-d2d"):
            self.assertIn(name, proc.stdout)
        total = re.search(r"^(\d+) cases, (\d+) would be skipped on this machine$", proc.stdout,
                          re.M)
        self.assertIsNotNone(total, describe(proc))
        assert total is not None
        self.assertEqual(int(total.group(1)), len(case_lines))
        skipped_here = [ln for ln in case_lines if "(skipped here: " in ln]
        self.assertEqual(int(total.group(2)), len(skipped_here))
        reason = no_gpu_reason()
        for line in copy:
            with self.subTest(case=line.split()[0]):
                if reason is not None:
                    m = re.search(r"\(skipped here: (.+)\)$", line)
                    self.assertIsNotNone(m, f"no GPU ({reason}), yet not skipped: {line}")
                    assert m is not None
                    self.assertTrue(m.group(1).strip())
                    self.assertIn(reason, m.group(1), "the reason is the inventory's")
                else:
                    self.assertNotIn("skipped here", line, "a GPU is present")

    def test_filter(self) -> None:
        proc = run_pb("list", SOURCE / "scenarios/default.json", "--filter", "measure=latency")
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        ids = [ln.split()[0] for ln in proc.stdout.splitlines() if ln.startswith("    ")]
        self.assertTrue(ids)
        self.assertTrue(all("measure=latency" in i for i in ids), ids)

    def test_pinning_cap_decides_which_pressure_cases_skip(self) -> None:
        scenario = SOURCE / "scenarios/host_memory.json"
        pressure = "pinned_pct="

        def pressure_lines(*extra: str) -> dict[str, str]:
            proc = run_pb("list", scenario, "--filter", pressure, *extra)
            self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
            lines = [ln.strip() for ln in proc.stdout.splitlines() if ln.startswith("    ")]
            return {ln.split()[0]: ln for ln in lines}

        default = pressure_lines()
        self.assertEqual(len(default), 6, default)
        for case_id, line in default.items():
            with self.subTest(case=case_id):
                # The default cap is 50 %: no case of 0, 25 or 50 % is skipped for the cap.
                self.assertNotIn("exceeds the run's cap", line)
        capped = pressure_lines("--max-pinned-pct", "10")
        for case_id, line in capped.items():
            with self.subTest(case=case_id, cap=10):
                if "pinned_pct=0" in case_id:
                    self.assertNotIn("exceeds the run's cap", line)
                else:
                    pct = re.search(r"pinned_pct=(\d+)", case_id)
                    assert pct is not None
                    self.assertIn(f"pinning {pct.group(1)} % of RAM exceeds the run's cap of "
                                  f"10 %", line)
                    self.assertIn(f"--max-pinned-pct {pct.group(1)}", line)
        for bad in ("91", "-1", "1e1", "", "50%"):
            with self.subTest(value=bad):
                proc = run_pb("list", scenario, "--max-pinned-pct", bad)
                self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
                self.assertIn("--max-pinned-pct", proc.stderr)

    def test_pinning_pressure_case_runs_and_records_the_cap(self) -> None:
        # 0 % is the reference: it runs everywhere and records the pressure check and the cap.
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "pressure.json"
            proc = run_pb("run", SOURCE / "scenarios/host_memory.json", "--quick", "--filter",
                          "measure=memcpy/.*pinned_pct=0", "--max-pinned-pct", "30",
                          "--out", out)
            self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
            result = json.loads(out.read_text())
            self.assertEqual(result["context"]["max_pinned_pct"], 30)
            cases = result["cases"]
            self.assertEqual(len(cases), 1, [c["id"] for c in cases])
            self.assertEqual(cases[0]["status"], "ok", cases[0].get("reason"))
            checks = {c["name"]: c for c in cases[0]["checks"]}
            self.assertIn("pinning_pressure", checks)
            self.assertTrue(checks["pinning_pressure"]["passed"])
            self.assertEqual(checks["pinning_pressure"]["value"]["cap_pct"], 30)
            self.assertEqual(checks["pinning_pressure"]["value"]["pinned_bytes"], 0)

    def test_numa_policies_run_and_count_where_pages_landed(self) -> None:
        # Every policy case of the shipped file runs on a CPU-only machine: pages counted per
        # node (policy_outcome), the misplaced share measured; the over-capacity cases run the
        # bind failure path in a capped memory cgroup where one can be made, else skip saying so.
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "policy.json"
            proc = run_pb("run", SOURCE / "scenarios/host_memory.json", "--quick", "--filter",
                          "policy=", "--out", out, timeout=300)
            self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
            cases = json.loads(out.read_text())["cases"]
            by_policy: dict[str, list[dict]] = {}
            for case in cases:
                by_policy.setdefault(case["params"]["policy"], []).append(case)
            self.assertEqual(sorted(by_policy), ["bind", "interleave", "local", "preferred"])
            for case in cases:
                with self.subTest(case=case["id"]):
                    if "memory_cap" in case["params"]:
                        if case["status"] == "skipped":
                            self.assertIn("memory_cap", case["reason"])
                            continue
                        self.assertEqual(case["status"], "ok", case.get("reason"))
                        checks = {c["name"]: c for c in case["checks"]}
                        self.assertTrue(checks["cap_held"]["passed"], checks["cap_held"])
                        touched = case["metrics"]["touched_share"]["stats"]["median"]
                        self.assertGreater(touched, 0.0)
                        if checks["cap_held"]["detail"].find("OOM killer") >= 0:
                            # 64 MiB of 256 MiB: the child dies after about a quarter.
                            self.assertLess(touched, 0.5)
                            self.assertGreaterEqual(case["metrics"]["oom_kills"]["stats"]["median"], 1)
                        continue
                    self.assertEqual(case["status"], "ok", case.get("reason"))
                    checks = {c["name"]: c for c in case["checks"]}
                    outcome = checks["policy_outcome"]
                    self.assertTrue(outcome["passed"], outcome)
                    self.assertEqual(sum(outcome["value"].values()), 4096, outcome)
                    misplaced = case["metrics"]["misplaced_share"]["stats"]
                    self.assertGreaterEqual(misplaced["median"], 0.0)
                    self.assertLessEqual(misplaced["max"], 1.0)
                    if len(outcome["value"]) == 1:
                        # One node holds everything: nothing can be misplaced.
                        self.assertEqual(misplaced["max"], 0.0, outcome)

    def test_tp_group_check(self) -> None:
        # "all" on a machine with fewer than two GPUs has no pair to check; an index the machine
        # lacks is bad input; the context lists the NVLink domains either way.
        proc = run_pb("inventory", "--tp-group", "0,99")
        self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
        self.assertIn("--tp-group", proc.stderr)
        proc = run_pb("inventory")
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        inventory = json.loads(proc.stdout)
        domains = inventory["nvlink_domains"]
        self.assertEqual(sorted(i for d in domains for i in d),
                         sorted(g["index"] for g in inventory["gpus"]))
        if len(inventory["gpus"]) < 2:
            proc = run_pb("inventory", "--tp-group", "all")
            self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
            self.assertIn("nothing to check", proc.stderr)

    def test_filter_matching_nothing_exit_3(self) -> None:
        proc = run_pb("list", SOURCE / "scenarios/default.json", "--filter", "^no-such-case$")
        self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
        self.assertIn("no case matches", proc.stderr)

    def test_catastrophic_filter_completes(self) -> None:
        # std::regex backtracked exponentially on this pattern; RE2 is linear in the id.
        proc = run_pb("list", SOURCE / "scenarios/default.json", "--filter",
                      "^(copy|host_memory|[a-z_]+)*(a|a)*(a*)*x$", timeout=20)
        self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
        self.assertIn("no case matches", proc.stderr)

    def test_exclude_rule_matching_no_case_is_a_warning(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            scenario = host_scenario("host", {"measure": ["memcpy"], "bytes": ["64KiB"]},
                                     repetitions=1)
            scenario["exclude"] = [{"bytes": "128KiB"}, {"measure": "memcpy", "bytes": ["1MiB"]}]
            path = write_json(Path(tmp) / "s.json", scenario_doc(scenario))
            out = Path(tmp) / "r.json"
            for cmd in (["list", path], ["run", path, "--quick", "--out", out]):
                with self.subTest(cmd=cmd[0]):
                    proc = run_pb(*cmd)
                    self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
                    for rule in (0, 1):
                        self.assertIn(f"pathbench: warning: {path}: /scenarios/0/exclude/{rule}: "
                                      "matches no case", proc.stderr, describe(proc))
                    self.assertIn("host_memory/measure=memcpy/bytes=65536",
                                  proc.stdout if cmd[0] == "list" else out.read_text())


# ------------------------------------------------------------------------------------------------
# run: a small host-only scenario


class TestRunSmallHostScenario(ResultAssertions):
    """host_memory memcpy 1 MiB 4k + first_touch 4k 16 MiB, 5 repetitions, min_time 0.01."""

    tmp: tempfile.TemporaryDirectory[str]
    scenario: Path
    out: Path
    proc: subprocess.CompletedProcess[str]
    result: dict[str, Any]

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory()
        root = Path(cls.tmp.name)
        cls.scenario = write_json(root / "small.json", scenario_doc(
            host_scenario("memcpy", {"measure": ["memcpy"], "page": ["4k"], "bytes": ["1MiB"]}),
            host_scenario("first-touch",
                          {"measure": ["first_touch"], "page": ["4k"], "bytes": ["16MiB"]}),
        ))
        cls.out = root / "out" / "result.json"
        cls.proc = run_pb("run", cls.scenario, "--out", cls.out)
        cls.result = json.loads(cls.out.read_text()) if cls.out.is_file() else {}

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    def test_exit_and_structure(self) -> None:
        self.assertEqual(self.proc.returncode, EXIT_OK, describe(self.proc))
        self.load_result(self.out)
        self.assertEqual(list_dir(self.out.parent), ["result.json"], "no temporary file left")

    def test_context(self) -> None:
        context = self.result["context"]
        self.assertEqual(context["scenario_files"],
                         [{"path": str(self.scenario), "sha256": sha256_of(self.scenario)}])
        for field in STABLE_INVENTORY_FIELDS:
            self.assertEqual(context[field], inventory()[field], field)
        self.assertEqual(numa_layout(context), numa_layout(inventory()))

    def test_cases(self) -> None:
        cases = self.result["cases"]
        self.assertEqual(
            [c["id"] for c in cases],
            ["host_memory/measure=memcpy/page=4k/bytes=1048576",
             "host_memory/measure=first_touch/page=4k/bytes=16777216"])
        self.assertEqual([c["scenario"] for c in cases], ["memcpy", "first-touch"])
        for case in cases:
            with self.subTest(case=case["id"]):
                self.assertEqual(case["status"], "ok", case["reason"])
                self.assertEqual(case["family"], "host_memory")
                self.assertEqual(case["timing_method"], "host_steady_clock")
                self.assertTrue(case["metrics"])
                for name, metric in case["metrics"].items():
                    self.assertEqual(len(metric["samples"]), 5, name)
                    self.assertEqual(metric["stats"]["n"], 5, name)
                    s = metric["stats"]
                    self.assertLessEqual(s["min"], s["median"])
                    self.assertLessEqual(s["median"], s["max"])
                    self.assertTrue(metric["unit"])
                    self.assertIn(metric["better"], ("higher", "lower"))
                self.assertTrue(case["checks"], "checks present")
                failed = [c for c in case["checks"] if not c["passed"]]
                self.assertEqual(failed, [], "every check passed")

    def test_metric_units(self) -> None:
        memcpy, touch = self.result["cases"]
        self.assertEqual(memcpy["metrics"]["bandwidth"]["unit"], "GB/s")
        self.assertEqual(memcpy["metrics"]["bandwidth"]["better"], "higher")
        self.assertEqual(touch["metrics"]["seconds_per_gib"]["unit"], "s/GiB")
        self.assertEqual(touch["metrics"]["seconds_per_gib"]["better"], "lower")
        check_names = {c["name"] for c in memcpy["checks"]}
        self.assertIn("destination_pattern", check_names)
        self.assertTrue(any(n.endswith("_placement") for n in check_names), check_names)
        self.assertTrue(any(n.endswith("_huge_backing") for n in check_names), check_names)

    def test_stdout_summary(self) -> None:
        out = self.proc.stdout
        self.assertRegex(out, r"(?m)^status\s+case\s+metric\s+median")
        for case in self.result["cases"]:
            self.assertRegex(out, rf"(?m)^ok\s+{re.escape(case['id'])}\s")
        self.assertIn("2 cases: 2 ok, 0 skipped, 0 failed", out)
        self.assertRegex(out, rf"(?m)^result: {re.escape(str(self.out))}$")


# ------------------------------------------------------------------------------------------------
# run: scenarios/default.json --quick


class TestRunDefaultQuick(ResultAssertions):
    tmp: tempfile.TemporaryDirectory[str]
    out: Path
    proc: subprocess.CompletedProcess[str]
    wall: float

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = Path(cls.tmp.name) / "quick.json"
        start = time.monotonic()
        cls.proc = run_pb("run", SOURCE / "scenarios/default.json", "--quick", "--out", cls.out,
                          timeout=300)
        cls.wall = time.monotonic() - start

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    def test_exit_and_wall_time(self) -> None:
        self.assertEqual(self.proc.returncode, EXIT_OK, describe(self.proc))
        print(f"\n  default.json --quick: {self.wall:.1f} s", file=sys.stderr)
        self.assertLess(self.wall, 60.0, "acceptance: default --quick under a minute")

    def test_cases(self) -> None:
        result = self.load_result(self.out)
        default = SOURCE / "scenarios/default.json"
        self.assertEqual([f["sha256"] for f in result["context"]["scenario_files"]],
                         [sha256_of(default)])
        families = {c["family"] for c in result["cases"]}
        self.assertEqual(families, {"host_memory", "copy", "overlap"})
        reason = no_gpu_reason()
        inv = inventory()
        for case in result["cases"]:
            with self.subTest(case=case["id"]):
                if case["family"] in ("copy", "overlap"):  # the GPU families
                    if reason is not None:
                        self.assertEqual(case["status"], "skipped")
                        self.assertTrue(case["reason"].strip())
                        self.assertIn(reason, case["reason"])
                    else:
                        self.assertEqual(case["status"], "ok", case["reason"])
                else:
                    self.assertIn(case["status"], ("ok", "skipped"), case["reason"])
                    if case["status"] == "skipped":
                        self.assertTrue(case["reason"].strip())
                    if case["params"].get("page") == "hugetlb" and inv["hugepages_free"] == 0:
                        self.assertEqual(case["status"], "skipped")
                        self.assertIn("hugetlb", case["reason"])
                        self.assertIn("nr_hugepages", case["reason"], "says how to fix it")
                if case["status"] == "ok":
                    for name, metric in case["metrics"].items():
                        self.assertLessEqual(metric["stats"]["n"], 3, f"--quick: {name}")
                    failed = [c for c in case["checks"] if not c["passed"]]
                    self.assertEqual(failed, [], "every check passed")
        self.assertRegex(self.proc.stdout, rf"(?m)^result: {re.escape(str(self.out))}$")


# ------------------------------------------------------------------------------------------------
# peer: the two-GPU family on a machine without two GPUs, and --devices


def usable_gpus() -> list[int]:
    """CUDA indexes of the GPUs the peer family could use here (none without CUDA)."""
    inv = inventory()
    if inv.get("cuda_unavailable_reason"):
        return []
    return sorted(g["index"] for g in inv.get("gpus", []))


class TestPeerWithoutTwoGpus(ResultAssertions):
    tmp: tempfile.TemporaryDirectory[str]
    out: Path
    proc: subprocess.CompletedProcess[str] | None = None

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = Path(cls.tmp.name) / "peer.json"
        if len(usable_gpus()) < 2:
            cls.proc = run_pb("run", SOURCE / "scenarios/peer.json", "--quick", "--out", cls.out,
                              timeout=300)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    def test_every_case_is_skipped_with_the_reason(self) -> None:
        if self.proc is None:
            self.skipTest(f"this machine has {len(usable_gpus())} GPUs: the peer sweep would "
                          "measure (tests/gpu/test_peer_gpu.cpp covers that)")
        self.assertEqual(self.proc.returncode, EXIT_OK, describe(self.proc))
        result = self.load_result(self.out)
        self.assertEqual(result["context"]["devices"], usable_gpus())
        cases = result["cases"]
        # 4 methods x uni/bi x 6 sizes of bandwidth + 4 methods x 4 sizes of latency, one "pair".
        self.assertEqual(len(cases), 4 * 2 * 6 + 4 * 4)
        for case in cases:
            with self.subTest(case=case["id"]):
                self.assertEqual(case["family"], "peer")
                self.assertEqual(case["status"], "skipped")
                self.assertIn("needs two GPUs", case["reason"])
                self.assertEqual(case["params"]["pair"], "none")
                self.assertEqual(case["params"]["link"], "none")
                self.assertTrue(case["id"].startswith("peer/pair=none/link=none/method="))
                self.assertEqual(case["id"], case_id("peer", case["params"]))
                self.assertEqual(case["metrics"], {})

    def test_list_marks_every_case_skipped(self) -> None:
        if len(usable_gpus()) >= 2:
            self.skipTest("this machine has two GPUs")
        proc = run_pb("list", SOURCE / "scenarios/peer.json", "--devices", "all")
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        self.assertIn("64 cases, 64 would be skipped on this machine", proc.stdout)
        self.assertIn("needs two GPUs", proc.stdout)


class TestDevicesOption(unittest.TestCase):
    def test_help_documents_devices(self) -> None:
        for sub in ("run", "list"):
            with self.subTest(sub=sub):
                proc = run_pb(sub, "--help")
                self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
                self.assertIn("--devices", proc.stdout)
                self.assertIn("--device ", proc.stdout, "the single-GPU option stays")

    def test_unknown_or_malformed_devices_exit_3(self) -> None:
        for value, message in (("99", "GPU 99 does not exist"),
                               ("0,x", "\"x\" is not a CUDA device index"),
                               ("", "expected \"all\"")):
            for sub in ("run", "list"):
                with self.subTest(sub=sub, value=value):
                    proc = run_pb(sub, SOURCE / "scenarios/peer.json", "--devices", value,
                                  "--out" if sub == "run" else "--filter",
                                  os.devnull if sub == "run" else ".")
                    self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
                    self.assertIn("pathbench: error: --devices: ", proc.stderr)
                    self.assertNotIn("--devices: /:", proc.stderr)
                    self.assertIn(message, proc.stderr)

    def test_unknown_device_exit_3_on_every_machine(self) -> None:
        # It used to pass on a machine without a GPU (every GPU case skipped, exit 0).
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "r.json"
            for sub, extra in (("run", ["--out", out]), ("list", [])):
                with self.subTest(sub=sub):
                    proc = run_pb(sub, SOURCE / "scenarios/default.json", "--device", "99", *extra)
                    self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
                    self.assertIn("pathbench: error: --device: ", proc.stderr)
                    if usable_gpus():
                        self.assertIn("GPU 99 does not exist", proc.stderr)
            self.assertFalse(out.exists(), "nothing written")

    def test_devices_selects_the_pairs(self) -> None:
        gpus = usable_gpus()
        if not gpus:
            self.skipTest("no usable GPU: every --devices index is unknown here")
        proc = run_pb("list", SOURCE / "scenarios/peer.json", "--devices", str(gpus[0]))
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        # One GPU selected: no pair, every case skipped with the reason.
        self.assertIn("64 cases, 64 would be skipped", proc.stdout)
        self.assertIn("pair=none", proc.stdout)


# ------------------------------------------------------------------------------------------------
# run: options, default output path, unwritable output


class TestRunOptions(ResultAssertions):
    tmp: tempfile.TemporaryDirectory[str]
    scenario: Path

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory()
        cls.scenario = write_json(Path(cls.tmp.name) / "three.json", scenario_doc(
            host_scenario("memcpy", {"measure": ["memcpy"], "bytes": ["64KiB", "256KiB"]},
                          repetitions=3),
            host_scenario("touch", {"measure": ["first_touch"], "bytes": ["1MiB"]},
                          repetitions=3),
        ))

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    def fresh_dir(self) -> Path:
        path = Path(tempfile.mkdtemp(dir=self.tmp.name))
        return path

    def test_filter_selects_a_subset(self) -> None:
        out = self.fresh_dir() / "r.json"
        pattern = r"measure=memcpy/.*bytes=(65536|262144)$"
        proc = run_pb("run", self.scenario, "--filter", pattern, "--out", out)
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        result = self.load_result(out)
        ids = [c["id"] for c in result["cases"]]
        self.assertEqual(ids, ["host_memory/measure=memcpy/bytes=65536",
                               "host_memory/measure=memcpy/bytes=262144"])
        self.assertTrue(all(re.search(pattern, i) for i in ids))

    def test_filter_matching_nothing_exit_3(self) -> None:
        out_dir = self.fresh_dir()
        proc = run_pb("run", self.scenario, "--filter", "measure=mlock",
                      "--out", out_dir / "r.json")
        self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
        self.assertIn("--filter", proc.stderr)
        self.assertIn('no case matches "measure=mlock"', proc.stderr)
        self.assertEqual(list_dir(out_dir), [], "nothing written")

    def test_repetitions_override(self) -> None:
        out = self.fresh_dir() / "r.json"
        proc = run_pb("run", self.scenario, "--repetitions", "2", "--out", out)
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        result = self.load_result(out)
        self.assertEqual(len(result["cases"]), 3)
        for case in result["cases"]:
            self.assertEqual(case["status"], "ok", case["reason"])
            for name, metric in case["metrics"].items():
                self.assertEqual(metric["stats"]["n"], 2, f"{case['id']} {name}")
                self.assertEqual(len(metric["samples"]), 2)

    def test_default_out_path(self) -> None:
        cwd = self.fresh_dir()
        runs = (("--node-type", "e2e rack/node 1"), ())
        for extra in runs:
            with self.subTest(extra=extra):
                before = set(list_dir(cwd / "results"))
                proc = run_pb("run", self.scenario, "--filter", "bytes=65536$", "-r", "1", *extra,
                              cwd=cwd)
                self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
                new = sorted(set(list_dir(cwd / "results")) - before)
                self.assertEqual(len(new), 1, f"one new result file in results/: {new}")
                label = file_name_label(extra[1] if extra else inventory()["node_type"])
                if extra:
                    self.assertEqual(label, "e2e_rack_node_1")
                self.assertRegex(new[0], rf"^{re.escape(label)}-\d{{8}}T\d{{6}}Z\.json$")
                self.assertRegex(proc.stdout, rf"(?m)^result: results/{re.escape(new[0])}$")
                result = self.load_result(cwd / "results" / new[0])
                self.assertEqual(result["context"]["node_type"],
                                 extra[1] if extra else inventory()["node_type"])
                # The timestamp in the name is the run's (UTC); within a minute of the start.
                stamp = datetime.datetime.strptime(new[0][len(label) + 1:-5], "%Y%m%dT%H%M%SZ")
                start = parse_utc(result["context"]["start_time"]).replace(tzinfo=None)
                self.assertLess(abs((stamp - start).total_seconds()), 60)
            time.sleep(1.1)  # the name has one-second resolution
        self.assertEqual(list_dir(cwd), ["results"], "nothing else written to the working dir")

    def test_unwritable_out_exit_3_before_measuring(self) -> None:
        # If this were measured it would take hours: 100000 fresh 16 MiB buffers.
        slow = write_json(self.fresh_dir() / "slow.json", scenario_doc(host_scenario(
            "slow", {"measure": ["first_touch"], "bytes": ["16MiB"]}, repetitions=100000)))
        blocker = self.fresh_dir() / "regular-file"
        blocker.write_text("not a directory\n")
        for out in (blocker / "r.json", blocker / "sub" / "r.json"):
            with self.subTest(out=str(out)):
                start = time.monotonic()
                proc = run_pb("run", slow, "--out", out, timeout=30)
                self.assertLess(time.monotonic() - start, 30)
                self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
                self.assertIn(str(out), proc.stderr, "the message names the file")
                self.assertIn("cannot write", proc.stderr)
                self.assertNotIn("result:", proc.stdout)
                self.assertEqual(blocker.read_text(), "not a directory\n")

    def test_out_is_a_directory_exit_3(self) -> None:
        out_dir = self.fresh_dir()
        proc = run_pb("run", self.scenario, "--filter", "bytes=65536$", "--out", out_dir)
        self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
        self.assertEqual(list_dir(out_dir), [], "no temporary file left beside it")


# ------------------------------------------------------------------------------------------------
# Directories of scenario files


class TestScenarioDirectories(ResultAssertions):
    def test_good_directory_runs_files_in_name_order(self) -> None:
        good = SOURCE / "tests/fixtures/good_scenarios"
        files = sorted(p for p in good.iterdir() if p.suffix == ".json")
        self.assertGreaterEqual(len(files), 2)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "r.json"
            proc = run_pb("run", good, "--out", out)
            self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
            result = self.load_result(out)
        refs = result["context"]["scenario_files"]
        self.assertEqual([Path(r["path"]).name for r in refs], [f.name for f in files])
        for ref, f in zip(refs, files):
            self.assertTrue(os.path.samefile(ref["path"], f), ref["path"])
            self.assertEqual(ref["sha256"], sha256_of(f))
        # Cases follow the files: every case of file k comes before every case of file k+1.
        expected_scenarios = [s["name"] for f in files
                              for s in json.loads(f.read_text())["scenarios"]]
        seen: list[str] = []
        for case in result["cases"]:
            if not seen or seen[-1] != case["scenario"]:
                seen.append(case["scenario"])
            self.assertEqual(case["status"], "ok", case["reason"])
        self.assertEqual(seen, expected_scenarios)

    def test_list_directory_in_name_order(self) -> None:
        good = SOURCE / "tests/fixtures/good_scenarios"
        proc = run_pb("list", good)
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        headers = [Path(ln.split()[0]).name for ln in proc.stdout.splitlines()
                   if ln and not ln.startswith(" ") and ".json" in ln.split()[0]]
        self.assertEqual(headers, sorted(p.name for p in good.iterdir() if p.suffix == ".json"))

    def test_directory_of_bad_files_exit_3(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            bad_dir = Path(tmp) / "bad"
            bad_dir.mkdir()
            src = SOURCE / "tests/fixtures/bad_scenarios"
            for name in ("wrong_schema.json", "unknown_family.json"):
                shutil.copy(src / name, bad_dir / name)
            out = Path(tmp) / "out" / "r.json"
            for cmd in (["run", bad_dir, "--out", out], ["list", bad_dir]):
                with self.subTest(cmd=cmd[0]):
                    proc = run_pb(*cmd)
                    self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
                    # The files load in name order, so the first error is unknown_family.json's.
                    self.assertIn(f"{bad_dir / 'unknown_family.json'}: /scenarios/0/family: ",
                                  proc.stderr)
                    self.assertEqual(proc.stdout, "")
            self.assertFalse(out.parent.exists(), "nothing written")

    def test_fixture_directory_itself_exit_3(self) -> None:
        proc = run_pb("list", SOURCE / "tests/fixtures/bad_scenarios")
        self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))

    def test_good_file_beside_bad_file_exit_3(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "r.json"
            proc = run_pb("run", SOURCE / "tests/fixtures/good_scenarios",
                          SOURCE / "tests/fixtures/bad_scenarios/missing_axes.json", "--out", out)
            self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
            self.assertFalse(out.exists(), "nothing is measured when any input is bad")

    def test_nonexistent_path_exit_3(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            missing = Path(tmp) / "no-such-scenarios.json"
            out = Path(tmp) / "r.json"
            for cmd in (["run", missing, "--out", out], ["list", missing]):
                with self.subTest(cmd=cmd[0]):
                    proc = run_pb(*cmd)
                    self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
                    self.assertIn(str(missing), proc.stderr)
            self.assertFalse(out.exists())

    def test_inputs_that_are_not_regular_files_exit_3_at_once(self) -> None:
        # A FIFO used to hang the run, /dev/zero to be read without end, a symlink loop in a
        # scenario folder to escape as an uncaught filesystem error (exit 1).
        with tempfile.TemporaryDirectory() as tmp:
            fifo = Path(tmp) / "pipe.json"
            os.mkfifo(fifo)
            loop_dir = Path(tmp) / "loops"
            loop_dir.mkdir()
            (loop_dir / "a.json").symlink_to(loop_dir / "b.json")
            (loop_dir / "b.json").symlink_to(loop_dir / "a.json")
            for target, named, why in ((fifo, fifo, "a FIFO"), ("/dev/zero", "/dev/zero", "a character device"),
                                       (loop_dir, loop_dir / "a.json", "cannot read")):
                with self.subTest(target=str(target)):
                    proc = run_pb("list", target, timeout=20)
                    self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
                    self.assertIn(f"{named}: ", proc.stderr)
                    self.assertIn(why, proc.stderr)

    def test_directory_without_json_exit_3(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "notes.txt").write_text("not a scenario\n")
            proc = run_pb("list", tmp)
            self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
            self.assertIn(tmp, proc.stderr)


# ------------------------------------------------------------------------------------------------
# Bad scenario files: one fixture per error, each with its JSON pointer


class TestBadScenarioFiles(unittest.TestCase):
    bad_dir: Path
    manifest: dict[str, dict[str, str]]

    @classmethod
    def setUpClass(cls) -> None:
        cls.bad_dir = SOURCE / "tests/fixtures/bad_scenarios"
        cls.manifest = json.loads((cls.bad_dir / "expected.json").read_text())

    def test_manifest_matches_the_folder(self) -> None:
        files = {p.name for p in self.bad_dir.glob("*.json") if p.name != "expected.json"}
        self.assertEqual(set(self.manifest), files, "every fixture has an entry and vice versa")
        for name, entry in self.manifest.items():
            self.assertEqual(set(entry), {"pointer", "contains"}, name)
            self.assertTrue(entry["pointer"].startswith("/"), name)
            self.assertTrue(entry["contains"], name)
        missing = {n: kind for n, kind in REQUIRED_BAD_FIXTURES.items() if n not in self.manifest}
        self.assertEqual(missing, {}, "required error kinds without a fixture")

    def test_each_bad_file_exits_3_naming_file_and_pointer(self) -> None:
        mem_available = inventory().get("mem_available_bytes") or 0
        with tempfile.TemporaryDirectory() as tmp:
            # Every invocation probes CUDA (about 0.4 s on a GPU node): run them side by side.
            jobs: list[tuple[str, Path, list[Any]]] = []
            for name in sorted(self.manifest):
                out_dir = Path(tmp) / name
                out_dir.mkdir()
                path = self.bad_dir / name
                jobs.append((name, out_dir, ["run", path, "--out", out_dir / "r.json"]))
                jobs.append((name, out_dir, ["list", path]))
            workers = min(8, os.cpu_count() or 2)
            with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
                procs = list(pool.map(lambda job: run_pb(*job[2]), jobs))
            for (name, out_dir, cmd), proc in zip(jobs, procs):
                entry = self.manifest[name]
                with self.subTest(fixture=name, command=cmd[0]):
                    if name == SIZE_FIXTURE and mem_available >= SIZE_FIXTURE_NEEDS:
                        self.skipTest(f"{mem_available} bytes available: 1 TiB memcpy fits")
                    path = self.bad_dir / name
                    self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
                    self.assertIn(f"{path}: {entry['pointer']}: ", proc.stderr,
                                  "FILE: POINTER: message" + describe(proc))
                    self.assertIn(entry["contains"], proc.stderr, describe(proc))
                    self.assertEqual(proc.stdout, "", "nothing listed or measured")
                    self.assertEqual(list_dir(out_dir), [], "nothing written to --out")

    def test_relative_path_is_named_as_given(self) -> None:
        proc = run_pb("list", "tests/fixtures/bad_scenarios/unknown_axis.json", cwd=SOURCE)
        self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
        self.assertIn("tests/fixtures/bad_scenarios/unknown_axis.json: "
                      "/scenarios/0/axes/direction: ", proc.stderr)

    def test_deeply_nested_json_is_bad_input_not_a_crash(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "deep.json"
            depth = 100_000
            path.write_text('{"schema": "%s", "scenarios": %s%s}\n'
                            % (SCENARIO_SCHEMA, "[" * depth, "]" * depth))
            proc = run_pb("list", path)
            self.assertEqual(proc.returncode, EXIT_BAD_INPUT,
                             "a pathological file is bad input (exit 3), never a crash"
                             + describe(proc))
            self.assertIn(str(path), proc.stderr)


# ------------------------------------------------------------------------------------------------
# Overlapping scenario files: the shipped folder runs as a folder


NOTE_RE = re.compile(r"^pathbench: note: (\d+) cases? of (\S+) (?:is|are) also in (\S+); "
                     r"(?:each|it) runs once, as defined there", re.M)


def listed_ids(stdout: str) -> list[str]:
    """Case ids from `pathbench list` output (indented lines, the id first)."""
    return [ln.split()[0] for ln in stdout.splitlines() if ln.startswith("    ")]


class TestScenarioFolderOverlap(ResultAssertions):
    def test_list_shipped_folder(self) -> None:
        proc = run_pb("list", SOURCE / "scenarios")
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        notes = NOTE_RE.findall(proc.stderr)
        self.assertTrue(notes, "the overlap is announced" + describe(proc))
        pairs = [(later, first) for _, later, first in notes]
        self.assertEqual(len(pairs), len(set(pairs)), "one note per pair of files")
        # Files load in name order, so copy.json defines the copy cases default.json repeats.
        self.assertIn((str(SOURCE / "scenarios/default.json"), str(SOURCE / "scenarios/copy.json")),
                      pairs, describe(proc))
        ids = listed_ids(proc.stdout)
        self.assertTrue(ids)
        self.assertEqual(len(ids), len(set(ids)), "every case id appears once")

    def test_run_shipped_folder_host_cases(self) -> None:
        # Host-only cases, so this runs without a GPU: the memcpy cases of 4 and 64 MiB, which
        # include the two default.json shares with host_memory.json. (A bare "host_memory" would
        # also match the copy cases' host_memory= axis; the whole host family takes minutes on a
        # two-core VM, where first-touching 1 GiB costs seconds.)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "r.json"
            proc = run_pb("run", SOURCE / "scenarios", "--quick", "--filter",
                          r"^host_memory/measure=memcpy/.*/bytes=(4194304|67108864)$",
                          "--out", out, timeout=300)
            self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
            notes = NOTE_RE.findall(proc.stderr)
            self.assertIn(str(SOURCE / "scenarios/host_memory.json"),
                          [later for _, later, _ in notes], describe(proc))
            result = self.load_result(out)
        ids = [c["id"] for c in result["cases"]]
        self.assertTrue(ids)
        self.assertEqual(len(ids), len(set(ids)), "every case id runs once")
        self.assertTrue(all(i.startswith("host_memory/") for i in ids), ids)
        # The first file's definition wins: default.json's host-memcpy cases come from it.
        by_id = {c["id"]: c for c in result["cases"]}
        default = json.loads((SOURCE / "scenarios/default.json").read_text())
        default_names = {sc["name"] for sc in default["scenarios"]}
        shared = [c for c in by_id.values() if c["scenario"] in default_names]
        self.assertTrue(shared, "default.json's host cases ran")

    def test_overlap_across_files_runs_once_and_says_what_differs(self) -> None:
        axes = {"measure": ["memcpy"], "page": ["4k"], "bytes": ["64KiB", "128KiB"]}
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "s"
            write_json(folder / "a.json", scenario_doc(host_scenario("first", axes, repetitions=2)))
            write_json(folder / "b.json", scenario_doc(
                host_scenario("second", {**axes, "bytes": ["64KiB", "128KiB", "256KiB"]},
                              repetitions=3)))
            out = Path(tmp) / "r.json"
            proc = run_pb("run", folder, "--out", out)
            self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
            self.assertIn(f"pathbench: note: 2 cases of {folder / 'b.json'} are also in "
                          f"{folder / 'a.json'}; each runs once, as defined there; 2 of them "
                          f"differ in repetitions: the first file's settings are used",
                          proc.stderr)
            result = self.load_result(out)
        cases = {c["id"]: c for c in result["cases"]}
        self.assertEqual(len(cases), len(result["cases"]))
        self.assertEqual(len(cases), 3)
        first = case_id("host_memory", {"measure": "memcpy", "page": "4k", "bytes": 65536})
        self.assertEqual(cases[first]["scenario"], "first")
        self.assertEqual(len(cases[first]["metrics"]["bandwidth"]["samples"]), 2)

    def test_duplicate_within_one_file_of_a_folder_exit_3(self) -> None:
        axes = {"measure": ["memcpy"], "page": ["4k"], "bytes": ["64KiB"]}
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "s"
            write_json(folder / "a.json", scenario_doc(host_scenario("first", axes)))
            write_json(folder / "b.json", scenario_doc(host_scenario("one", axes),
                                                       host_scenario("two", axes)))
            for cmd in (["list", folder], ["run", folder, "--out", Path(tmp) / "r.json"]):
                with self.subTest(cmd=cmd[0]):
                    proc = run_pb(*cmd)
                    self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
                    self.assertIn(f"{folder / 'b.json'}: /scenarios/1: ", proc.stderr)
                    self.assertIn("is also produced by an earlier scenario", proc.stderr)
            self.assertFalse((Path(tmp) / "r.json").exists())


# ------------------------------------------------------------------------------------------------
# stress: the contention injector


STRESS_SUMMARY_RE = re.compile(
    r"^pathbench stress: summary: [\d.]+ s, stopped by (\S+); host-membw: (\d+) bytes, "
    r"([\d.]+) GB/s average$", re.M)


class TestStress(unittest.TestCase):
    def test_help(self) -> None:
        proc = run_pb("stress", "--help")
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        for option in ("--gpu-copies", "--device", "--copy-bytes", "--duty", "--period-ms",
                       "--host-membw-threads", "--host-bytes", "--host-node", "--duration"):
            self.assertIn(option, proc.stdout)

    def test_host_load_for_one_second(self) -> None:
        start = time.monotonic()
        proc = run_pb("stress", "--host-membw-threads", "1", "--host-bytes", "64MiB",
                      "--duration", "1", timeout=60)
        wall = time.monotonic() - start
        self.assertEqual(proc.returncode, EXIT_OK, describe(proc))
        first = proc.stdout.splitlines()[0]
        self.assertRegex(first, r"^pathbench stress: 1 host thread memcpy-ing between two 64 MiB "
                                r"buffers each, on .*; for 1 s$")
        match = STRESS_SUMMARY_RE.search(proc.stdout)
        self.assertIsNotNone(match, describe(proc))
        assert match is not None
        self.assertEqual(match.group(1), "--duration")
        self.assertGreater(int(match.group(2)), 0)
        self.assertGreater(float(match.group(3)), 0)
        self.assertLess(wall, 20, "one second of load, plus the inventory")

    def test_sigterm_stops_cleanly(self) -> None:
        cmd = [str(PATHBENCH), "stress", "--host-membw-threads", "1", "--host-bytes", "64MiB"]
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) as proc:
            try:
                assert proc.stdout is not None
                first = proc.stdout.readline()  # printed once the load is ready
                self.assertIn("until SIGINT or SIGTERM", first)
                time.sleep(0.3)
                proc.send_signal(signal.SIGTERM)
                sent = time.monotonic()
                out, err = proc.communicate(timeout=10)
                stopped_after = time.monotonic() - sent
            finally:
                if proc.poll() is None:
                    proc.kill()
        self.assertEqual(proc.returncode, EXIT_OK, err)
        self.assertLess(stopped_after, 2.0)
        match = STRESS_SUMMARY_RE.search(out)
        self.assertIsNotNone(match, out + err)
        assert match is not None
        self.assertEqual(match.group(1), "SIGTERM")

    def test_bad_options_exit_3(self) -> None:
        cases = {
            "no load": ([], "--host-membw-threads"),
            "unknown direction": (["--gpu-copies", "sideways"], "--gpu-copies"),
            "duty 0": (["--gpu-copies", "h2d", "--duty", "0"], "--duty"),
            "duty above 1": (["--gpu-copies", "h2d", "--duty", "1.5"], "--duty"),
            "duty without copies": (["--host-membw-threads", "1", "--duty", "0.5"], "--duty"),
            "zero threads": (["--host-membw-threads", "0"], "--host-membw-threads"),
            "not a size": (["--host-membw-threads", "1", "--host-bytes", "lots"], "--host-bytes"),
            "negative duration": (["--host-membw-threads", "1", "--duration", "-1"],
                                  "--duration"),
            "no such node": (["--host-membw-threads", "1", "--host-node", "4000"],
                             "--host-node"),
            "not a number": (["--host-membw-threads", "many"], "--host-membw-threads"),
        }
        if no_gpu_reason() is not None:
            cases["copies without a GPU"] = (["--gpu-copies", "h2d"], "--gpu-copies")
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            procs = dict(zip(cases, pool.map(lambda args: run_pb("stress", *args[0]),
                                             cases.values())))
        for name, (args, option) in cases.items():
            with self.subTest(name):
                proc = procs[name]
                self.assertEqual(proc.returncode, EXIT_BAD_INPUT, describe(proc))
                self.assertIn(option, proc.stderr, describe(proc))
                self.assertNotIn("summary", proc.stdout)
        if no_gpu_reason() is not None:
            # The CUDA probe's own words, as the families give them when they skip.
            self.assertIn(no_gpu_reason(), procs["copies without a GPU"].stderr)


# ------------------------------------------------------------------------------------------------


def main() -> int:
    global PATHBENCH, SOURCE
    PATHBENCH, SOURCE, rest = harness.parse_binary_args(__doc__.splitlines()[0])
    return harness.run_unittests(rest)


if __name__ == "__main__":
    sys.exit(main())
