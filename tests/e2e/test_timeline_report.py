#!/usr/bin/env python3
"""End-to-end tests of reports/timeline.py (Gantt chart of a pathbench Chrome trace).

    python3 tests/e2e/test_timeline_report.py --python build/venv/bin/python --source . [unittest args]

--python is the interpreter with the pinned report requirements (reports/requirements.txt); the
script and a small image-checking helper run under it, while this file only needs the standard
library. Input: tests/fixtures/timelines/overlap_event_wait.trace.json, which the C++ writer
(chrome_trace in src/timeline) produced from fixture overlap_event_wait.json; the unit test
TimelineChromeTrace.CommittedTraceFixtureIsCurrent keeps it current (PATHBENCH_WRITE_FIXTURES=1
rewrites it). Traces derived from it here cover the bare-array form and broken inputs.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Any

PYTHON: str = "python3"
SOURCE: Path = Path(".")

EXIT_OK = 0
EXIT_BAD_INPUT = 3
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MIN_WIDTH, MIN_HEIGHT = 400, 300
HTOD_RGB = (0x1F, 0x77, 0xB4)
KERNEL_RGB = (0xD6, 0x27, 0x28)

# Runs under --python: size, pixel spread and how many pixels carry the HtoD and kernel colours.
IMAGE_STATS = r"""
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.image as mpimg
import numpy as np
a = mpimg.imread(sys.argv[1])
if a.dtype != np.uint8:
    a = (np.clip(a, 0, 1) * 255).round().astype(np.uint8)
rgb = a[..., :3].reshape(-1, 3).astype(np.int32)
def count(c):
    return int(np.all(np.abs(rgb - np.array(c)) <= 2, axis=1).sum())
print(json.dumps({
    "height": int(a.shape[0]), "width": int(a.shape[1]),
    "variance": float(rgb.var()),
    "colors": int(len(np.unique((rgb[:, 0] << 16) | (rgb[:, 1] << 8) | rgb[:, 2]))),
    "htod_pixels": count(json.loads(sys.argv[2])),
    "kernel_pixels": count(json.loads(sys.argv[3])),
}))
"""


def trace_fixture() -> Path:
    return SOURCE / "tests" / "fixtures" / "timelines" / "overlap_event_wait.trace.json"


# One matplotlib config/cache directory for every script this test starts, removed at exit.
MPL_CONFIG = tempfile.TemporaryDirectory(prefix="pathbench-mpl-")


def run(args: list[str], timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1")
    env.setdefault("MPLCONFIGDIR", MPL_CONFIG.name)
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)


def timeline_py(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run([PYTHON, str(SOURCE / "reports" / "timeline.py"), *map(str, args)])


def image_stats(png: Path) -> dict[str, Any]:
    p = run([PYTHON, "-c", IMAGE_STATS, str(png), json.dumps(HTOD_RGB), json.dumps(KERNEL_RGB)])
    if p.returncode != 0:
        raise AssertionError(f"image helper failed: {p.stderr}")
    return json.loads(p.stdout)


class TimelineReportTest(unittest.TestCase):
    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="pathbench-timeline-")
        self.tmp = Path(self._tmp.name)

    def tearDown(self) -> None:
        self._tmp.cleanup()

    def write(self, name: str, content: Any) -> Path:
        path = self.tmp / name
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
        return path

    def trace(self) -> dict[str, Any]:
        return json.loads(trace_fixture().read_text(encoding="utf-8"))

    def assert_chart(self, png: Path) -> dict[str, Any]:
        self.assertEqual(png.read_bytes()[:8], PNG_SIGNATURE, png)
        s = image_stats(png)
        self.assertGreaterEqual(s["width"], MIN_WIDTH, s)
        self.assertGreaterEqual(s["height"], MIN_HEIGHT, s)
        self.assertGreater(s["variance"], 0.0, s)
        self.assertGreater(s["colors"], 10, s)
        return s

    def test_fixture_is_the_overlap_trace(self) -> None:
        """The committed trace is what chrome_trace wrote for fixture (a): a 4.8 ms copy on stream 14."""
        t = self.trace()
        copies = [e for e in t["traceEvents"] if e.get("cat") == "copy"]
        self.assertEqual(len(copies), 1)
        self.assertEqual(copies[0]["dur"], 4800.0)
        self.assertEqual(copies[0]["tid"], 14)
        self.assertEqual(t["displayTimeUnit"], "ns")

    def test_gantt_of_the_overlap_trace(self) -> None:
        out = self.tmp / "sub" / "overlap.png"  # the folder is created
        p = timeline_py(trace_fixture(), "--out", out)
        self.assertEqual(p.returncode, EXIT_OK, p.stderr)
        self.assertEqual(p.stdout.strip(), str(out))
        s = self.assert_chart(out)
        # The 4.8 ms copy and the 10 ms kernel are drawn in their kinds' colours, the kernel
        # about twice as wide as the copy.
        self.assertGreater(s["htod_pixels"], 2000, s)
        self.assertGreater(s["kernel_pixels"], s["htod_pixels"] * 1.5, s)
        self.assertEqual([f.name for f in out.parent.iterdir()], ["overlap.png"])  # no temp file left

    def test_title_and_bare_event_array(self) -> None:
        bare = self.write("bare.json", self.trace()["traceEvents"])
        out = self.tmp / "bare.png"
        p = timeline_py(bare, "--out", out, "--title", "H200 overlap \u2014 event wait")
        self.assertEqual(p.returncode, EXIT_OK, p.stderr)
        self.assert_chart(out)

    def test_dropped_records_and_many_streams(self) -> None:
        t = self.trace()
        t["otherData"]["dropped_records"] = 12
        extra = []
        for stream in range(20, 28):
            extra.append({"name": "DtoH 64 KiB (device\u2192pinned)", "cat": "copy", "ph": "X",
                          "ts": 200.0 + stream, "dur": 1.4, "pid": 0, "tid": stream,
                          "args": {"copy_kind": "DtoH"}})
            extra.append({"name": "memset 1 MiB", "cat": "memset", "ph": "X", "ts": 300.0, "dur": 20.0,
                          "pid": 1, "tid": stream, "args": {}})
        t["traceEvents"].extend(extra)
        out = self.tmp / "many.png"
        p = timeline_py(self.write("many.json", t), "--out", out)
        self.assertEqual(p.returncode, EXIT_OK, p.stderr)
        self.assert_chart(out)

    def test_bad_input_exits_3(self) -> None:
        good = self.trace()
        bad_ts = copy.deepcopy(good)
        copy_index = next(i for i, e in enumerate(bad_ts["traceEvents"]) if e.get("cat") == "copy")
        bad_ts["traceEvents"][copy_index]["ts"] = "1300"
        bad_dur = copy.deepcopy(good)
        bad_dur["traceEvents"][copy_index]["dur"] = -1
        cases: dict[str, tuple[Path, str]] = {
            "missing file": (self.tmp / "absent.json", "cannot read"),
            # Read by the binary (reports/lib/pathbench_reader.py), refused in its words.
            "not JSON": (self.write("garbage.json", "{\"traceEvents\": [\n"), "not valid JSON"),
            "no traceEvents": (self.write("result.json", {"schema": "pathbench.result/v1"}),
                               "/traceEvents: missing"),
            "traceEvents not a list": (self.write("obj.json", {"traceEvents": {}}), "/traceEvents"),
            "string ts": (self.write("ts.json", bad_ts), f"/traceEvents/{copy_index}/ts"),
            "negative dur": (self.write("dur.json", bad_dur), f"/traceEvents/{copy_index}/dur"),
            "nothing to draw": (self.write("empty.json", {
                "traceEvents": [], "otherData": {"unavailable_reason": "CUPTI: no permission"}}),
                "CUPTI: no permission"),
            "binary": (self._binary(), "not valid JSON"),
        }
        for what, (path, message) in cases.items():
            with self.subTest(what):
                out = self.tmp / f"{path.stem}.png"
                p = timeline_py(path, "--out", out)
                self.assertEqual(p.returncode, EXIT_BAD_INPUT, (p.stdout, p.stderr))
                self.assertIn(message, p.stderr)
                self.assertIn(str(path), p.stderr)
                self.assertNotIn("Traceback", p.stderr)
                self.assertFalse(out.exists())

    def _binary(self) -> Path:
        path = self.tmp / "binary.json"
        path.write_bytes(b"\xff\xfe\x00garbage")
        return path

    def test_usage_errors_exit_3(self) -> None:
        p = timeline_py(trace_fixture())  # no --out
        self.assertEqual(p.returncode, EXIT_BAD_INPUT)
        self.assertIn("--out", p.stderr)
        p = timeline_py("--help")
        self.assertEqual(p.returncode, EXIT_OK)
        self.assertIn("Gantt", p.stdout)


def main() -> int:
    global PYTHON, SOURCE
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", required=True, help="interpreter with reports/requirements.txt installed")
    parser.add_argument("--source", required=True, type=Path, help="the pathbench source tree")
    args, rest = parser.parse_known_args()
    PYTHON = args.python
    SOURCE = args.source.resolve()
    program = unittest.main(argv=[sys.argv[0], *rest], exit=False, verbosity=2)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
