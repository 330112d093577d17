#!/usr/bin/env python3
"""End-to-end tests of the report scripts (reports/plot.py, reports/html.py) on real result files.

    python3 tests/e2e/test_reports.py --python build/venv/bin/python --source . [unittest args]

--python is the interpreter that has the pinned report requirements (reports/requirements.txt:
matplotlib, numpy, pillow); the scripts and a small image-checking helper run under it, while this
file only needs the standard library. The HTML page is also rendered with headless Chromium
(/usr/bin/chromium, Debian package `chromium`): when it is missing the test fails and says so.
Inputs: tests/fixtures/results/*.json (real H200 and CPU-only runs), the compare fixture
tests/fixtures/compare/h200-vs-degraded.json, the serving fixture tests/fixtures/serving/h200-serving.json
(generated, with per-operation distributions), and results derived from them here (a latency sweep
with remote-node and failed cases, hostile strings, an `across` comparison, a second, slower serving
node, serving cases without distributions or beyond what an axis holds, broken files).
Also the plots of the other families from tests/fixtures/report_families/ (small_copies and
unified_memory: real H200 results, the expected values derived from the files; overlap and peer:
SYNTHETIC shape fixtures written by its generate.py, the overlap traces real H200 ones), their
Gantt charts and the HTML page linking the traces, read back through plot.py --describe (axes
titles, labels, legends). With --pathbench, the binary must accept every such fixture
(`pathbench compare F F`, `pathbench export F --prometheus -`).
Runs in about 4.5 minutes on the shared two-core development machine (CMake: TIMEOUT 600).

Real H200 results to replace the synthetic fixtures with (then rerun this test; the scripts read
any result of these families; small_copies and unified_memory are real already, from
  pathbench run scenarios/small_copies.json -o tests/fixtures/report_families/h200-small-copies.json
  pathbench run scenarios/unified_memory.json -o tests/fixtures/report_families/h200-unified-memory.json):
  pathbench run scenarios/overlap.json -o tests/fixtures/report_families/h200-overlap.json
      (traces into h200-overlap.json.timelines/; 4 cases, about 15 s)
  pathbench run scenarios/peer.json --filter 'bytes=(65536|16777216|268435456|4|4096)$' \
      -o tests/fixtures/report_families/h200x4-peer.json      (needs 2+ GPUs)
"""
from __future__ import annotations

import argparse
import base64
import concurrent.futures
import copy
import functools
import html.parser
import importlib.util
import json
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import unittest
import urllib.parse
from pathlib import Path
from typing import Any

PYTHON: str = "python3"
SOURCE: Path = Path(".")
CHROMIUM: str | None = None
PATHBENCH: str | None = None

EXIT_OK = 0
EXIT_BAD_INPUT = 3
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MIN_WIDTH, MIN_HEIGHT = 400, 300
ALL_PLOTS = ("bandwidth_h2d.png", "bandwidth_d2h.png", "bandwidth_d2d.png", "latency.png", "pin_cost.png",
             "host_memory.png")
SERVING_PLOTS = ("serving_latency.png", "serving_head_of_line.png", "serving_pool.png", "serving_percentiles.png")
FAMILY_FIXTURES = ("h200-overlap.json", "h200-small-copies.json", "h200-unified-memory.json", "h200x4-peer.json")
FAMILY_PLOTS = {"h200-overlap.json": ("overlap.png",), "h200-small-copies.json": ("small_copies.png",),
                "h200-unified-memory.json": ("unified_memory.png",),
                "h200x4-peer.json": ("peer_bandwidth.png", "peer_latency.png")}
OVERLAP_VARIANTS = ("pinned_event_wait", "pinned_device_sync", "pinned_same_stream", "pageable_separate_stream")
DISTRIBUTION_STATISTICS = ("p50", "p90", "p99", "p99.9", "max")

# Runs under --python: for each image, pixel statistics that tell a drawing from a blank canvas.
IMAGE_STATS = r"""
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.image as mpimg
import numpy as np
out = {}
for path in sys.argv[1:]:
    a = mpimg.imread(path)
    if a.dtype != np.uint8:
        a = (np.clip(a, 0, 1) * 255).round().astype(np.uint8)
    rgb = a[..., :3].reshape(-1, 3).astype(np.int32)
    packed = (rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2]
    values, counts = np.unique(packed, return_counts=True)
    background = values[np.argmax(counts)]
    out[path] = {
        "height": int(a.shape[0]), "width": int(a.shape[1]),
        "std": float(rgb.std()),
        "colors": int(len(values)),
        "non_background": float(1.0 - counts.max() / len(packed)),
        "background": [int(background >> 16), int((background >> 8) & 255), int(background & 255)],
        "top_left": [int(v) for v in a[8, 8, :3]],
    }
print(json.dumps(out))
"""


def fixture(*parts: str) -> Path:
    return SOURCE / "tests" / "fixtures" / Path(*parts)


# One matplotlib config/cache directory for every script this test starts, removed at exit.
MPL_CONFIG = tempfile.TemporaryDirectory(prefix="pathbench-mpl-")


def run(args: list[str], timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1")
    env.setdefault("MPLCONFIGDIR", MPL_CONFIG.name)
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)


def plot_py(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run([PYTHON, str(SOURCE / "reports" / "plot.py"), *map(str, args)])


def html_py(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run([PYTHON, str(SOURCE / "reports" / "html.py"), *map(str, args)])


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:33]
    if len(data) < 33 or data[:8] != PNG_SIGNATURE or data[12:16] != b"IHDR":
        raise AssertionError(f"{path}: not a PNG (signature/IHDR)")
    return struct.unpack(">II", data[16:24])


def image_stats(paths: list[Path]) -> dict[str, dict[str, Any]]:
    proc = run([PYTHON, "-c", IMAGE_STATS, *map(str, paths)])
    if proc.returncode != 0:
        raise AssertionError(f"image check under {PYTHON} failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=1))
    return path


def case_id(case: dict[str, Any]) -> str:
    return case["family"] + "/" + "/".join(f"{k}={v}" for k, v in case["params"].items())


def stats_of(samples: list[float]) -> dict[str, Any]:
    """The stats the C++ writer stores for these samples (all zero for none, as summarize() gives)."""
    if not samples:
        return {"n": 0, "median": 0.0, "min": 0.0, "max": 0.0, "mean": 0.0, "p10": 0.0, "p90": 0.0,
                "stddev": 0.0, "cv": 0.0}
    s = sorted(samples)

    def percentile(q: float) -> float:
        pos = (len(s) - 1) * q
        lo = int(pos)
        return s[lo] if lo + 1 >= len(s) else s[lo] + (s[lo + 1] - s[lo]) * (pos - lo)

    mean = statistics.fmean(s)
    stddev = statistics.stdev(s) if len(s) > 1 else 0.0
    return {"n": len(s), "median": statistics.median(s), "min": s[0], "max": s[-1], "mean": mean,
            "p10": percentile(0.10), "p90": percentile(0.90), "stddev": stddev, "cv": stddev / mean if mean else 0.0}


def scaled_case(case: dict[str, Any], factor: float, **params: Any) -> dict[str, Any]:
    c = copy.deepcopy(case)
    c["params"].update(params)
    c["id"] = case_id(c)
    for m in c["metrics"].values():
        m["samples"] = [v * factor for v in m["samples"]]
        m["stats"] = {k: (v * factor if k not in ("n", "cv") and v is not None else v) for k, v in m["stats"].items()}
    return c


def make_sweep(dst: Path) -> Path:
    """h200-default.json grown into what a two-socket node's full sweep would hold: latency over five
    sizes, local and remote host memory, plus a failed case with partial samples and one without
    samples (as the C++ writer stores them: stats of what was taken, zeros for nothing), a host name
    with a '$' (matplotlib mathtext) and a reason with markup."""
    r = load(fixture("results", "h200-default.json"))
    out = []
    for case in r["cases"]:
        p = case.get("params", {})
        if p.get("measure") == "latency" and case["status"] == "ok":
            for i, b in enumerate([4, 64, 1024, 4096, 65536]):
                out.append(scaled_case(case, 1 + 0.05 * i + 3 * b / 65536, bytes=b))
                out.append(scaled_case(case, 1.3 + 0.05 * i + 4 * b / 65536, bytes=b, host_node="remote"))
        elif p.get("measure") in ("bandwidth", "alloc_cost") and p.get("host_node") == "local" and case["status"] == "ok":
            out.append(case)
            out.append(scaled_case(case, 0.8 if p["measure"] == "bandwidth" else 1.4, host_node="remote"))
        else:
            out.append(case)
    first_bw = next(c for c in r["cases"] if c["params"].get("measure") == "bandwidth")
    failed = scaled_case(first_bw, 1.0, bytes=1 << 20)
    failed["status"] = "failed"
    failed["reason"] = "check copy_pattern failed: destination differs at byte 4096 <after sample 3> & more"
    failed["checks"].append({"name": "copy_pattern", "passed": False, "detail": "byte 4096: 0x00 != 0xa5", "value": None})
    for m in failed["metrics"].values():
        m["samples"] = m["samples"][:3]
        m["stats"] = stats_of(m["samples"])
    out.append(failed)
    bare = scaled_case(first_bw, 1.0, bytes=1 << 21)
    bare["status"] = "failed"
    bare["reason"] = "latch timed out"
    for m in bare["metrics"].values():
        m["samples"] = []
        m["stats"] = stats_of([])
    out.append(bare)
    r["cases"] = out
    r["context"]["hostname"] = "node$17 <b>&amp;"
    r["context"]["warnings"] = ["cpuset 0-7 is not on the GPU's NUMA node 1 <check numactl>"]
    return write_json(dst, r)


def make_across(dst: Path) -> Path:
    """The compare fixture turned into an `across` comparison: rows carry a ratio and verdict `across`."""
    c = load(fixture("compare", "h200-vs-degraded.json"))
    c["mode"] = "across"
    c["result"]["node_type"] = "NVIDIA H100 x8 / PCIe Gen5 x16 / 2 NUMA"
    c["exit_code"] = 0
    c["some_future_field"] = {"nested": [1, 2, 3]}
    for case in c["cases"]:
        if case["metrics"]:
            case["verdict"] = "across"
            for m in case["metrics"]:
                m["verdict"] = "across"
                m["threshold_pct"] = None
                m["p_value"] = None
                m["unknown_metric_field"] = "ignored"
    first = next(case for case in c["cases"] if case["metrics"])
    first["metrics"][0].update(change_pct=850.0, ratio=9.5)  # a very different node: symlog axis
    return write_json(dst, c)


def make_floors_only(dst: Path) -> Path:
    """What `pathbench compare` writes when it only checks a result's floors: no baseline, no metric rows,
    one failed case; plus an `incomparable` list as a gate between node types would carry."""
    c = load(fixture("compare", "h200-vs-degraded.json"))
    c["mode"] = "floors"
    del c["baseline"]
    c["incomparable"] = ["node_type: baseline 'NVIDIA H100 x8' vs result 'NVIDIA H200 x1'"]
    c["cases"] = [{"id": "copy/measure=bandwidth/direction=h2d/host_memory=pinned/host_node=local/bytes=1048576",
                   "family": "copy", "verdict": "failed", "reason": "latch timed out", "metrics": []}]
    c["summary"] = {"failed": 1}
    return write_json(dst, c)


def make_gate_compare(dst: Path) -> Path:
    """The compare fixture as `pathbench gate` writes it now: what changed in the context, noise,
    metrics not gateable on the node type, and a confirmed regression's label."""
    c = load(fixture("compare", "h200-vs-degraded.json"))
    c["changes"] = [{"field": "driver_version", "label": "driver", "baseline": "570.86.15",
                     "result": "580.159.04", "note": "", "text": "driver 570.86.15 → 580.159.04"}]
    c["noise"] = ["result: CPU steal was 7.5 % of all CPU time over the run (more than 5.0 %)"]
    c["allow_noisy"] = True
    c["not_gateable"] = [{"id": "host_memory/measure=mlock/bytes=67108864", "metric": "seconds_per_gib",
                          "timing_class": "host", "spread_pct": 28.4, "threshold_pct": 20, "n_runs": 5,
                          "change_pct": 3.0}]
    for case in c["cases"]:
        if case["verdict"] == "regression" and case["metrics"]:
            case["metrics"][0]["label"] = "regression (confirmed 3/3)"
    return write_json(dst, c)


def serving_generator() -> Any:
    """tests/fixtures/serving/generate.py as a module (standard library only)."""
    spec = importlib.util.spec_from_file_location("serving_fixture_generate", fixture("serving", "generate.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def make_serving_second_node(dst: Path) -> Path:
    """Another node, 18 % slower, in a quick run (a tenth of the requests): a second result to draw
    beside the fixture's."""
    gen = serving_generator()
    dst.write_bytes(gen.dump(gen.build(slowdown=1.18, hostname="node-b", divisor=10)))
    return dst


def make_serving_odd(dst: Path) -> Path:
    """The serving fixture with what a plot must survive: a latency metric without a distribution
    (a result from before they existed), a failed case with markup in its reason, a skipped one,
    a strategy the palette does not know whose every H2D copy took 0 s, a case of 1e200 s latencies
    (valid, beyond any axis), and a host name with a '$' (mathtext) and markup."""
    gen = serving_generator()
    r = load(fixture("serving", "h200-serving.json"))
    cases = r["cases"]
    del cases[0]["metrics"]["h2d_latency"]["distribution"]
    cases[2]["status"] = "failed"
    cases[2]["reason"] = "request 7 <b>(submitter 0)</b>: the GPU saw data that is not the request's & $x$"
    skipped = copy.deepcopy(cases[-1])
    skipped.update(status="skipped", reason="the device has one stream priority", metrics={}, checks=[],
                   timing_method=None, operations_per_sample=0, bytes_per_sample=0, elapsed_seconds=0.0)
    skipped["params"]["request_priority"] = "highest"
    skipped["id"] = case_id(skipped)
    zero = copy.deepcopy(cases[1])
    zero["params"] = {"strategy": "future_strategy", "request_bytes": 4096, "requests": 50}
    zero["id"] = case_id(zero)
    h2d_samples, h2d = gen.distribution_of([[0.0] * 50] * 3)
    req_samples, req = gen.distribution_of([[(3 + 0.01 * i) * 1e-6 for i in range(50)]] * 3)
    zero["metrics"] = {"h2d_latency": gen.metric("s", "lower", h2d_samples, h2d),
                       "request_latency": gen.metric("s", "lower", req_samples, req),
                       "throughput": gen.metric("requests/s", "higher", [3e5, 3.1e5, 2.9e5])}
    huge = copy.deepcopy(zero)
    huge["params"]["request_bytes"] = 8192
    huge["id"] = case_id(huge)
    samples, dist = gen.distribution_of([[1e200] * 4] * 3)
    huge["metrics"] = {"h2d_latency": gen.metric("s", "lower", samples, dist)}
    cases += [skipped, zero, huge]
    r["context"]["hostname"] = "node$17 <b>&amp;"
    return write_json(dst, r)


def family(name: str) -> Path:
    return fixture("report_families", name)


def make_many(dst: Path, n: int) -> list[Path]:
    """n copies of the H200 result, each in a file of its own name: more results than any one style cycle."""
    dst.mkdir(parents=True, exist_ok=True)
    good = fixture("results", "h200-default.json").read_bytes()
    paths = []
    for i in range(n):
        path = dst / f"node-{i:02d}.json"
        path.write_bytes(good)
        paths.append(path)
    return paths


def make_big_changes(dst: Path) -> Path:
    """The compare fixture with one case at -100 % and one at +2500 % beside the small changes."""
    c = load(fixture("compare", "h200-vs-degraded.json"))
    movable = [case for case in c["cases"] if any(isinstance(m.get("change_pct"), (int, float)) for m in case["metrics"])]
    for case, change in zip(movable[:2], (-100.0, 2500.0)):
        next(m for m in case["metrics"] if isinstance(m.get("change_pct"), (int, float)))["change_pct"] = change
    return write_json(dst, c)


def make_overlap_elsewhere(dst: Path) -> Path:
    """The overlap fixture moved to another folder without its traces; one case names a trace that is
    not JSON: the result is valid, its Gantt charts cannot be drawn and must say why."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    r = load(family("h200-overlap.json"))
    broken = dst.parent / "broken.trace.json"
    broken.write_text("{ not a trace")
    r["cases"][1]["timeline"] = str(broken)
    return write_json(dst, r)


class PageParser(html.parser.HTMLParser):
    """Checks nesting (every non-void element closed in order) and collects what the tests look at."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.imgs: list[str] = []
        self.ids: set[str] = set()
        self.texts: list[str] = []
        self.section_ids: list[str] = []
        self.tags: set[str] = set()
        self.hrefs: list[str] = []
        self.figure_ids: list[str] = []
        self._id_cell: list[str] | None = None
        self._id_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.add(tag)
        if tag == "img":
            self.imgs.append(a.get("src") or "")
        if tag == "section" and a.get("id"):
            self.section_ids.append(a["id"] or "")
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"] or "")
        if tag == "figure" and a.get("id"):
            self.figure_ids.append(a["id"] or "")
        if tag in self.VOID:
            return
        self.stack.append(tag)
        if tag == "td" and "id" in (a.get("class") or "").split():
            self._id_cell = []
            self._id_depth = len(self.stack)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}> at {self.getpos()}")
            if tag in self.stack:
                while self.stack and self.stack.pop() != tag:
                    pass
            return
        if tag == "td" and self._id_cell is not None and len(self.stack) == self._id_depth:
            self.ids.add("".join(self._id_cell).strip())
            self._id_cell = None
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.texts.append(data)
        if self._id_cell is not None:
            self._id_cell.append(data)


def parse_page(text: str) -> PageParser:
    p = PageParser()
    p.feed(text)
    p.close()
    return p


# Every plot.py / html.py run the tests inspect, started once (two at a time) in setUpModule.
WORK: Path = Path()
RUNS: dict[str, subprocess.CompletedProcess[str]] = {}


def setUpModule() -> None:  # noqa: N802 (unittest's name)
    global WORK
    proc = run([PYTHON, "-c", "import matplotlib, numpy; print(matplotlib.__version__)"])
    if proc.returncode != 0:
        raise RuntimeError(f"{PYTHON} cannot import matplotlib: create the report venv first:\n"
                           "  python3 -m venv build/venv && build/venv/bin/pip install -r reports/requirements.txt\n"
                           + proc.stderr)
    WORK = Path(tempfile.mkdtemp(prefix="pathbench-reports-"))
    results = fixture("results")
    compare = fixture("compare", "h200-vs-degraded.json")
    sweep = make_sweep(WORK / "sweep.json")
    across = make_across(WORK / "across.json")
    floors = make_floors_only(WORK / "floors.json")
    gate = make_gate_compare(WORK / "gate.json")
    serving = fixture("serving", "h200-serving.json")
    (WORK / "node-b").mkdir()
    serving_b = make_serving_second_node(WORK / "node-b" / "h200-serving.json")
    serving_odd = make_serving_odd(WORK / "serving-odd.json")
    fams = [family(n) for n in FAMILY_FIXTURES]
    many = make_many(WORK / "many-in", 10)
    big = make_big_changes(WORK / "big-changes.json")
    elsewhere = make_overlap_elsewhere(WORK / "moved" / "overlap.json")
    jobs = {
        "families": lambda: plot_py(*fams, "--out", WORK / "families", "--describe", WORK / "families.describe.json"),
        **{f"fam_{n}": functools.partial(plot_py, family(n), "--out", WORK / f"fam_{n}", "--describe",
                                         WORK / f"fam_{n}.describe.json") for n in FAMILY_FIXTURES},
        "many": lambda: plot_py(*many, "--out", WORK / "many", "--describe", WORK / "many.describe.json"),
        "big_changes": lambda: plot_py(results / "h200-default.json", "--compare", big, "--out", WORK / "big_changes",
                                       "--describe", WORK / "big_changes.describe.json"),
        "elsewhere": lambda: plot_py(elsewhere, "--out", WORK / "elsewhere"),
        "html_families": lambda: html_py(*fams, "--out", WORK / "site" / "families.html"),
        "html_two": lambda: html_py(results / "h200-default.json", results / "h200-copy-hugetlb.json", "--compare",
                                    compare, "--out", WORK / "two.html"),
        "html_elsewhere": lambda: html_py(elsewhere, "--out", WORK / "elsewhere.html"),
        "single": lambda: plot_py(results / "h200-default.json", "--out", WORK / "single"),
        "two": lambda: plot_py(results / "h200-default.json", results / "h200-copy-hugetlb.json", "--out", WORK / "two"),
        "compare": lambda: plot_py(results / "h200-default.json", "--compare", compare, "--out", WORK / "compare"),
        "cpu": lambda: plot_py(results / "cpu-only-default.json", "--out", WORK / "cpu"),
        "sweep": lambda: plot_py(sweep, results / "h200-copy-hugetlb.json", "--out", WORK / "sweep"),
        "sweep1": lambda: plot_py(sweep, "--out", WORK / "sweep1"),
        "across": lambda: plot_py(results / "h200-copy-hugetlb.json", "--compare", across, "--out", WORK / "across"),
        "html": lambda: html_py(results / "h200-default.json", "--compare", compare, "--out", WORK / "page.html"),
        "html_cpu": lambda: html_py(results / "cpu-only-default.json", "--out", WORK / "cpu.html"),
        "html_sweep": lambda: html_py(sweep, "--compare", across, "--out", WORK / "html" / "sweep.html"),
        "html_floors": lambda: html_py(results / "h200-default.json", "--compare", floors, "--out", WORK / "floors.html"),
        "html_gate": lambda: html_py(results / "h200-default.json", "--compare", gate, "--out", WORK / "gate.html"),
        "floors": lambda: plot_py(results / "h200-default.json", "--compare", floors, "--out", WORK / "floors"),
        "serving": lambda: plot_py(serving, "--out", WORK / "serving", "--describe", WORK / "serving.describe.json"),
        "serving_two": lambda: plot_py(serving, serving_b, "--out", WORK / "serving_two"),
        "serving_odd": lambda: plot_py(serving_odd, "--out", WORK / "serving_odd"),
        "html_serving": lambda: html_py(serving, "--out", WORK / "serving.html"),
        "html_serving_odd": lambda: html_py(serving_odd, "--out", WORK / "serving-odd.html"),
    }
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(job) for name, job in jobs.items()}
        for name, future in futures.items():
            RUNS[name] = future.result()


def tearDownModule() -> None:  # noqa: N802
    if WORK != Path() and not os.environ.get("PATHBENCH_KEEP_TEST_OUTPUT"):
        shutil.rmtree(WORK, ignore_errors=True)


class PlotTest(unittest.TestCase):
    def ok(self, name: str) -> subprocess.CompletedProcess[str]:
        proc = RUNS[name]
        self.assertEqual(proc.returncode, EXIT_OK, f"{name}: plot.py failed:\n{proc.stdout}\n{proc.stderr}")
        return proc

    def assert_written(self, name: str, expected: tuple[str, ...]) -> None:
        proc = self.ok(name)
        out = WORK / name
        listed = [Path(line) for line in proc.stdout.splitlines() if line.strip()]
        self.assertEqual(sorted(p.name for p in listed), sorted(expected), f"files listed on stdout:\n{proc.stdout}")
        self.assertEqual(sorted(p.name for p in out.iterdir()), sorted(expected), "files in the output directory")
        for p in listed:
            self.assertTrue(p.is_file(), f"{p} listed but not written")
            w, h = png_size(p)
            self.assertGreaterEqual(w, MIN_WIDTH, p)
            self.assertGreaterEqual(h, MIN_HEIGHT, p)

    def test_single_result_writes_every_plot(self) -> None:
        self.assert_written("single", ALL_PLOTS)

    def test_two_results(self) -> None:
        self.assert_written("two", ALL_PLOTS)

    def test_compare_adds_compare_png(self) -> None:
        self.assert_written("compare", ALL_PLOTS + ("compare.png",))

    def test_across_compare_and_hugetlb_sweep(self) -> None:
        # The hugetlb sweep has no latency or host_memory cases: those two are skipped with a note.
        self.assert_written("across", ("bandwidth_h2d.png", "bandwidth_d2h.png", "bandwidth_d2d.png",
                                        "pin_cost.png", "compare.png"))
        err = RUNS["across"].stderr
        self.assertRegex(err, r"note: latency\.png skipped: no ok copy latency cases")
        self.assertRegex(err, r"note: host_memory\.png skipped")

    def test_cpu_only_skips_copy_plots_with_reasons(self) -> None:
        self.assert_written("cpu", ("host_memory.png",))
        err = RUNS["cpu"].stderr
        for name in ("bandwidth_h2d", "bandwidth_d2h", "bandwidth_d2d", "latency", "pin_cost"):
            self.assertRegex(err, rf"note: {name}\.png skipped: .*no usable CUDA device", err)
        self.assertNotIn("Traceback", err)

    def test_sweep_with_remote_failed_and_odd_strings(self) -> None:
        self.assert_written("sweep", ALL_PLOTS)
        self.assert_written("sweep1", ALL_PLOTS)
        self.assertNotIn("Traceback", RUNS["sweep"].stderr + RUNS["sweep1"].stderr)

    def test_floors_only_compare_has_nothing_to_plot(self) -> None:
        self.assert_written("floors", ALL_PLOTS)
        self.assertRegex(RUNS["floors"].stderr, r"note: compare\.png skipped: the comparison holds no case with a change")

    def test_serving_plots(self) -> None:
        self.assert_written("serving", SERVING_PLOTS)
        self.assertNotIn("Traceback", RUNS["serving"].stderr)
        # The copy plots have no data in a serving run: skipped with a note, as for any family.
        self.assertRegex(RUNS["serving"].stderr, r"note: bandwidth_h2d\.png skipped")

    def test_serving_two_nodes_and_odd_cases(self) -> None:
        self.assert_written("serving_two", SERVING_PLOTS)
        self.assert_written("serving_odd", SERVING_PLOTS)
        for name in ("serving_two", "serving_odd"):
            self.assertNotIn("Traceback", RUNS[name].stderr)
            self.assertNotIn("internal error", RUNS[name].stderr)
            self.assertNotIn("cannot be drawn", RUNS[name].stderr)

    def test_no_serving_plots_or_notes_without_serving_cases(self) -> None:
        for name in ("single", "cpu", "sweep", "across"):
            self.assertNotIn("serving", RUNS[name].stderr + RUNS[name].stdout, name)

    def test_pngs_are_not_blank(self) -> None:
        pngs = sorted(p for name in ("single", "two", "compare", "cpu", "sweep", "across", "serving", "serving_two",
                                     "serving_odd", "families", "big_changes")
                      if RUNS[name].returncode == 0 for p in (WORK / name).glob("*.png"))
        self.assertGreaterEqual(len(pngs), 30)
        for path, s in image_stats(pngs).items():
            with self.subTest(png=path):
                self.assertGreater(s["std"], 5.0)
                self.assertGreaterEqual(s["colors"], 16)
                self.assertGreater(s["non_background"], 0.02)
                self.assertEqual(s["background"], [255, 255, 255])

    def test_bad_input_exits_3_and_names_the_file(self) -> None:
        good = load(fixture("results", "h200-default.json"))
        bad: dict[str, Any] = {
            "not_json.json": "{ not json",
            "wrong_schema.json": dict(good, schema="pathbench.result/v0"),
            "cases_not_array.json": dict(good, cases={}),
            "no_context.json": {k: v for k, v in good.items() if k != "context"},
            "bad_status.json": dict(good, cases=[dict(good["cases"][0], status="great")]),
            "ok_without_median.json": dict(good, cases=[json.loads(json.dumps(good["cases"][0]).replace(
                '"median":', '"median_gone":'))]),
        }
        d = WORK / "bad"
        d.mkdir(exist_ok=True)
        expect_pointer = {"wrong_schema.json": "/schema", "cases_not_array.json": "/cases", "no_context.json": "/context",
                          "bad_status.json": "/cases/0/status", "ok_without_median.json": "/cases/0/metrics/"}
        for name, content in bad.items():
            path = d / name
            path.write_text(content if isinstance(content, str) else json.dumps(content))
            with self.subTest(file=name):
                proc = plot_py(path, "--out", d / "out")
                self.assertEqual(proc.returncode, EXIT_BAD_INPUT, proc.stderr)
                self.assertIn(str(path), proc.stderr)
                self.assertIn(expect_pointer.get(name, ""), proc.stderr)
                self.assertNotIn("Traceback", proc.stderr)
        serving = load(fixture("serving", "h200-serving.json"))
        dist = "/cases/4/metrics/h2d_latency/distribution"
        serving_bad = {
            # One repetition's statistics lost: the distribution and the samples disagree.
            "serving_repetitions.json": (lambda d: [v.pop() for v in d["per_repetition"].values()],
                                         f"{dist}/per_repetition"),
            "serving_operations.json": (lambda d: d.update(operations=d["operations"] - 1), f"{dist}/operations"),
            "serving_unordered.json": (lambda d: d.update({"p99.9": d["p99"] * 0.5}), f"{dist}/p99.9"),
            "serving_bucket_edge.json": (lambda d: d["histogram"]["buckets"][7].__setitem__(0, 1.234e-5),
                                         f"{dist}/histogram/buckets/7/0"),
            "serving_bucket_count.json": (lambda d: d["histogram"]["buckets"][2].__setitem__(1, 0),
                                          f"{dist}/histogram/buckets/2/1"),
        }
        for name, (change, pointer) in serving_bad.items():
            doc = copy.deepcopy(serving)
            change(doc["cases"][4]["metrics"]["h2d_latency"]["distribution"])
            path = write_json(d / name, doc)
            with self.subTest(file=name):
                proc = plot_py(path, "--out", d / "out")
                self.assertEqual(proc.returncode, EXIT_BAD_INPUT, proc.stderr)
                self.assertIn(f"plot.py: error: {path}: {pointer}: ", proc.stderr)
                self.assertNotIn("Traceback", proc.stderr)
                self.assertEqual(proc.stdout, "")
        with self.subTest(case="missing file"):
            proc = plot_py(d / "nope.json", "--out", d / "out")
            self.assertEqual(proc.returncode, EXIT_BAD_INPUT)
            self.assertIn("nope.json", proc.stderr)
        with self.subTest(case="a result given as --compare"):
            proc = plot_py(fixture("results", "h200-default.json"), "--compare", fixture("results", "h200-default.json"),
                           "--out", d / "out")
            self.assertEqual(proc.returncode, EXIT_BAD_INPUT)
            self.assertRegex(proc.stderr, r"h200-default\.json: /schema: expected 'pathbench\.compare/v1'")
        with self.subTest(case="usage: no --out"):
            proc = plot_py(fixture("results", "h200-default.json"))
            self.assertEqual(proc.returncode, EXIT_BAD_INPUT)
        self.assertFalse((d / "out").exists() and any((d / "out").iterdir()), "bad input wrote plots")


class ServingFixtureTest(unittest.TestCase):
    """tests/fixtures/serving/h200-serving.json holds what the C++ writer would write: its parts agree
    (the C++ reader checks the same, and tests/e2e/test_bad_results.py runs it through the binary),
    and its numbers are the H200's. (generate.py --check, that the file is what the generator writes,
    is its own ctest: it takes 20 s.)"""

    result: dict[str, Any]

    @classmethod
    def setUpClass(cls) -> None:
        cls.result = load(fixture("serving", "h200-serving.json"))

    def test_internally_consistent(self) -> None:
        cases = self.result["cases"]
        self.assertGreaterEqual(len(cases), 20)
        self.assertEqual(len({c["id"] for c in cases}), len(cases))
        for c in cases:
            self.assertEqual(c["id"], case_id(c))
            self.assertEqual(c["family"], "serving")
            self.assertEqual(c["operations_per_sample"], c["params"]["requests"])
            for name, m in c["metrics"].items():
                with self.subTest(case=c["id"], metric=name):
                    self.assertEqual(m["stats"]["n"], len(m["samples"]))
                    expected = stats_of(m["samples"])
                    for k in ("median", "min", "max", "mean", "p10", "p90", "stddev"):
                        self.assertAlmostEqual(m["stats"][k], expected[k], delta=abs(expected[k]) * 1e-9, msg=k)
                    d = m.get("distribution")
                    if name in ("h2d_latency", "request_latency"):
                        self.assertIsNotNone(d)
                    if d is None:
                        continue
                    h = d["histogram"]
                    self.assertEqual(d["operations"], h["count"])
                    self.assertEqual(h["count"], sum(n for _, n in h["buckets"]) + h["overflow"])
                    self.assertEqual(d["operations"], c["params"]["requests"] * len(m["samples"]))
                    self.assertEqual(set(d["per_repetition"]), set(DISTRIBUTION_STATISTICS))
                    for k, values in d["per_repetition"].items():
                        self.assertEqual(len(values), len(m["samples"]), k)
                    # The samples are the repetitions' medians.
                    self.assertEqual(d["per_repetition"]["p50"], m["samples"])
                    overall = [d[k] for k in DISTRIBUTION_STATISTICS]
                    self.assertEqual(overall, sorted(overall))
                    for r in range(len(m["samples"])):
                        per = [d["per_repetition"][k][r] for k in DISTRIBUTION_STATISTICS]
                        self.assertEqual(per, sorted(per))
                    self.assertEqual(d["max"], h["max"])
                    self.assertEqual(d["max"], max(d["per_repetition"]["max"]))
                    self.assertLessEqual(h["min"], d["p50"])
                    self.assertLessEqual(h["min"], d["mean"])
                    self.assertLessEqual(d["mean"], h["max"])
                    self.assertAlmostEqual(h["sum"], d["mean"] * d["operations"], delta=h["sum"] * 1e-9)
                    edges = [e for e, _ in h["buckets"]]
                    self.assertEqual(edges, sorted(set(edges)))
                    self.assertTrue(all(n > 0 for _, n in h["buckets"]))
                    # Each percentile lies in a bucket at most 1/128 of its edge wide (2 digits).
                    for k in DISTRIBUTION_STATISTICS:
                        upper = next(e for e in edges if e >= d[k])
                        self.assertLessEqual(upper, d[k] * (1 + 1 / 128) + 1e-15, k)

    def test_numbers_are_h200_like(self) -> None:
        def dist(metric: str = "h2d_latency", **params: Any) -> dict[str, Any]:
            (c,) = [c for c in self.result["cases"] if all(c["params"].get(k) == v for k, v in params.items())]
            return c["metrics"][metric]["distribution"]

        def us(d: dict[str, Any], k: str) -> float:
            return d[k] * 1e6

        one = {"request_bytes": 65536, "requests": 20000, "arrival": None}  # back to back
        pinned = dist(strategy="preallocated_pinned", **one)
        self.assertAlmostEqual(us(pinned, "p50"), 9.4, delta=0.3)
        self.assertAlmostEqual(us(pinned, "p99"), 14.4, delta=0.8)
        self.assertAlmostEqual(us(dist(strategy="pageable", **one), "p50"), 16.8, delta=0.5)
        self.assertAlmostEqual(us(dist(strategy="pin_per_request", **one), "p50"), 104, delta=4)
        self.assertAlmostEqual(us(dist(strategy="pinned_pool", **one), "p50"), 15, delta=0.6)
        hol = {"background": "same_direction", "request_priority": "normal"}
        self.assertAlmostEqual(us(dist(bulk_chunk_bytes=64 << 20, **hol), "p50"), 1220, delta=30)
        self.assertTrue(10 < us(dist(bulk_chunk_bytes=1 << 20, **hol), "p50") < 100)
        for chunk in (64 << 20, 8 << 20, 1 << 20):
            self.assertAlmostEqual(us(dist(bulk_chunk_bytes=chunk, background="opposite_direction",
                                           request_priority="normal"), "p50"), 11, delta=0.6)


class HtmlTest(unittest.TestCase):
    page: str = ""
    parsed: PageParser

    @classmethod
    def setUpClass(cls) -> None:
        for name in ("html", "html_cpu", "html_sweep", "html_floors", "html_serving", "html_serving_odd"):
            proc = RUNS[name]
            if proc.returncode != 0:
                raise AssertionError(f"{name}: html.py failed:\n{proc.stdout}\n{proc.stderr}")
        cls.page = (WORK / "page.html").read_text(encoding="utf-8")
        cls.parsed = parse_page(cls.page)

    def test_well_formed(self) -> None:
        for name in ("page.html", "cpu.html", "html/sweep.html", "floors.html", "gate.html", "serving.html",
                     "serving-odd.html"):
            with self.subTest(page=name):
                text = (WORK / name).read_text(encoding="utf-8")
                self.assertTrue(text.startswith("<!DOCTYPE html>"))
                p = parse_page(text)
                self.assertEqual(p.errors, [])
                self.assertEqual(p.stack, [], "unclosed elements")
                self.assertLessEqual({"html", "head", "body", "title", "style", "table"}, p.tags)

    def test_contents(self) -> None:
        result = load(fixture("results", "h200-default.json"))
        text = "".join(self.parsed.texts)
        self.assertIn(result["context"]["node_type"], text)
        self.assertIn(result["context"]["hostname"], text)
        self.assertIn(result["context"]["start_time"], text)
        self.assertIn(result["context"]["gpus"][0]["uuid"], text)
        self.assertIn(result["context"]["topology_fingerprint"], text)
        missing = {c["id"] for c in result["cases"]} - self.parsed.ids
        self.assertEqual(missing, set(), "case ids not in the page")
        for section in ("summary", "context", "plots", "cases", "verdicts", "floors"):
            self.assertIn(section, self.parsed.section_ids)

    def test_plots_are_embedded_and_nothing_is_external(self) -> None:
        self.assertGreaterEqual(len(self.parsed.imgs), 7)  # six plots + compare.png
        for src in self.parsed.imgs:
            self.assertTrue(src.startswith("data:image/png;base64,"), src[:60])
            self.assertEqual(base64.b64decode(src.split(",", 1)[1])[:8], PNG_SIGNATURE)
        self.assertNotRegex(self.page, r"""(?i)(src|href)\s*=\s*["']?(https?:|//|file:)""")
        self.assertNotRegex(self.page, r"(?i)<link\b|<script\b|@import|url\(")

    def test_verdicts_and_floors_tables(self) -> None:
        compare = load(fixture("compare", "h200-vs-degraded.json"))
        text = "".join(self.parsed.texts)
        missing = {c["id"] for c in compare["cases"]} - self.parsed.ids
        self.assertEqual(missing, set(), "compare case ids not in the page")
        # Worst first: the regressions come before every pass in the verdicts table.
        verdicts = re.findall(r'<span class="badge" style="background:#[0-9a-f]{6}">([a-z_]+)</span>',
                              self.page.split('id="verdicts"', 1)[1].split('id="floors"', 1)[0])
        self.assertEqual(verdicts.count("regression"), compare["summary"]["regression"])
        self.assertLess(max(i for i, v in enumerate(verdicts) if v == "regression"),
                        min(i for i, v in enumerate(verdicts) if v == "pass"))
        self.assertIn("below_floor", text)
        self.assertIn("-10.10 %", text)

    def test_gate_page_starts_with_what_changed(self) -> None:
        page = (WORK / "gate.html").read_text(encoding="utf-8")
        parsed = parse_page(page)
        self.assertEqual(parsed.errors, [])
        text = "".join(parsed.texts)
        verdicts = page.split('id="verdicts"', 1)[1]
        self.assertIn("What changed since the baseline", verdicts)
        self.assertIn("driver 570.86.15 → 580.159.04", text)
        self.assertLess(verdicts.index("What changed"), verdicts.index("<thead><tr><th>id</th>"))
        self.assertIn("Taken under noise", text)
        self.assertIn("judged anyway", text)
        self.assertIn("Not gateable on this node type", text)
        self.assertIn("28.4 %", text)
        self.assertIn("regression (confirmed 3/3)", text)

    def test_cpu_only_page(self) -> None:
        text = (WORK / "cpu.html").read_text(encoding="utf-8")
        p = parse_page(text)
        self.assertIn("cpu-only / AMD EPYC / 1 NUMA", "".join(p.texts))
        self.assertEqual(len(p.imgs), 1)  # host_memory.png only
        self.assertIn("no usable CUDA device", "".join(p.texts))
        self.assertEqual({c["id"] for c in load(fixture("results", "cpu-only-default.json"))["cases"]} - p.ids, set())

    def test_text_is_escaped(self) -> None:
        text = (WORK / "html" / "sweep.html").read_text(encoding="utf-8")
        self.assertNotIn("node$17 <b>", text)
        self.assertNotIn("<after sample 3>", text)
        self.assertIn("node$17 &lt;b&gt;&amp;amp;", text)
        self.assertIn("&lt;after sample 3&gt; &amp; more", text)
        self.assertIn("&lt;check numactl&gt;", text)
        p = parse_page(text)
        self.assertEqual(p.errors, [])
        words = "".join(p.texts)
        self.assertIn("node$17 <b>&amp;", words)  # what the reader sees is the original string
        self.assertIn("mode across", words)
        self.assertIn("ratio", words)

    def test_floors_only_compare(self) -> None:
        p = parse_page((WORK / "floors.html").read_text(encoding="utf-8"))
        words = "".join(p.texts)
        self.assertIn("Incomparable", words)
        self.assertIn("node_type: baseline 'NVIDIA H100 x8' vs result 'NVIDIA H200 x1'", words)
        self.assertIn("gpu0/pcie_link", p.ids)
        self.assertIn("latch timed out", words)
        self.assertEqual(len(p.imgs), 6)  # no compare.png: nothing to plot

    def test_bad_input_exits_3(self) -> None:
        d = WORK / "bad-html"
        d.mkdir(exist_ok=True)
        broken = d / "broken.json"
        good = load(fixture("results", "h200-default.json"))
        broken.write_text(json.dumps(dict(good, cases=[dict(good["cases"][0], id=5)])))
        for args, needle in (([broken], "broken.json: /cases/0/id"),
                             ([fixture("results", "h200-default.json"), "--compare", broken], "broken.json: /schema"),
                             ([d / "absent.json"], "absent.json")):
            with self.subTest(args=args):
                proc = html_py(*args, "--out", d / "x.html")
                self.assertEqual(proc.returncode, EXIT_BAD_INPUT, proc.stderr)
                self.assertIn(needle, proc.stderr)
                self.assertFalse((d / "x.html").exists())

    def test_serving_section(self) -> None:
        page = (WORK / "serving.html").read_text(encoding="utf-8")
        p = parse_page(page)
        self.assertEqual(p.errors, [])
        self.assertIn("serving", p.section_ids)
        self.assertIn('<a href="#serving">serving</a>', page)
        text = "".join(p.texts)
        self.assertIn("Serving / tail latency", text)
        section = page.split('<section id="serving">', 1)[1].split("</section>", 1)[0]
        for name in SERVING_PLOTS:
            self.assertIn(f'<figure id="plot-{name.removesuffix(".png")}"><img src="data:image/png;base64,', section)
        self.assertEqual(section.count("<img "), len(SERVING_PLOTS))
        result = load(fixture("serving", "h200-serving.json"))
        self.assertEqual({c["id"] for c in result["cases"]} - p.ids, set(), "case ids not in the page")
        # Every case in the serving table (its id as the tooltip), with p50 .. max in µs.
        for c in result["cases"]:
            self.assertIn(f'title="{c["id"]}"', section)
        def us(seconds: float) -> str:  # as the page writes µs: three significant digits, thousands with commas
            v = seconds * 1e6
            return f"{v:,.0f}" if v >= 1000 else f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.3g}"

        pinned = result["cases"][0]["metrics"]["h2d_latency"]["distribution"]
        for k in DISTRIBUTION_STATISTICS:
            self.assertTrue(f">{us(pinned[k])}<" in section, f"{k} {us(pinned[k])}")
        head_of_line = next(c for c in result["cases"] if c["params"].get("background") == "same_direction"
                            and c["params"]["bulk_chunk_bytes"] == 64 << 20)
        p50 = us(head_of_line["metrics"]["h2d_latency"]["distribution"]["p50"])
        self.assertTrue(f">{p50}<" in section and "," in p50, p50)
        self.assertTrue("of 512 KiB" in section)
        self.assertTrue(re.search(r"[\d,]+ <span class=\"muted\">\([\d.]+ %\)</span>", section))
        # A serving-only run: one line about the copy plots instead of a note for each.
        self.assertIn("serving cases only", page.split('<section id="plots">', 1)[1].split("</section>", 1)[0])

    def test_serving_section_with_odd_cases(self) -> None:
        page = (WORK / "serving-odd.html").read_text(encoding="utf-8")
        p = parse_page(page)
        self.assertEqual(p.errors, [])
        words = "".join(p.texts)
        self.assertIn("no per-operation distribution", words)
        self.assertIn("request 7 <b>(submitter 0)</b>: the GPU saw data that is not the request's & $x$", words)
        self.assertNotIn("request 7 <b>", page)
        self.assertIn("the device has one stream priority", words)
        self.assertIn("future_strategy", words)
        self.assertEqual(page.count('<figure id="plot-serving_'), len(SERVING_PLOTS))

    def test_no_serving_section_without_serving_cases(self) -> None:
        self.assertNotIn("serving", self.parsed.section_ids)
        self.assertNotIn("#serving", self.page)
        self.assertNotIn("Serving / tail latency", self.page)

    def chromium(self) -> str:
        chromium = CHROMIUM or next((c for c in ("/usr/bin/chromium", shutil.which("chromium"),
                                                 shutil.which("chromium-browser")) if c and Path(c).exists()), None)
        if not chromium or not Path(chromium).exists():
            self.fail(f"headless Chromium not found ({chromium or '/usr/bin/chromium, chromium on PATH'}): install it "
                      "(`sudo apt-get install chromium`; scripts/setup.sh does) or pass --chromium PATH")
        return chromium

    def screenshot(self, page: Path, shot: Path, height: int) -> dict[str, Any]:
        profile = tempfile.mkdtemp(prefix="pathbench-chromium-")
        try:
            proc = run([self.chromium(), "--headless", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage",
                        "--hide-scrollbars", "--no-first-run", f"--user-data-dir={profile}",
                        f"--screenshot={shot}", f"--window-size=1280,{height}", page.resolve().as_uri()],
                       timeout=120)
        finally:
            shutil.rmtree(profile, ignore_errors=True)
        self.assertTrue(shot.is_file(), f"no screenshot; chromium said:\n{proc.stdout}\n{proc.stderr[-3000:]}")
        self.assertEqual(png_size(shot), (1280, height))
        return image_stats([shot])[str(shot)]

    def test_chromium_renders_the_serving_page(self) -> None:
        s = self.screenshot(WORK / "serving.html", WORK / "serving-screenshot.png", 6000)
        self.assertGreater(s["std"], 10.0, s)
        self.assertGreaterEqual(s["colors"], 32, s)
        self.assertGreater(s["non_background"], 0.05, s)
        self.assertTrue(all(abs(a - b) <= 12 for a, b in zip(s["top_left"], (0x1d, 0x23, 0x30))), s)

    def test_chromium_renders_the_page(self) -> None:
        shot = WORK / "screenshot.png"
        s = self.screenshot(WORK / "page.html", shot, 2000)
        self.assertGreater(s["std"], 10.0, s)
        self.assertGreaterEqual(s["colors"], 32, s)
        self.assertGreater(s["non_background"], 0.05, s)
        # The inline CSS was applied: the page starts with the dark header band (#1d2330).
        self.assertTrue(all(abs(a - b) <= 12 for a, b in zip(s["top_left"], (0x1d, 0x23, 0x30))), s)


def describe_of(name: str) -> dict[str, dict[str, Any]]:
    """plot.py --describe of one run, by plot name."""
    doc = load(WORK / f"{name}.describe.json")
    return {p["name"]: p for p in doc["plots"]}


def fmt_bytes(n: int) -> str:
    """A power-of-two size as the plots label it (4096 -> '4 KiB')."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


def all_text(p: dict[str, Any]) -> str:
    """Every string a described figure shows (titles, labels, ticks, texts, legends), joined."""
    parts = [p.get("suptitle", ""), *p.get("subfigure_titles", []), *p.get("legends", [])]
    for ax in p.get("axes", []):
        parts += [ax["title"], ax["xlabel"], ax["ylabel"], *ax["xticklabels"], *ax["yticklabels"], *ax["texts"],
                  *ax["legend"]]
    return "\n".join(parts)


class FamilyPlotTest(unittest.TestCase):
    """The plots of overlap, small_copies, unified_memory, peer and the serving percentiles, from the
    fixtures of tests/fixtures/report_families (real small_copies and unified_memory results; synthetic
    overlap and peer shapes, real H200 overlap traces)."""

    def ok(self, name: str) -> subprocess.CompletedProcess[str]:
        proc = RUNS[name]
        self.assertEqual(proc.returncode, EXIT_OK, f"{name}: plot.py failed:\n{proc.stdout}\n{proc.stderr}")
        self.assertNotIn("Traceback", proc.stderr)
        self.assertNotIn("cannot be drawn", proc.stderr)
        return proc

    def gantt_names(self, prefix: str = "") -> set[str]:
        r = load(family("h200-overlap.json"))
        return {f"gantt_{prefix}" + Path(c["timeline"]).name.removesuffix(".json").removesuffix(".trace") + ".png"
                for c in r["cases"]}

    def test_each_family_alone(self) -> None:
        for n, plots in FAMILY_PLOTS.items():
            with self.subTest(fixture=n):
                proc = self.ok(f"fam_{n}")
                written = {Path(line).name for line in proc.stdout.splitlines() if line.strip()}
                expected = set(plots) | (self.gantt_names() if n == "h200-overlap.json" else set())
                self.assertEqual(written, expected)
                for name in written:
                    path = WORK / f"fam_{n}" / name
                    self.assertGreater(path.stat().st_size, 20_000, path)
                    w, h = png_size(path)
                    self.assertGreaterEqual(w, MIN_WIDTH)
                    self.assertGreaterEqual(h, MIN_HEIGHT)
                # The copy plots of a result without copy cases are skipped with a note, as for serving.
                self.assertRegex(proc.stderr, r"note: bandwidth_h2d\.png skipped")

    def test_every_plot_from_all_fixtures_at_once(self) -> None:
        proc = self.ok("families")
        written = {Path(line).name for line in proc.stdout.splitlines() if line.strip()}
        expected = {p for ps in FAMILY_PLOTS.values() for p in ps} | self.gantt_names("r1_")
        self.assertEqual(written, expected)
        described = describe_of("families")
        self.assertEqual({n for n, p in described.items() if p["drawn"]}, expected)

    def test_overlap_content(self) -> None:
        p = describe_of("fam_h200-overlap.json")["overlap.png"]
        self.assertEqual(len(p["axes"]), 2)
        left, right = p["axes"]
        self.assertIn("time per iteration vs ideal", left["title"])
        self.assertIn("overlap fraction", right["title"])
        self.assertEqual(left["patches"], 4)  # a bar per variant
        self.assertIn("ideal: max(copy alone, kernel alone)", left["legend"])
        self.assertEqual([t.replace("\n", " ") for t in left["xticklabels"]],
                         ["pinned event wait", "pinned device sync", "pinned same stream", "pageable separate stream"])
        r = load(family("h200-overlap.json"))
        by_variant = {c["params"]["variant"]: c for c in r["cases"]}
        frac = by_variant["pinned_event_wait"]["metrics"]["overlap_fraction"]["stats"]["median"]
        self.assertIn(f"{frac:.2f}", right["texts"])
        self.assertIn("6.17 ms", left["texts"])  # the event-wait median, written on its bar
        self.assertIn("ratio_to_ideal", all_text(p))

    def test_gantt_charts_of_the_traces(self) -> None:
        described = describe_of("fam_h200-overlap.json")
        r = load(family("h200-overlap.json"))
        for c in r["cases"]:
            name = "gantt_" + Path(c["timeline"]).name.removesuffix(".json").removesuffix(".trace") + ".png"
            with self.subTest(case=c["id"]):
                p = described[name]
                self.assertTrue(p["drawn"])
                self.assertEqual(p["axes"][0]["title"], c["id"])
                self.assertTrue(any("stream" in t for t in p["axes"][0]["yticklabels"]))
                self.assertGreater(p["axes"][0]["collections"], 1)  # the bars of copies and kernels

    def test_missing_and_broken_traces_are_notes(self) -> None:
        proc = RUNS["elsewhere"]
        self.assertEqual(proc.returncode, EXIT_OK, proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)
        self.assertEqual(len(re.findall(r"note: gantt_\S+ skipped: trace \S+ not found", proc.stderr)), 3, proc.stderr)
        self.assertRegex(proc.stderr, r"note: gantt_broken\.png skipped: trace cannot be drawn: .*broken\.trace\.json")
        self.assertTrue((WORK / "elsewhere" / "overlap.png").is_file())
        self.assertEqual(list((WORK / "elsewhere").glob("gantt_*")), [])

    def test_small_copies_content(self) -> None:
        p = describe_of("fam_h200-small-copies.json")["small_copies.png"]
        titles = [ax["title"] for ax in p["axes"]]
        self.assertEqual(titles, ["time per batch (lower is better)", "API calls per batch",
                                  "CPU time spent issuing (lower is better)"])
        self.assertTrue(all(ax["yscale"] == "log" for ax in p["axes"]))
        self.assertEqual(p["axes"][0]["legend"], ["individual", "coalesced", "batched", "graph", "gather_kernel"])
        r = load(family("h200-small-copies.json"))
        ok = [c for c in r["cases"] if c["status"] == "ok"]
        self.assertEqual(p["axes"][0]["patches"], len(ok))  # a bar per case
        # Individual copies: one API call per piece, the median written on the bar.
        individual = [c for c in ok if c["params"]["method"] == "individual"]
        self.assertTrue(individual)
        for c in individual:
            calls = c["metrics"]["api_calls_per_batch"]["stats"]["median"]
            self.assertEqual(calls, c["params"]["count"], c["id"])
            self.assertIn(f"{calls:g}", p["axes"][1]["texts"])
        ticks = {f"{c['params']['direction'].upper()}\n{c['params']['count']} × "
                 f"{fmt_bytes(c['params']['bytes'])}" for c in ok}
        self.assertEqual(set(p["axes"][0]["xticklabels"]), ticks)
        self.assertIn("H2D\n1024 × 4 KiB", p["axes"][0]["xticklabels"])

    def test_unified_memory_content(self) -> None:
        p = describe_of("fam_h200-unified-memory.json")["unified_memory.png"]
        titles = [ax["title"] for ax in p["axes"]]
        self.assertIn("GPU page-fault groups (CUPTI um_counters)", titles)
        self.assertIn("time per MiB migrated (lower is better)", titles)
        ticks = [t.replace("\n", " ") for t in p["axes"][0]["xticklabels"]]
        self.assertEqual(ticks[:4], ["fault stride 4 KiB", "fault stride 64 KiB", "fault stride 2 MiB",
                                     "prefetch stride 64 KiB"])
        self.assertIn("gpu_to_cpu stride 4 KiB", ticks)
        r = load(family("h200-unified-memory.json"))
        counters = {c["id"]: next(ch["value"] for ch in c["checks"] if ch["name"] == "um_counters")
                    for c in r["cases"] if c["status"] == "ok"}
        faults = p["axes"][titles.index("GPU page-fault groups (CUPTI um_counters)")]["texts"]
        # Every case with fault groups has its median number of groups per sample written on its bar.
        with_faults = {i: statistics.median(v["gpu_fault_groups"]) for i, v in counters.items()
                       if statistics.median(v["gpu_fault_groups"]) > 0}
        self.assertTrue(with_faults)
        for cid, groups in with_faults.items():
            self.assertIn(f"{groups:g}", faults, cid)
        incomplete = sum(1 for v in counters.values() if v["complete"] is False)
        self.assertGreater(incomplete, 0)  # the fine-stride fault passes lose CUPTI records on an H200
        self.assertRegex("\n".join(p["legends"]), rf"INCOMPLETE in {incomplete} case")

    def test_peer_content(self) -> None:
        described = describe_of("fam_h200x4-peer.json")
        bw = described["peer_bandwidth.png"]
        self.assertEqual(len(bw["axes"]), 8)  # 4 methods x uni/bi
        self.assertTrue(all(ax["images"] == 1 for ax in bw["axes"]))
        self.assertEqual(bw["axes"][0]["xticklabels"], ["GPU 0", "GPU 1", "GPU 2", "GPU 3"])
        self.assertEqual(bw["axes"][0]["title"], "peer_access · uni · 256 MiB")
        self.assertIn("n/a", bw["axes"][0]["texts"])  # pair 0-3: no peer access, skipped
        texts = bw["axes"][0]["texts"]
        self.assertTrue(any(float(t) > 300 for t in texts if re.fullmatch(r"[\d.]+", t)), texts)  # NVLink
        lat = described["peer_latency.png"]
        self.assertEqual([ax["title"] for ax in lat["axes"]], ["time per copy inside a latched block",
                                                                "round trip: issue to completion seen by the host"])
        self.assertIn("peer_access · nvlink18", lat["axes"][1]["legend"])
        self.assertIn("two_hop · host-staged", lat["axes"][1]["legend"])

    def test_serving_percentiles_content(self) -> None:
        p = describe_of("serving")["serving_percentiles.png"]
        self.assertEqual(len(p["axes"]), 2)
        self.assertEqual(p["axes"][1]["legend"], list(DISTRIBUTION_STATISTICS))
        serving = load(fixture("serving", "h200-serving.json"))
        self.assertEqual(len(p["axes"][0]["yticklabels"]), len(serving["cases"]))
        self.assertEqual(p["axes"][0]["xscale"], "log")

    def test_legends_name_files_and_styles_do_not_repeat(self) -> None:
        self.ok("many")
        for name in ("bandwidth_h2d.png", "bandwidth_d2h.png"):
            with self.subTest(plot=name):
                p = describe_of("many")[name]
                files = [t for t in p["legends"] if re.match(r"\[\d+\] ", t)]
                self.assertEqual(files, [f"[{i + 1}] node-{i:02d}.json (vm)" for i in range(10)])
                self.assertFalse(any(re.search(r"\d{4}-\d\d-\d\dT", t) for t in p["legends"]), "timestamps in legend")
                styles = [tuple(s) for s, t in zip(p["legend_styles"], p["legends"]) if t in files]
                self.assertEqual(len(set(styles)), 10, styles)
        # A family's plot from several files names the one file that has that family, without a timestamp.
        overlap = describe_of("families")["overlap.png"]
        self.assertIn("h200-overlap.json (vm)", overlap["axes"][0]["legend"])
        self.assertNotRegex(all_text(overlap), r"\d{4}-\d\d-\d\dT\d\d")

    def test_compare_axis_readable_for_small_changes(self) -> None:
        self.ok("big_changes")
        p = describe_of("big_changes")["compare.png"]
        ax = p["axes"][0]
        self.assertEqual(ax["xscale"], "symlog")
        self.assertIn("+2500.0 % (clipped)", "".join(ax["texts"]))
        self.assertIn("-100.0 %", "".join(ax["texts"]))
        self.assertIn("+5 %", ax["xticklabels"])  # the linear part holds the noise band's ticks
        self.assertRegex("\n".join(p["legends"]), r"linear within ±5 %")
        # The ordinary comparison (changes within ±15 %) keeps a linear axis.
        plain = {x["name"]: x for x in (load(WORK / "families.describe.json")["plots"])}
        self.assertNotIn("compare.png", plain)

    def test_bad_family_input_exits_3(self) -> None:
        d = WORK / "bad-families"
        d.mkdir(exist_ok=True)
        overlap = load(family("h200-overlap.json"))
        overlap["cases"][0]["timeline"] = 5
        small = load(family("h200-small-copies.json"))
        small["cases"][2]["metrics"]["api_calls_per_batch"]["samples"][1] = "many"
        um = load(family("h200-unified-memory.json"))
        del um["cases"][3]["metrics"]["time"]["stats"]
        cases = {"overlap_timeline.json": (overlap, "/cases/0/timeline"),
                 "small_samples.json": (small, "/cases/2/metrics/api_calls_per_batch/samples/1"),
                 "um_stats.json": (um, "/cases/3/metrics/time")}
        for name, (doc, pointer) in cases.items():
            path = write_json(d / name, doc)
            for tool, prog in ((plot_py, "plot.py"), (html_py, "html.py")):
                with self.subTest(file=name, tool=prog):
                    out = d / f"out-{prog}-{name}"
                    args = [path, "--out", out] if prog == "plot.py" else [family("h200x4-peer.json"), path, "--out",
                                                                         out.with_suffix(".html")]
                    proc = tool(*args)
                    self.assertEqual(proc.returncode, EXIT_BAD_INPUT, proc.stderr)
                    self.assertIn(f"{prog}: error: {path}: {pointer}", proc.stderr)
                    self.assertNotIn("Traceback", proc.stderr)
                    self.assertEqual(proc.stdout, "")
                    self.assertFalse(out.exists() or out.with_suffix(".html").exists(), "bad input wrote output")


class FamilyFixtureTest(unittest.TestCase):
    def test_generated(self) -> None:
        proc = run([sys.executable, str(family("generate.py")), "--check"])
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_marked_synthetic(self) -> None:
        readme = family("README.md").read_text()
        self.assertIn("Synthetic shape fixtures", readme)
        for n in FAMILY_FIXTURES:
            self.assertIn(n, readme)

    def test_pathbench_accepts_them(self) -> None:
        if not PATHBENCH:
            self.skipTest("no --pathbench given")
        for n in FAMILY_FIXTURES:
            with self.subTest(fixture=n):
                # One run as the baseline: its host-timed metrics are gated only with the run and
                # machine minimums lifted.
                proc = run([PATHBENCH, "compare", str(family(n)), str(family(n)),
                            "--min-runs-host", "1", "--min-machines-host", "1"])
                self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
                self.assertRegex(proc.stdout, r"cases: \d+ pass")
                proc = run([PATHBENCH, "export", str(family(n)), "--prometheus", "-"])
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertIn("pathbench_", proc.stdout)


class FamilyHtmlTest(unittest.TestCase):
    page: str = ""
    parsed: PageParser
    chromium = HtmlTest.chromium
    screenshot = HtmlTest.screenshot

    @classmethod
    def setUpClass(cls) -> None:
        for name in ("html_families", "html_two", "html_elsewhere"):
            proc = RUNS[name]
            if proc.returncode != 0:
                raise AssertionError(f"{name}: html.py failed:\n{proc.stdout}\n{proc.stderr}")
        cls.page = (WORK / "site" / "families.html").read_text(encoding="utf-8")
        cls.parsed = parse_page(cls.page)

    def test_well_formed(self) -> None:
        for page in (WORK / "site" / "families.html", WORK / "two.html", WORK / "elsewhere.html"):
            with self.subTest(page=page.name):
                p = parse_page(page.read_text(encoding="utf-8"))
                self.assertEqual(p.errors, [])
                self.assertEqual(p.stack, [])

    def test_an_image_per_family_plot(self) -> None:
        for plots in FAMILY_PLOTS.values():
            for name in plots:
                self.assertIn(f"plot-{name.removesuffix('.png')}", self.parsed.figure_ids)
        for src in self.parsed.imgs:
            self.assertTrue(src.startswith("data:image/png;base64,"))
        self.assertNotIn("bandwidth_h2d.png", self.page)  # no note per copy plot: no result has copy cases

    def test_links_every_trace_and_embeds_its_gantt_chart(self) -> None:
        self.assertIn("timelines", self.parsed.section_ids)
        section = self.page.split('<section id="timelines">', 1)[1].split("</section>", 1)[0]
        r = load(family("h200-overlap.json"))
        traces = [h for h in self.parsed.hrefs if h.endswith(".trace.json")]
        self.assertEqual(len(traces), len(r["cases"]))
        for c in r["cases"]:
            name = Path(c["timeline"]).name
            with self.subTest(case=c["id"]):
                href = next(h for h in traces if h.endswith(name))
                self.assertFalse(re.match(r"(?i)(https?:|file:|/)", href), href)  # relative to the page
                target = (WORK / "site" / urllib.parse.unquote(href)).resolve()
                self.assertEqual(target, (family("h200-overlap.json.timelines") / name).resolve())
                figure = f'<figure id="plot-gantt_r1_{name.removesuffix(".json").removesuffix(".trace")}"><img src='
                self.assertTrue(figure + '"data:image/png;base64,' in section, f"no {figure}… in the timelines section")
        self.assertEqual(section.count("<img "), len(r["cases"]))
        self.assertIn('<a href="#timelines">timelines</a>', self.page)

    def test_several_results_are_named_by_file(self) -> None:
        text = "".join(self.parsed.texts)
        self.assertIn("results", self.parsed.section_ids)
        for i, n in enumerate(FAMILY_FIXTURES):
            self.assertIn(f"[{i + 1}] {n} (vm)", text)
        every = {c["id"] for n in FAMILY_FIXTURES for c in load(family(n))["cases"]}
        self.assertEqual(every - self.parsed.ids, set(), "case ids not in the page")
        two = (WORK / "two.html").read_text(encoding="utf-8")
        p = parse_page(two)
        head = two.split('<section id="cases">', 1)[1].split("</thead>", 1)[0]
        self.assertIn("[1] h200-default.json (vm)", head)
        self.assertIn("[2] h200-copy-hugetlb.json (vm)", head)
        self.assertIn("verdicts", p.section_ids)
        self.assertIn("not in this file", two)
        self.assertRegex(p.texts and "".join(p.texts) or "", r"pathbench report: 2 results")

    def test_missing_traces_are_said(self) -> None:
        page = (WORK / "elsewhere.html").read_text(encoding="utf-8")
        words = "".join(parse_page(page).texts)
        self.assertEqual(words.count("not found (looked as recorded"), 3)
        self.assertIn("trace cannot be drawn", words)

    def test_bad_second_result_writes_nothing(self) -> None:
        d = WORK / "bad-html-several"
        d.mkdir(exist_ok=True)
        broken = write_json(d / "broken.json", dict(load(family("h200-small-copies.json")), cases={}))
        proc = html_py(family("h200-overlap.json"), broken, "--out", d / "x.html")
        self.assertEqual(proc.returncode, EXIT_BAD_INPUT, proc.stderr)
        self.assertIn(f"html.py: error: {broken}: /cases", proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)
        self.assertFalse((d / "x.html").exists())

    def test_chromium_renders_the_families_page(self) -> None:
        shot = WORK / "families-screenshot.png"
        s = self.screenshot(WORK / "site" / "families.html", shot, 4000)
        self.assertGreater(s["std"], 10.0, s)
        self.assertGreaterEqual(s["colors"], 32, s)
        self.assertGreater(s["non_background"], 0.05, s)
        self.assertTrue(all(abs(a - b) <= 12 for a, b in zip(s["top_left"], (0x1d, 0x23, 0x30))), s)


def main() -> int:
    global PYTHON, SOURCE, CHROMIUM, PATHBENCH
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", required=True, help="interpreter with reports/requirements.txt installed")
    parser.add_argument("--source", required=True, type=Path, help="the pathbench source tree")
    parser.add_argument("--chromium", help="headless Chromium binary (default: chromium on PATH)")
    parser.add_argument("--pathbench", help="the pathbench binary: checks that it accepts the report fixtures")
    args, rest = parser.parse_known_args()
    PATHBENCH = args.pathbench
    if PATHBENCH:
        # The scripts read pathbench's files through this binary (reports/lib/pathbench_reader.py).
        os.environ["PATHBENCH"] = str(Path(PATHBENCH).resolve())
    PYTHON = args.python
    SOURCE = args.source.resolve()
    CHROMIUM = args.chromium
    program = unittest.main(argv=[sys.argv[0], *rest], exit=False, verbosity=2)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
