#!/usr/bin/env python3
"""scripts/reference/fio_storage.sh on a small file in a temporary folder on disk (CPU only).

    python3 tests/e2e/test_fio_reference.py --pathbench build/release/pathbench --source .

Bad input exits 3 naming the option (no folder, a tmpfs folder, a bad size, engine or loop count,
an unknown argument, fio missing), --help prints the usage; with fio installed, a 4 MiB file is
read at queue depths 1, 4, 16 and block sizes 128k, 1m: one line per setting, a JSON summary with
a positive rate for each, the test file removed. --with-pathbench runs the real binary (without a
GPU its queue_depth cases skip: the summary says so with pathbench's reason) and a stand-in
binary whose result holds known medians: one run per setting right after fio's, the ratio
printed and recorded is pathbench / fio, each tool's best setting; --rounds 2 alternates the
tools twice and compares medians over the rounds.
Exits 77 (CTest SKIP_RETURN_CODE) after the checks that need no fio when fio is not installed
(scripts/setup.sh --test-deps installs it). Standard library only.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

import harness

PATHBENCH: Path = Path("pathbench")
SOURCE: Path = Path(".")
EXIT_SKIP = 77
EXIT_BAD_INPUT = 3
SETTINGS = [(qd, bs) for qd in (1, 4, 16) for bs in (128 * 1024, 1024 * 1024)]
HAVE_FIO = shutil.which("fio") is not None


def script() -> Path:
    return SOURCE / "scripts" / "reference" / "fio_storage.sh"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(script()), *args], capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})})


def fs_type(folder: Path) -> str:
    return subprocess.run(["stat", "-f", "-c", "%T", str(folder)], capture_output=True,
                          text=True, check=True).stdout.strip()


def disk_folder() -> tempfile.TemporaryDirectory[str]:
    """A temporary folder on a file system with O_DIRECT: TMPDIR, else the working directory."""
    folder = tempfile.TemporaryDirectory(prefix="pathbench_fio_")
    if fs_type(Path(folder.name)) not in ("tmpfs", "ramfs"):
        return folder
    folder.cleanup()
    return tempfile.TemporaryDirectory(prefix="pathbench_fio_", dir=os.getcwd())


class BadInput(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = disk_folder()
        self.dir = self.tmp.name

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def refused(self, *args: str, env: dict[str, str] | None = None) -> str:
        out = run(*args, env=env)
        self.assertEqual(out.returncode, EXIT_BAD_INPUT, out.stdout + out.stderr)
        self.assertIn("fio_storage.sh: ", out.stderr)
        return out.stderr

    def test_help(self) -> None:
        out = run("--help")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("--storage-dir DIR", out.stdout)
        self.assertIn("--with-pathbench", out.stdout)

    def test_each_bad_value_is_named(self) -> None:
        self.assertIn("--storage-dir is required", self.refused())
        self.assertIn("is not a folder", self.refused("--storage-dir", self.dir + "/absent"))
        self.assertIn("unknown argument '--depth'", self.refused("--storage-dir", self.dir,
                                                                 "--depth", "4"))
        self.assertIn("--size '4X'", self.refused("--storage-dir", self.dir, "--size", "4X"))
        self.assertIn("--size '0'", self.refused("--storage-dir", self.dir, "--size", "0"))
        self.assertIn("under 1M", self.refused("--storage-dir", self.dir, "--size", "512K"))
        self.assertIn("not a multiple of 4096",
                      self.refused("--storage-dir", self.dir, "--size", "1048577"))
        self.assertIn("--ioengine 'posixaio'",
                      self.refused("--storage-dir", self.dir, "--ioengine", "posixaio"))
        self.assertIn("--loops '0'", self.refused("--storage-dir", self.dir, "--loops", "0"))
        self.assertIn("--rounds '100'",
                      self.refused("--storage-dir", self.dir, "--rounds", "100"))
        self.assertIn("--rounds 'x'", self.refused("--storage-dir", self.dir, "--rounds", "x"))
        self.assertIn("--size needs a value", self.refused("--storage-dir", self.dir, "--size"))
        self.assertIn("is not a regular file",
                      self.refused("--storage-dir", self.dir, "--out", self.dir))
        self.assertIn("is not installed", self.refused("--storage-dir", self.dir,
                                                       env={"FIO": "/nonexistent/fio"}))
        self.assertEqual(os.listdir(self.dir), [], "bad input leaves nothing behind")

    def test_a_memory_file_system_is_refused(self) -> None:
        shm = Path("/dev/shm")
        if not shm.is_dir() or fs_type(shm) != "tmpfs" or not os.access(shm, os.W_OK):
            self.skipTest("no writable tmpfs at /dev/shm")
        self.assertIn("keeps files in memory", self.refused("--storage-dir", str(shm)))


@unittest.skipUnless(HAVE_FIO, "fio is not installed")
class Measures(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = disk_folder()
        self.dir = Path(self.tmp.name) / "storage"
        self.dir.mkdir()
        self.summary = Path(self.tmp.name) / "summary.json"

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def measure(self, *extra: str, env: dict[str, str] | None = None) -> tuple[str, dict]:
        out = run("--storage-dir", str(self.dir), "--size", "4M", "--loops", "1",
                  "--out", str(self.summary), *extra, env=env)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertEqual(list(self.dir.iterdir()), [], "the test file is removed")
        return out.stdout, json.loads(self.summary.read_text())

    def test_every_setting_is_read_and_summarised(self) -> None:
        stdout, summary = self.measure()
        lines = [line.split() for line in stdout.splitlines() if line.startswith("qd ")]
        self.assertEqual([(int(f[1]), f[3]) for f in lines],
                         [(qd, bs) for qd in (1, 4, 16) for bs in ("128k", "1m")])
        for f in lines:
            self.assertEqual(f[4], "GB/s")
            self.assertGreater(float(f[5]), 0.0)
        self.assertEqual(summary["schema"], "pathbench.fio_storage_reference/v1")
        self.assertEqual(summary["file_bytes"], 4 * 1024 * 1024)
        self.assertEqual(summary["ioengine"], "libaio")
        self.assertTrue(summary["fio_version"].startswith("fio-"), summary["fio_version"])
        self.assertEqual([(s["queue_depth"], s["block_size"]) for s in summary["settings"]],
                         SETTINGS)
        for s in summary["settings"]:
            self.assertGreater(s["fio_gb_per_s"], 0.0)
            self.assertNotIn("pathbench", s)

    def test_the_real_binary_without_a_gpu_skips_and_says_why(self) -> None:
        stdout, summary = self.measure("--with-pathbench", env={"PATHBENCH": str(PATHBENCH)})
        for s in summary["settings"]:
            pb = s["pathbench"]
            if pb["status"] == "ok":  # a GPU machine
                self.assertGreater(pb["gb_per_s"], 0.0)
                continue
            self.assertEqual(pb["status"], "skipped", pb)
            self.assertIn(f"queue_depth={s['queue_depth']}", pb["id"])
            self.assertNotEqual(pb["reason"], "")
        self.assertIn("pathbench GB/s", stdout)

    def fake_pathbench(self) -> Path:
        """A stand-in binary: run with one setting's filter, its result holds that case with a
        known median (qd * 0.5 GB/s, + 0.1 in the second round), the qd 16 / 1 MiB case failed.
        Each call is logged, so the test sees the order of the fio and pathbench runs."""
        fake = Path(self.tmp.name) / "fake-pathbench"
        self.calls = Path(self.tmp.name) / "calls.log"
        fake.write_text(textwrap.dedent(f"""\
            #!/usr/bin/env python3
            import json, re, sys
            args = sys.argv[1:]
            assert args[0] == "run" and args[1].endswith("scenarios/storage.json"), args
            pattern = args[args.index("--filter") + 1]
            out = args[args.index("--out") + 1]
            with open({str(self.calls)!r}, "a") as log:
                log.write(pattern + "\\n")
            calls = open({str(self.calls)!r}).read().splitlines()
            second_round = calls.count(pattern) == 2
            cases = []
            for qd in (1, 4, 16):
                for chunk in (131072, 1048576):
                    case_id = ("storage/method=odirect_pinned/bytes=1073741824/cache=cold/"
                               f"chunk={{chunk}}/queue_depth={{qd}}")
                    if not re.search(pattern, case_id):
                        continue
                    if (qd, chunk) == (16, 1048576):
                        cases.append({{"id": case_id, "status": "failed",
                                      "params": {{"chunk": chunk, "queue_depth": qd}},
                                      "reason": "copy_pattern: byte 7 differs"}})
                        continue
                    median = qd * 0.5 + (0.1 if second_round else 0.0)
                    cases.append({{"id": case_id, "params": {{"chunk": chunk, "queue_depth": qd}},
                                  "status": "ok", "reason": "",
                                  "metrics": {{"throughput": {{"stats": {{"median": median}}}}}}}})
            json.dump({{"schema": "pathbench.result/v1", "cases": cases}}, open(out, "w"))
            sys.exit(2 if any(c["status"] == "failed" for c in cases) else 0)
            """))
        fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
        return fake

    def test_pathbench_figures_stand_beside_fio_with_the_ratio(self) -> None:
        fake = self.fake_pathbench()
        stdout, summary = self.measure("--with-pathbench", env={"PATHBENCH": str(fake)})
        # One pathbench run per setting, right after fio's, each filtered to that case alone.
        self.assertEqual(self.calls.read_text().splitlines(),
                         [f"/chunk={bs}/queue_depth={qd}$" for qd, bs in SETTINGS])
        lines = stdout.splitlines()
        first = lines.index(next(line for line in lines if line.startswith("qd   1 bs  128k")))
        self.assertTrue(lines[first + 1].startswith("  pathbench GB/s 0.500"), lines[first + 1])
        for s in summary["settings"]:
            pb = s["pathbench"]
            if (s["queue_depth"], s["block_size"]) == (16, 1024 * 1024):
                self.assertEqual(pb["status"], "failed")
                self.assertEqual(pb["reason"], "copy_pattern: byte 7 differs")
                continue
            self.assertEqual(pb["status"], "ok")
            self.assertAlmostEqual(pb["gb_per_s"], s["queue_depth"] * 0.5)
            self.assertAlmostEqual(pb["ratio"], pb["gb_per_s"] / s["fio_gb_per_s"])
        self.assertIn("failed: copy_pattern: byte 7 differs", stdout)
        best = summary["best"]
        self.assertAlmostEqual(best["pathbench_gb_per_s"], 8.0)  # qd 16, 128 KiB
        self.assertEqual(best["pathbench_setting"], {"queue_depth": 16, "block_size": 131072})
        fastest = max(summary["settings"], key=lambda s: s["fio_gb_per_s"])
        self.assertAlmostEqual(best["fio_gb_per_s"], fastest["fio_gb_per_s"])
        self.assertAlmostEqual(best["ratio"], 8.0 / fastest["fio_gb_per_s"])
        self.assertIn("best: fio ", stdout)
        kept = json.loads(self.summary.with_suffix(".pathbench.json").read_text())
        self.assertEqual(len(kept["cases"]), 6, "pathbench's results are kept beside the summary")

    def test_rounds_alternate_the_tools_and_compare_medians(self) -> None:
        fake = self.fake_pathbench()
        stdout, summary = self.measure("--with-pathbench", "--rounds", "2",
                                       env={"PATHBENCH": str(fake)})
        self.assertEqual(summary["rounds"], 2)
        self.assertEqual(len(self.calls.read_text().splitlines()), 2 * len(SETTINGS))
        self.assertEqual(sum(line.startswith("qd ") for line in stdout.splitlines()),
                         2 * len(SETTINGS))
        for s in summary["settings"]:
            self.assertEqual(len(s["fio_rounds"]), 2)
            self.assertAlmostEqual(s["fio_gb_per_s"], sum(s["fio_rounds"]) / 2)  # median of 2
            pb = s["pathbench"]
            if pb["status"] != "ok":
                continue
            self.assertEqual(len(pb["rounds"]), 2)
            self.assertAlmostEqual(pb["gb_per_s"], s["queue_depth"] * 0.5 + 0.05)
        self.assertIn("(medians of 2 rounds)", stdout)
        for name in (".pathbench.json", ".pathbench.round2.json"):
            kept = json.loads(Path(str(self.summary)[:-5] + name).read_text())
            self.assertEqual(len(kept["cases"]), 6, name)


def main() -> int:
    global PATHBENCH, SOURCE
    PATHBENCH, SOURCE, rest = harness.parse_binary_args((__doc__ or "").splitlines()[0])
    status = harness.run_unittests(rest)
    if status == 0 and not HAVE_FIO:
        print("SKIPPED (in part): fio is not installed, so nothing was measured; install the "
              "Debian package fio (scripts/setup.sh --test-deps installs it)")
        return EXIT_SKIP
    return status


if __name__ == "__main__":
    sys.exit(main())
