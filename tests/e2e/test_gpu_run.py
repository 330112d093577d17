#!/usr/bin/env python3
"""End-to-end GPU acceptance run: scenarios/default.json in full on a GPU node.

    python3 tests/e2e/test_gpu_run.py --pathbench build/pathbench --source . [unittest args]

Exits 77 (CTest SKIP_RETURN_CODE) with "SKIPPED: no GPU: <reason>" when the inventory finds no
usable CUDA device. Otherwise runs the default scenarios once (no --quick) and asserts:
  - exit 0 and a wall time under 60 s;
  - every copy case ok, every check of every case passed;
  - 256 MiB pinned and registered-4k H2D/D2H bandwidth medians >= 86 % of the raw PCIe rate of
    GPU 0's link (the context's gpus[].pcie.raw_gbps_per_direction.max); a case below it is run
    twice more in fresh processes and fails when the majority of its three runs stay below;
  - pinned 256 MiB H2D: n == 9 and cv <= 1 %;
  - pageable copies timed with host_steady_clock, pinned/registered/d2d with cuda_events_latched.
Prints a table of the copy medians for docs/measurements.md.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from typing import Any

import harness

PATHBENCH: Path = Path("pathbench")
SOURCE: Path = Path(".")

EXIT_SKIP = 77
WALL_LIMIT_S = 60.0
PCIE_FRACTION = 0.86
CV_LIMIT = 0.01
BIG = 256 << 20

# A case below the floor is measured again this many times in fresh processes; it fails only when
# the majority of all its runs stay below (the gate's confirmation rule: a node's one slow run is
# not a broken link).
FLOOR_RERUNS = 2


def run_pb(*args: str | os.PathLike[str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PATHBENCH), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, check=False)


def describe(proc: subprocess.CompletedProcess[str]) -> str:
    return (f"\n$ {' '.join(proc.args)}\nexit {proc.returncode}\n--- stdout ---\n"
            f"{proc.stdout[-6000:]}\n--- stderr ---\n{proc.stderr[-4000:]}")


def read_inventory() -> dict[str, Any]:
    proc = run_pb("inventory", timeout=120)
    if proc.returncode != 0:
        raise SystemExit("test_gpu_run.py: pathbench inventory failed" + describe(proc))
    return json.loads(proc.stdout)


def no_gpu_reason(inv: dict[str, Any]) -> str | None:
    """Why no CUDA device is usable here (the copy family's own test), or None."""
    if inv.get("cuda_unavailable_reason"):
        return inv["cuda_unavailable_reason"]
    if not inv.get("gpus"):
        return "the inventory lists no GPU"
    return None


def fmt_bytes(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def fmt_value(value: float, unit: str) -> str:
    if unit == "s":
        for name, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
            if value >= scale:
                return f"{value / scale:.3g} {name}"
        return f"{value / 1e-9:.3g} ns"
    return f"{value:.4g} {unit}"


def copy_table(cases: list[dict[str, Any]]) -> str:
    """One line per copy case: the median of each metric, for docs/measurements.md."""
    rows = [("measure", "dir", "host memory", "bytes", "status", "metric", "median", "cv", "n",
             "timing")]
    for case in cases:
        if case["family"] != "copy":
            continue
        p = case["params"]
        head = (p.get("measure", ""), p.get("direction", "-"), p.get("host_memory", "-"),
                fmt_bytes(p.get("bytes", 0)), case["status"])
        if not case["metrics"]:
            rows.append(head + ("-", case["reason"][:60], "", "", ""))
            continue
        for name, m in case["metrics"].items():
            s = m["stats"]
            rows.append(head + (name, fmt_value(s["median"], m["unit"]), f"{s['cv'] * 100:.2f}%",
                                str(s["n"]), case["timing_method"] or "-"))
            head = ("", "", "", "", "")
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


class TestDefaultRunOnGpu(unittest.TestCase):
    tmp: tempfile.TemporaryDirectory[str]
    out: Path
    proc: subprocess.CompletedProcess[str]
    wall: float
    result: dict[str, Any]

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = Path(cls.tmp.name) / "default.json"
        start = time.monotonic()
        cls.proc = run_pb("run", SOURCE / "scenarios/default.json", "--out", cls.out)
        cls.wall = time.monotonic() - start
        cls.result = json.loads(cls.out.read_text()) if cls.out.is_file() else {"cases": []}
        print(f"\npathbench run scenarios/default.json: exit {cls.proc.returncode}, "
              f"{cls.wall:.1f} s wall", file=sys.stderr)
        print(copy_table(cls.result["cases"]), file=sys.stderr)
        if cls.out.is_file():
            keep = os.environ.get("PATHBENCH_E2E_KEEP_RESULT")
            if keep:
                Path(keep).write_text(cls.out.read_text())

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    def case(self, **params: Any) -> dict[str, Any]:
        found = [c for c in self.result["cases"] if c["family"] == "copy"
                 and all(c["params"].get(k) == v for k, v in params.items())]
        self.assertEqual(len(found), 1, f"exactly one copy case with {params}")
        return found[0]

    def test_exit_and_wall_time(self) -> None:
        self.assertEqual(self.proc.returncode, 0, describe(self.proc))
        self.assertTrue(self.out.is_file(), "result written")
        self.assertEqual(self.result.get("schema"), "pathbench.result/v1")
        self.assertLess(self.wall, WALL_LIMIT_S, "acceptance: default.json under a minute")

    def test_every_copy_case_ok(self) -> None:
        copies = [c for c in self.result["cases"] if c["family"] == "copy"]
        self.assertTrue(copies, "default.json has copy cases")
        not_ok = {c["id"]: f"{c['status']}: {c['reason']}" for c in copies if c["status"] != "ok"}
        self.assertEqual(not_ok, {})

    def test_other_cases_ok_or_skipped_with_reason(self) -> None:
        for c in self.result["cases"]:
            with self.subTest(case=c["id"]):
                self.assertNotEqual(c["status"], "failed", c["reason"])
                if c["status"] == "skipped":
                    self.assertTrue(c["reason"].strip())

    def test_every_check_passed(self) -> None:
        failed = {c["id"]: [f"{k['name']}: {k['detail']}" for k in c["checks"] if not k["passed"]]
                  for c in self.result["cases"]}
        self.assertEqual({k: v for k, v in failed.items() if v}, {})
        for c in self.result["cases"]:
            if c["family"] == "copy" and c["status"] == "ok":
                self.assertTrue(c["checks"], f"{c['id']}: a copy case verifies something")

    def test_bandwidth_reaches_pcie_fraction(self) -> None:
        gpus = self.result["context"]["gpus"]
        gpu0 = next((g for g in gpus if g.get("index") == 0), None)
        self.assertIsNotNone(gpu0, "context lists GPU 0")
        assert gpu0 is not None
        gen, width = gpu0.get("pcie_gen_max"), gpu0.get("pcie_width_max")
        # The raw rate as the result states it (src/inventory/link_rates.hpp is its one source).
        rates = (gpu0.get("pcie") or {}).get("raw_gbps_per_direction") or {}
        raw = rates.get("max")
        if not isinstance(raw, (int, float)) or raw <= 0:
            self.fail(f"GPU 0's context has no raw PCIe rate (pcie={gpu0.get('pcie')!r}, "
                      f"pcie_gen_max={gen!r}, pcie_width_max={width!r}; inventory_source: "
                      f"{self.result['context'].get('inventory_source')!r})")
        floor = PCIE_FRACTION * raw
        print(f"\nGPU 0 {gpu0.get('name')}: PCIe Gen{gen} x{width}: raw {raw:.1f} GB/s per "
              f"direction; floor {PCIE_FRACTION:.0%} = {floor:.1f} GB/s", file=sys.stderr)
        for host_memory in ("pinned", "registered-4k"):
            for direction in ("h2d", "d2h"):
                with self.subTest(host_memory=host_memory, direction=direction):
                    c = self.case(measure="bandwidth", direction=direction,
                                  host_memory=host_memory, bytes=BIG)
                    self.assertEqual(c["status"], "ok", c["reason"])
                    median = c["metrics"]["bandwidth"]["stats"]["median"]
                    self.assertEqual(c["metrics"]["bandwidth"]["unit"], "GB/s")
                    print(f"  {direction} {host_memory:14s} 256 MiB: {median:6.2f} GB/s = "
                          f"{median / raw:.1%} of raw", file=sys.stderr)
                    medians = [median]
                    if median < floor:
                        medians += [self.rerun_median(c["id"], n) for n in range(FLOOR_RERUNS)]
                        reruns = ", ".join(f"{m:.2f}" for m in medians[1:])
                        print(f"    below the floor: re-runs {reruns} GB/s", file=sys.stderr)
                    below = sum(m < floor for m in medians)
                    runs = ", ".join(f"{m:.2f}" for m in medians)
                    self.assertLess(2 * below, len(medians),
                                    f"{c['id']}: {below} of {len(medians)} runs below "
                                    f"{floor:.2f} GB/s ({runs})")

    def rerun_median(self, case_id: str, n: int) -> float:
        """The bandwidth median of one more run of the case, in a fresh process."""
        out = Path(self.tmp.name) / f"rerun-{n}-{abs(hash(case_id))}.json"
        pattern = "^" + "".join("\\" + ch if not ch.isalnum() else ch for ch in case_id) + "$"
        proc = run_pb("run", SOURCE / "scenarios/default.json", "--filter", pattern, "-o", out,
                      timeout=120)
        self.assertEqual(proc.returncode, 0, describe(proc))
        cases = json.loads(out.read_text())["cases"]
        self.assertEqual([c["id"] for c in cases], [case_id])
        return float(cases[0]["metrics"]["bandwidth"]["stats"]["median"])

    def test_pinned_h2d_is_stable(self) -> None:
        c = self.case(measure="bandwidth", direction="h2d", host_memory="pinned", bytes=BIG)
        self.assertEqual(c["status"], "ok", c["reason"])
        stats = c["metrics"]["bandwidth"]["stats"]
        self.assertEqual(stats["n"], 9)
        self.assertEqual(len(c["metrics"]["bandwidth"]["samples"]), 9)
        self.assertLessEqual(stats["cv"], CV_LIMIT, f"cv {stats['cv']:.4f}")

    def test_timing_methods(self) -> None:
        seen = 0
        for c in self.result["cases"]:
            if c["family"] != "copy" or c["status"] != "ok":
                continue
            p = c["params"]
            if p.get("measure") == "alloc_cost":
                continue
            kind = p.get("host_memory", "")
            with self.subTest(case=c["id"]):
                if kind.startswith("pageable"):
                    self.assertEqual(c["timing_method"], "host_steady_clock")
                else:  # pinned, registered-*, d2d: asynchronous copies behind a latch
                    self.assertEqual(c["timing_method"], "cuda_events_latched")
                seen += 1
        self.assertGreater(seen, 0)


def main() -> int:
    global PATHBENCH, SOURCE
    PATHBENCH, SOURCE, rest = harness.parse_binary_args(__doc__.splitlines()[0])
    reason = no_gpu_reason(read_inventory())
    if reason is not None:
        print(f"SKIPPED: no GPU: {reason}")
        return EXIT_SKIP
    return harness.run_unittests(rest)


if __name__ == "__main__":
    sys.exit(main())
