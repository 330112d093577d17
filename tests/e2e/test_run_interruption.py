#!/usr/bin/env python3
"""A run that is stopped keeps what it finished: SIGKILL at random moments, SIGINT/SIGTERM/SIGHUP,
a second run on the same output, a full disk — the real binary on a host-only scenario.

    python3 tests/e2e/test_run_interruption.py --pathbench build/pathbench --source . [unittest args]

The promise under test (README "Interrupted runs"): a run killed at any moment leaves a valid
result that, read by pathbench (which folds the run's journal in), holds every case the run
reported finished; the next write of the same output removes a killed writer's temporary files;
--resume finishes the run with every case exactly once.
"""
from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

import harness

PATHBENCH: Path = Path("pathbench")
SOURCE: Path = Path(".")

EXIT_INCOMPLETE = 2
EXIT_BAD_INPUT = 3
KILLS = 24
FINISHED_LINE = re.compile(r"^pathbench: \[\d+/\d+\] (\S+): (ok|skipped|failed) \(")

# Thirty small host-only cases, about a tenth of a second each.
SIZES = [f"{k}KiB" for k in range(64, 64 * 31, 64)]
SCENARIO = {
    "schema": "pathbench.scenario/v1",
    "description": "e2e: many short host-only cases to interrupt",
    "scenarios": [{
        "name": "interrupt-me",
        "family": "host_memory",
        "repetitions": 3,
        "min_time": 0.02,
        "axes": {"measure": ["memcpy"], "page": ["4k"], "bytes": SIZES},
    }],
}


def case_ids_via_pathbench(result: Path) -> list[str]:
    """The case ids pathbench itself reads from the result (journal folded in), via export."""
    proc = subprocess.run([str(PATHBENCH), "export", "--prometheus", "-", str(result)],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise AssertionError(f"export of {result} failed ({proc.returncode}): {proc.stderr}")
    ids = re.findall(r'^pathbench_case_status\{[^}]*\bid="([^"]+)"', proc.stdout, re.M)
    return ids


def leftovers(directory: Path, name: str) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(f".{name}.tmp-"))


class RunInterruption(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="pathbench_interrupt_")
        self.dir = Path(self.tmp.name)
        self.scenario = self.dir / "interrupt.json"
        self.scenario.write_text(json.dumps(SCENARIO))
        self.out = self.dir / "run.json"

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def start(self, *extra: str, out: Path | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(PATHBENCH), "run", str(self.scenario), "--out", str(out or self.out), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def wait_for_first_case(self, proc: subprocess.Popen[str]) -> list[str]:
        """Reads stderr until the first case is reported finished; returns the lines read."""
        assert proc.stderr is not None
        lines: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            if FINISHED_LINE.match(line):
                return lines
        self.fail("the run reported no finished case: " + "".join(lines))

    def test_sigkill_at_random_moments_loses_no_reported_case(self) -> None:
        t0 = time.monotonic()
        full = subprocess.run([str(PATHBENCH), "run", str(self.scenario), "--out",
                               str(self.dir / "reference.json")],
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(full.returncode, 0, full.stderr)
        duration = time.monotonic() - t0
        planned = set(json.loads((self.dir / "reference.json").read_text())["cases"][i]["id"]
                      for i in range(len(SIZES)))
        self.assertEqual(len(planned), len(SIZES))

        rng = random.Random(20261201)
        killed_mid_run = 0
        killed: set[int] = set()  # writers killed since the last one that saved
        attempt = -1
        while killed_mid_run < KILLS and attempt < 4 * KILLS:
            attempt += 1
            resume = attempt > 0 and self.out.exists()
            before = self.out.read_bytes() if self.out.exists() else None
            proc = subprocess.Popen(
                [str(PATHBENCH), "run", str(self.scenario), "--out", str(self.out)]
                + (["--resume"] if resume else []),
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(rng.uniform(0, duration * (0.5 if resume else 1.0)))
            proc.send_signal(signal.SIGKILL)
            _, err = proc.communicate(timeout=60)
            killed.add(proc.pid)
            reported = {m.group(1) for line in err.splitlines() if (m := FINISHED_LINE.match(line))}
            if proc.returncode != -signal.SIGKILL:
                # It finished (or refused to resume a finished run) before the kill came.
                if self.out.exists() and json.loads(self.out.read_text()).get("complete"):
                    self.out.unlink()
                continue
            if not self.out.exists():
                self.assertFalse(reported, "cases were reported finished but no result exists")
                killed_mid_run += 1
                continue
            doc = json.loads(self.out.read_text())  # valid JSON at every moment
            self.assertEqual(doc["schema"], "pathbench.result/v1")
            if doc["complete"]:
                # Killed after its final save: a finished run, every case there.
                self.assertEqual(len(doc["cases"]), len(SIZES))
                self.out.unlink()
                continue
            killed_mid_run += 1
            ids = case_ids_via_pathbench(self.out)
            self.assertEqual(len(ids), len(set(ids)), f"a case twice after kill {attempt}: {ids}")
            missing = reported - set(ids)
            self.assertFalse(missing, f"kill {attempt}: reported finished but lost: {missing}")
            # A killed writer's temporary file may remain. A process that saved removed every
            # earlier one first, so then only its own can be left; one killed before its first
            # save (still reading the inventory) removed nothing, and earlier killed writers'
            # files may remain beside its own.
            saved = self.out.read_bytes() != before
            allowed = {proc.pid} if saved else killed
            for name in leftovers(self.dir, self.out.name):
                self.assertTrue(any(f"-{pid}." in name for pid in allowed),
                                f"a leftover of an earlier writer survived a save: {name}")
            if saved:
                killed = {proc.pid}
        self.assertEqual(killed_mid_run, KILLS, "too few kills landed inside a run")

        # The next write removes a killed writer's leftovers, and --resume completes the run.
        final = subprocess.run(
            [str(PATHBENCH), "run", str(self.scenario), "--out", str(self.out)]
            + (["--resume"] if self.out.exists() else []),
            capture_output=True, text=True, timeout=300)
        self.assertEqual(final.returncode, 0, final.stderr)
        doc = json.loads(self.out.read_text())
        self.assertIs(doc["complete"], True)
        ids = [c["id"] for c in doc["cases"]]
        self.assertEqual(sorted(ids), sorted(planned), "every case exactly once after resuming")
        self.assertEqual(leftovers(self.dir, self.out.name), [])
        self.assertFalse((self.dir / f".{self.out.name}.journal").exists())

    def stop_with(self, sig: signal.Signals) -> None:
        out = self.dir / f"stopped-{sig.name}.json"
        proc = self.start(out=out)
        self.wait_for_first_case(proc)
        t0 = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        self.assertLess(time.monotonic() - t0, 10, "a stop must not wait for the whole run")
        self.assertEqual(proc.returncode, EXIT_INCOMPLETE, err)
        self.assertIn(f"interrupted by {sig.name}", err)
        self.assertIn(str(out), err, "the message says where the partial result is")
        self.assertIn("--resume", err)
        doc = json.loads(out.read_text())
        self.assertIs(doc["complete"], False)
        self.assertEqual(doc["incomplete_reason"], f"interrupted by {sig.name}")
        self.assertTrue(doc["context"]["end_time"], "an interrupted run has an end time")
        self.assertGreaterEqual(len(doc["cases"]), 1)
        self.assertLess(len(doc["cases"]), len(SIZES))
        for c in doc["cases"]:
            if c["status"] == "failed":
                self.assertTrue(c["reason"].startswith(f"interrupted by {sig.name}"), c["reason"])
        self.assertFalse((self.dir / f".{out.name}.journal").exists(), "the journal was folded")
        self.assertEqual(leftovers(self.dir, out.name), [])

        # Every consumer says so.
        export = subprocess.run([str(PATHBENCH), "export", "--prometheus", "-", str(out)],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(export.returncode, 0, export.stderr)
        self.assertRegex(export.stdout, r"(?m)^pathbench_result_complete\{.*\} 0$")
        self.assertIn("incomplete", export.stderr)
        promote = subprocess.run([str(PATHBENCH), "baseline", "promote", str(out), "--dir",
                                  str(self.dir / "baselines")],
                                 capture_output=True, text=True, timeout=60)
        self.assertEqual(promote.returncode, EXIT_BAD_INPUT, promote.stderr)
        self.assertIn("/complete", promote.stderr)
        self.assertFalse((self.dir / "baselines").exists() and any((self.dir / "baselines").iterdir()))
        compare = subprocess.run([str(PATHBENCH), "compare", str(out), str(out)],
                                 capture_output=True, text=True, timeout=60)
        self.assertEqual(compare.returncode, EXIT_INCOMPLETE, compare.stdout + compare.stderr)
        self.assertIn("incomplete", compare.stdout)

        # And the run can be finished where it stopped.
        resumed = subprocess.run([str(PATHBENCH), "run", str(self.scenario), "--out", str(out),
                                  "--resume"], capture_output=True, text=True, timeout=300)
        self.assertEqual(resumed.returncode, 0, resumed.stderr)
        doc = json.loads(out.read_text())
        self.assertIs(doc["complete"], True)
        self.assertEqual(len(doc["cases"]), len(SIZES))
        self.assertTrue(all(c["status"] == "ok" for c in doc["cases"]), "interrupted cases re-ran")

    def test_sigint(self) -> None:
        self.stop_with(signal.SIGINT)

    def test_sigterm(self) -> None:
        self.stop_with(signal.SIGTERM)

    def test_sighup(self) -> None:
        self.stop_with(signal.SIGHUP)

    def test_a_second_run_on_the_same_output_is_refused_naming_the_first(self) -> None:
        # Long enough (about 20 s) that the first run is still measuring when the second starts.
        first = self.start("--repetitions", "30")
        self.wait_for_first_case(first)
        second = subprocess.run([str(PATHBENCH), "run", str(self.scenario), "--out", str(self.out)],
                                capture_output=True, text=True, timeout=60)
        self.assertIsNone(first.poll(), "the first run ended too soon for this test")
        self.assertEqual(second.returncode, EXIT_BAD_INPUT, second.stderr)
        self.assertIn(f"PID {first.pid}", second.stderr)
        self.assertIn(str(self.out), second.stderr)
        first.send_signal(signal.SIGTERM)
        _, err = first.communicate(timeout=60)
        self.assertEqual(first.returncode, EXIT_INCOMPLETE, err)
        doc = json.loads(self.out.read_text())
        self.assertEqual(doc["incomplete_reason"], "interrupted by SIGTERM")
        self.assertGreaterEqual(len(doc["cases"]), 1, "the first run's cases are intact")
        self.assertEqual(doc["cases"][0]["status"], "ok")

    def test_resume_refuses_a_finished_run_and_changed_scenarios(self) -> None:
        done = subprocess.run([str(PATHBENCH), "run", str(self.scenario), "--out", str(self.out),
                               "--filter", "bytes=65536$"], capture_output=True, text=True,
                              timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        before = self.out.read_bytes()
        again = subprocess.run([str(PATHBENCH), "run", str(self.scenario), "--out", str(self.out),
                                "--resume"], capture_output=True, text=True, timeout=60)
        self.assertEqual(again.returncode, EXIT_BAD_INPUT, again.stderr)
        self.assertIn("/complete", again.stderr)
        self.assertEqual(self.out.read_bytes(), before, "a refused resume writes nothing")
        no_out = subprocess.run([str(PATHBENCH), "run", str(self.scenario), "--resume"],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(no_out.returncode, EXIT_BAD_INPUT)
        self.assertIn("--out", no_out.stderr)

    def test_a_full_disk_is_incomplete_not_bad_input(self) -> None:
        mount_point = self.dir / "full"
        mount_point.mkdir()
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs",
                                  str(mount_point)], capture_output=True, text=True)
        if mounted.returncode != 0:
            self.skipTest(f"cannot mount a small tmpfs here ({mounted.stderr.strip()})")
        try:
            # Fill it, so the first save of the result cannot be written.
            fd = os.open(mount_point / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
            try:
                while True:
                    os.write(fd, b"\0" * 4096)
            except OSError:
                pass
            finally:
                os.close(fd)
            out = mount_point / "run.json"
            proc = subprocess.run([str(PATHBENCH), "run", str(self.scenario), "--out", str(out)],
                                  capture_output=True, text=True, timeout=120)
            self.assertEqual(proc.returncode, EXIT_INCOMPLETE, proc.stderr)
            self.assertIn(str(mount_point), proc.stderr, "the message names the path")
            self.assertIn("No space left on device", proc.stderr)
            self.assertNotIn("Traceback", proc.stderr)
            self.assertEqual(leftovers(mount_point, "run.json"), [], "no temporary file stays")
        finally:
            subprocess.run(["umount", str(mount_point)], capture_output=True)


def main() -> int:
    global PATHBENCH, SOURCE
    PATHBENCH, SOURCE, rest = harness.parse_binary_args(__doc__ or "")
    return harness.run_unittests(rest)


if __name__ == "__main__":
    sys.exit(main())
