#!/usr/bin/env python3
"""scripts/reference/fio_storage.sh on a small file in a temporary folder on disk (CPU only).

    python3 tests/e2e/test_fio_reference.py --pathbench build/release/pathbench --source .

Bad input exits 3 naming the option (no folder, a tmpfs folder, a bad size, engine, model list,
buffer list, loop count, queue depths, block sizes, staging memories or readers, an unknown
argument, fio missing, --buffers huge without reserved huge pages, with --with-pathbench a depth
above the file's chunk count), --help prints the usage; with fio installed, a 4 MiB file is read
at queue depths 1, 4, 16 and block sizes 128k, 1m (or at --queue-depths 2 --block-sizes 64k: one
setting): one line per setting with each fio variant (model/buffers), a JSON summary with a
positive rate for each, the test file removed; the default buffers leave huge out with a note
where too few huge pages are free, and as root one test reserves them (restoring the old count)
and measures the huge variants.
--with-pathbench writes a scenario of fio's settings (the file's size, the block sizes, the depths,
the staging memories, the readers), kept beside the summary, and runs the real binary on it
(without a GPU its cases skip: the summary says so with pathbench's reason) and a stand-in binary
whose result holds known medians per variant (staging memory/reader): one run per setting right
after fio's with the filter that takes all of that setting's variants, each one's figure printed,
the best one's ratio to fio's best variant, each tool's best setting (a case whose params leave
out staging_memory or reader counts as pinned or threads); --rounds 2 alternates the tools twice
and compares medians over the rounds, --pathbench-repetitions becomes the scenario's repetitions.
Exits 77 (CTest SKIP_RETURN_CODE) after the checks that need no fio when fio is not installed
(scripts/setup.sh --test-deps installs it). Standard library only.
"""
from __future__ import annotations

import json
import os
import re
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
ONE_SETTING = [(2, 64 * 1024)]  # --queue-depths 2 --block-sizes 64k
BS_NAMES = {64 * 1024: "64k", 128 * 1024: "128k", 1024 * 1024: "1m"}
FILE_BYTES = 4 * 1024 * 1024  # the --size 4M the measuring tests give
# With --with-pathbench at the default settings: 16 chunks of 1 MiB for queue depth 16.
PATHBENCH_FILE_BYTES = 16 * 1024 * 1024
STAGING_MEMORIES = ["pinned", "registered-4k", "registered-thp", "registered-hugetlb"]
READERS = ["threads", "aio"]
VARIANTS = [f"{memory}/{reader}" for memory in STAGING_MEMORIES for reader in READERS]
FILTER = "/chunk={bs}/queue_depth={qd}/staging_memory=[a-z0-9-]+/reader=[a-z]+$"
HUGETLB_REASON = "no hugetlb pages reserved (HugePages_Free 0)"
NR_HUGEPAGES = Path("/proc/sys/vm/nr_hugepages")
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


def huge_pages() -> tuple[int, int]:
    """(huge pages free for a new user: HugePages_Free - HugePages_Rsvd, the huge page size in
    bytes; 0 where the kernel has none)."""
    fields: dict[str, int] = {}
    for line in Path("/proc/meminfo").read_text().splitlines():
        name, _, value = line.partition(":")
        if value.split():
            fields[name] = int(value.split()[0])
    return (fields.get("HugePages_Free", 0) - fields.get("HugePages_Rsvd", 0),
            fields.get("Hugepagesize", 0) * 1024)


def huge_pages_needed(page: int, file_bytes: int = FILE_BYTES,
                      settings: list[tuple[int, int]] = SETTINGS) -> int:
    """fio's huge-page buffers at the setting that needs the most, as the script reckons them:
    each job's buffer (aio: QD x BS, one job; threads: BS, one thread per QD or per block) rounded
    up to the page, plus one page."""
    def per_job(buffer: int) -> int:
        return -(-buffer // page) + 1
    return max(max(per_job(qd * bs), min(qd, file_bytes // bs) * per_job(bs))
               for qd, bs in settings)


def fio_lines(stdout: str) -> list[tuple[int, str, str, float, dict[str, float]]]:
    """Each "qd QD bs BS GB/s X (variant rate, ...)" line: (QD, BS, "GB/s", X, {variant: rate})."""
    rows = []
    for line in stdout.splitlines():
        if not line.startswith("qd "):
            continue
        f = line.split()
        each = line[line.index("(") + 1:line.rindex(")")].split(", ")
        rows.append((int(f[1]), f[3], f[4], float(f[5]),
                     {name: float(rate) for name, rate in (part.split() for part in each)}))
    return rows


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
        self.assertNotIn("Traceback", out.stderr)
        return out.stderr

    def test_help(self) -> None:
        out = run("--help")
        self.assertEqual(out.returncode, 0, out.stderr)
        for option in ("--storage-dir DIR", "--models LIST", "--buffers LIST", "--with-pathbench",
                       "--pathbench-repetitions N", "shmhuge", "staging_memory",
                       "--queue-depths LIST", "--block-sizes LIST", "--staging-memories LIST",
                       "--readers LIST", "io_submit", "reader=[a-z]+$", ".scenario.json"):
            self.assertIn(option, out.stdout)

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

    def test_bad_lists_are_named(self) -> None:
        for option, names in (("--models", "aio, threads"), ("--buffers", "small, huge")):
            for value in ("", "small,", ",aio", "aio,,threads"):
                self.assertIn(f"{option} '{value}' is not a comma-separated list of {names}",
                              self.refused("--storage-dir", self.dir, option, value))
        self.assertIn("--models 'aio,io': 'io' is not aio or threads",
                      self.refused("--storage-dir", self.dir, "--models", "aio,io"))
        self.assertIn("--models 'threads,threads' names threads twice",
                      self.refused("--storage-dir", self.dir, "--models", "threads,threads"))
        self.assertIn("--buffers 'small,tiny': 'tiny' is not small or huge",
                      self.refused("--storage-dir", self.dir, "--buffers", "small,tiny"))
        self.assertIn("--buffers 'Huge': 'Huge' is not small or huge",
                      self.refused("--storage-dir", self.dir, "--buffers", "Huge"))
        self.assertIn("--buffers 'huge,small,huge' names huge twice",
                      self.refused("--storage-dir", self.dir, "--buffers", "huge,small,huge"))
        self.assertIn("--buffers needs a value", self.refused("--storage-dir", self.dir,
                                                              "--buffers"))
        self.assertIn("--pathbench-repetitions '0'",
                      self.refused("--storage-dir", self.dir, "--with-pathbench",
                                   "--pathbench-repetitions", "0"))
        self.assertIn("--pathbench-repetitions '100001'",
                      self.refused("--storage-dir", self.dir, "--with-pathbench",
                                   "--pathbench-repetitions", "100001"))
        self.assertIn("--pathbench-repetitions needs --with-pathbench",
                      self.refused("--storage-dir", self.dir, "--pathbench-repetitions", "2"))
        self.assertEqual(os.listdir(self.dir), [], "bad input leaves nothing behind")

    def test_bad_settings_are_named(self) -> None:
        depths = "is not an integer in [1, 256]"
        for value in ("0", "257", "x", "1,-4", "04"):
            self.assertIn(f"--queue-depths '{value}': '{value.split(',')[-1]}' {depths}",
                          self.refused("--storage-dir", self.dir, "--queue-depths", value))
        for value in ("", "1,", "1,,4"):
            self.assertIn(f"--queue-depths '{value}' is not a comma-separated list",
                          self.refused("--storage-dir", self.dir, "--queue-depths", value))
        self.assertIn("--queue-depths '4,16,4' names 4 twice",
                      self.refused("--storage-dir", self.dir, "--queue-depths", "4,16,4"))
        self.assertIn("--block-sizes '3k': '3k' is not a multiple of 4k",
                      self.refused("--storage-dir", self.dir, "--block-sizes", "3k"))
        for value in ("5000", "1g", "128K", "0k", "k"):
            self.assertIn(f"--block-sizes '128k,{value}': '{value}' is not digits followed by k "
                          "or m", self.refused("--storage-dir", self.dir, "--block-sizes",
                                               f"128k,{value}"))
        self.assertIn("--block-sizes '1m,1m' names 1m twice",
                      self.refused("--storage-dir", self.dir, "--block-sizes", "1m,1m"))
        self.assertIn("--block-sizes '1024k,1m' names one size twice: 1024k and 1m",
                      self.refused("--storage-dir", self.dir, "--block-sizes", "1024k,1m"))
        self.assertIn("--block-sizes '128k,8m': '8m' is larger than the --size '4M' file",
                      self.refused("--storage-dir", self.dir, "--size", "4M",
                                   "--block-sizes", "128k,8m"))
        self.assertIn("--block-sizes needs a value", self.refused("--storage-dir", self.dir,
                                                                  "--block-sizes"))
        # The pathbench-side lists, given with --with-pathbench: (message, option, value).
        with_pathbench = [
            ("--staging-memories 'pinned,foo': 'foo' is not pinned, registered-4k, "
             "registered-thp or registered-hugetlb", "--staging-memories", "pinned,foo"),
            ("--staging-memories 'pinned,pinned' names pinned twice", "--staging-memories",
             "pinned,pinned"),
            ("--staging-memories '' is not a comma-separated list", "--staging-memories", ""),
            ("--readers 'foo': 'foo' is not threads or aio", "--readers", "foo"),
            ("--readers 'threads,Aio': 'Aio' is not threads or aio", "--readers", "threads,Aio"),
            ("--readers 'aio,threads,aio' names aio twice", "--readers", "aio,threads,aio"),
        ] + [(f"--readers '{value}' is not a comma-separated list of threads, aio", "--readers",
              value) for value in ("", "aio,", ",threads")]
        for message, option, value in with_pathbench:
            self.assertIn(message, self.refused("--storage-dir", self.dir, "--with-pathbench",
                                                option, value))
        self.assertIn("--staging-memories needs --with-pathbench",
                      self.refused("--storage-dir", self.dir, "--staging-memories", "pinned"))
        self.assertIn("--readers needs --with-pathbench",
                      self.refused("--storage-dir", self.dir, "--readers", "aio"))
        self.assertIn("--readers needs a value", self.refused("--storage-dir", self.dir,
                                                              "--with-pathbench", "--readers"))
        self.assertEqual(os.listdir(self.dir), [], "bad input leaves nothing behind")

    def test_a_depth_above_the_chunk_count_is_refused_with_pathbench(self) -> None:
        # pathbench refuses it at load; the script says so before fio runs. The defaults' qd 16
        # at 1m is more than a 4 MiB file's 4 chunks; 64 at 128k more than its 32.
        env = {"PATHBENCH": str(PATHBENCH)}
        self.assertIn("--queue-depths '1,4,16': 16 reads in flight are more than the 4 chunks of "
                      "--block-sizes 1m in the --size 4M file (4194304 bytes)",
                      self.refused("--storage-dir", self.dir, "--size", "4M", "--with-pathbench",
                                   env=env))
        message = self.refused("--storage-dir", self.dir, "--size", "4M", "--with-pathbench",
                               "--queue-depths", "32,64", "--block-sizes", "128k", env=env)
        self.assertIn("--queue-depths '32,64': 64 reads in flight are more than the 32 chunks of "
                      "--block-sizes 128k in the --size 4M file", message)
        self.assertIn("pathbench refuses", message)
        # A partial last chunk counts, as pathbench counts it: 1 MiB + 4 KiB is 2 chunks of 1m.
        self.assertIn("3 reads in flight are more than the 2 chunks of --block-sizes 1m in the "
                      "--size 1052672 file", self.refused(
                          "--storage-dir", self.dir, "--size", "1052672", "--with-pathbench",
                          "--queue-depths", "2,3", "--block-sizes", "1m", env=env))
        self.assertIn("--size '65G' is over 64G", self.refused(
            "--storage-dir", self.dir, "--size", "65G", "--with-pathbench", env=env))
        self.assertEqual(os.listdir(self.dir), [], "bad input leaves nothing behind")

    @unittest.skipUnless(HAVE_FIO, "fio is not installed (the huge-page check comes after fio's)")
    def test_huge_buffers_without_reserved_pages_are_refused(self) -> None:
        free, page = huge_pages()
        if page and free >= huge_pages_needed(page):
            self.skipTest(f"{free} huge pages are free here, enough for fio's buffers: nothing "
                          "to refuse")
        message = self.refused("--storage-dir", self.dir, "--size", "4M", "--buffers", "huge")
        self.assertIn("--buffers 'huge': ", message)
        if page:
            self.assertIn(f"{free} huge pages of {page // 1024} KiB are free", message)
            self.assertIn(f"{huge_pages_needed(page)} are needed", message)
            self.assertIn("> /proc/sys/vm/nr_hugepages", message)
        else:
            self.assertIn("no huge pages", message)
        # Reckoned at the settings chosen: qd 32 at 1m needs more than the defaults.
        deep = [(32, 1024 * 1024)]
        if page and free < huge_pages_needed(page, 32 * 1024 * 1024, deep):
            self.assertIn(f"{huge_pages_needed(page, 32 * 1024 * 1024, deep)} are needed (",
                          self.refused("--storage-dir", self.dir, "--size", "32M",
                                       "--buffers", "huge", "--queue-depths", "32",
                                       "--block-sizes", "1m"))
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
        self.stderr = ""

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def measure(self, *extra: str, size: str = "4M",
                env: dict[str, str] | None = None) -> tuple[str, dict]:
        out = run("--storage-dir", str(self.dir), "--size", size, "--loops", "1",
                  "--out", str(self.summary), *extra, env=env)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertEqual(list(self.dir.iterdir()), [], "the test file is removed")
        self.stderr = out.stderr
        return out.stdout, json.loads(self.summary.read_text())

    def check_fio(self, stdout: str, summary: dict, variants: list[str],
                  settings: list[tuple[int, int]] = SETTINGS,
                  file_bytes: int = FILE_BYTES) -> None:
        """One line per setting with every variant's rate, X their best; the summary's settings,
        per variant figures and the best one."""
        lines = fio_lines(stdout)
        self.assertEqual([(qd, bs) for qd, bs, *_ in lines],
                         [(qd, BS_NAMES[bs]) for qd, bs in settings])
        for _, _, unit, best, each in lines:
            self.assertEqual(unit, "GB/s")
            self.assertEqual(list(each), variants)
            self.assertGreater(min(each.values()), 0.0)
            self.assertEqual(best, max(each.values()))
        self.assertEqual(summary["schema"], "pathbench.fio_storage_reference/v2")
        self.assertEqual(summary["file_bytes"], file_bytes)
        self.assertEqual([(s["queue_depth"], s["block_size"]) for s in summary["settings"]],
                         settings)
        self.assertEqual(summary["queue_depths"], list(dict.fromkeys(qd for qd, _ in settings)))
        self.assertEqual(summary["block_sizes"], list(dict.fromkeys(bs for _, bs in settings)))
        for s in summary["settings"]:
            self.assertEqual(list(s["fio"]), variants)
            for variant, figure in s["fio"].items():
                self.assertGreater(figure["gb_per_s"], 0.0, variant)
                self.assertEqual(len(figure["rounds"]), summary["rounds"])
                if variant.startswith("threads/"):
                    self.assertEqual(figure["threads"],
                                     min(s["queue_depth"], file_bytes // s["block_size"]))
                else:
                    self.assertNotIn("threads", figure)
            self.assertEqual(s["fio_variant"], max(s["fio"], key=lambda v: s["fio"][v]["gb_per_s"]))
            self.assertEqual(s["fio_gb_per_s"], s["fio"][s["fio_variant"]]["gb_per_s"])

    def test_every_setting_is_read_and_summarised(self) -> None:
        # The default buffers: huge where enough huge pages are free, else left out, saying so.
        free, page = huge_pages()
        huge = page > 0 and free >= huge_pages_needed(page)
        stdout, summary = self.measure()
        buffers = ["small", "huge"] if huge else ["small"]
        self.check_fio(stdout, summary, [f"{m}/{b}" for m in ("aio", "threads") for b in buffers])
        self.assertEqual(summary["models"], ["aio", "threads"])
        self.assertEqual(summary["buffers"], buffers)
        if huge:
            self.assertEqual(summary["buffers_skipped"], {})
            self.assertNotIn("note: leaving out", self.stderr)
        else:
            reason = summary["buffers_skipped"]["huge"]
            self.assertIn("nr_hugepages" if page else "no huge pages", reason)
            self.assertIn(f"fio_storage.sh: note: leaving out fio's huge-page buffers (default "
                          f"--buffers small,huge): {reason}\n", self.stderr)
        self.assertEqual(summary["file_bytes"], FILE_BYTES)
        self.assertEqual(summary["ioengine"], "libaio")
        self.assertTrue(summary["fio_version"].startswith("fio-"), summary["fio_version"])
        for s in summary["settings"]:
            self.assertNotIn("pathbench", s)
            self.assertNotIn("pathbench_variants", s)

    def test_reserved_huge_pages_are_measured(self) -> None:
        # As root: reserves the huge pages fio needs (the old count restored after), then
        # --buffers small,huge measures all four variants and fio gives its pages back.
        if os.geteuid() != 0 or not os.access(NR_HUGEPAGES, os.W_OK):
            self.skipTest(f"reserving huge pages needs root and a writable {NR_HUGEPAGES}")
        free, page = huge_pages()
        if not page:
            self.skipTest("this kernel has no huge pages")
        needed = huge_pages_needed(page)
        if free < needed:
            old = NR_HUGEPAGES.read_text().strip()
            try:
                NR_HUGEPAGES.write_text(f"{int(old) + needed - free}\n")
            except OSError as error:
                self.skipTest(f"writing {NR_HUGEPAGES} failed: {error}")
            finally:
                self.addCleanup(NR_HUGEPAGES.write_text, f"{old}\n")
            free = huge_pages()[0]
            if free < needed:
                self.skipTest(f"the kernel reserved {free} of the {needed} huge pages asked for "
                              "(memory too fragmented)")
        stdout, summary = self.measure("--buffers", "small,huge")
        self.check_fio(stdout, summary, ["aio/small", "aio/huge", "threads/small",
                                         "threads/huge"])
        self.assertEqual(summary["buffers"], ["small", "huge"])
        self.assertEqual(summary["buffers_skipped"], {})
        self.assertNotIn("note:", self.stderr)
        self.assertEqual(huge_pages()[0], free, "fio gave its huge pages back")

    def test_chosen_settings_are_read(self) -> None:
        stdout, summary = self.measure("--buffers", "small", "--queue-depths", "2",
                                       "--block-sizes", "64k")
        self.check_fio(stdout, summary, ["aio/small", "threads/small"], settings=ONE_SETTING)
        self.assertEqual(len(fio_lines(stdout)), 1)
        [setting] = summary["settings"]
        self.assertEqual((setting["queue_depth"], setting["block_size"]), (2, 65536))
        self.assertEqual(setting["fio"]["threads/small"]["threads"], 2)
        for key in ("staging_memories", "readers", "pathbench_scenario",
                    "pathbench_repetitions"):
            self.assertNotIn(key, summary)
        self.assertFalse(self.summary.with_suffix(".scenario.json").exists())

    def test_the_real_binary_without_a_gpu_skips_and_says_why(self) -> None:
        stdout, summary = self.measure("--buffers", "small", "--queue-depths", "2",
                                       "--block-sizes", "64k", "--with-pathbench",
                                       "--pathbench-repetitions", "1",
                                       env={"PATHBENCH": str(PATHBENCH)})
        self.check_fio(stdout, summary, ["aio/small", "threads/small"], settings=ONE_SETTING)
        self.assertEqual(summary["pathbench_repetitions"], 1)
        self.assertEqual(summary["staging_memories"], STAGING_MEMORIES)
        self.assertEqual(summary["readers"], READERS)
        scenario = self.kept_scenario(summary)
        self.assertEqual(scenario["scenarios"][0]["repetitions"], 1)
        self.check_scenario(scenario, FILE_BYTES, ONE_SETTING, STAGING_MEMORIES, 1)
        skipped = 0
        for s in summary["settings"]:
            setting = f"/bytes={FILE_BYTES}/cache=cold/chunk={s['block_size']}" \
                f"/queue_depth={s['queue_depth']}"
            each = s["pathbench_variants"]
            self.assertEqual(list(each), VARIANTS, "every variant's case runs")
            for name in VARIANTS:
                memory, reader = name.split("/")
                self.assertTrue(each[name]["id"].endswith(
                    f"{setting}/staging_memory={memory}/reader={reader}"), each[name])
            pb = s["pathbench"]
            if pb["status"] == "ok":  # a GPU machine
                self.assertGreater(pb["gb_per_s"], 0.0)
                self.assertIn(pb["variant"], VARIANTS)
                self.assertEqual(pb["variant"], f"{pb['staging_memory']}/{pb['reader']}")
                continue
            skipped += 1
            self.assertEqual(pb["status"], "skipped", pb)
            self.assertEqual(pb["id"], each["pinned/threads"]["id"])
            self.assertNotEqual(pb["reason"], "")
            for memory, case in each.items():
                self.assertEqual(case["status"], "skipped", memory)
                self.assertNotEqual(case["reason"], "", memory)
        self.assertEqual(sum(line.startswith("  pathbench skipped: ")
                             for line in stdout.splitlines()), skipped)
        self.assertIn(" pathbench  ratio  variant", stdout)
        kept = json.loads(self.summary.with_suffix(".pathbench.json").read_text())
        self.assertEqual(len(kept["cases"]), len(VARIANTS))

    def kept_scenario(self, summary: dict) -> dict:
        """The scenario the script wrote, kept beside the summary and named in it."""
        path = self.summary.with_suffix(".scenario.json")
        self.assertEqual(summary["pathbench_scenario"], str(path.resolve()))
        scenario = json.loads(path.read_text())
        self.assertEqual(scenario["schema"], "pathbench.scenario/v1")
        self.assertEqual(len(scenario["scenarios"]), 1)
        self.assertEqual(scenario["scenarios"][0]["name"], "fio-reference")
        self.assertIn("fio_storage.sh", scenario["scenarios"][0]["description"])
        self.assertEqual(scenario["scenarios"][0]["family"], "storage")
        return scenario

    def check_scenario(self, scenario: dict, file_bytes: int, settings: list[tuple[int, int]],
                       memories: list[str], repetitions: int,
                       readers: list[str] = READERS) -> None:
        [one] = scenario["scenarios"]
        self.assertEqual(one["repetitions"], repetitions)
        self.assertEqual(one["axes"], {
            "method": ["odirect_pinned"], "bytes": [file_bytes], "cache": ["cold"],
            "chunk": list(dict.fromkeys(bs for _, bs in settings)),
            "queue_depth": list(dict.fromkeys(qd for qd, _ in settings)),
            "staging_memory": memories,
            "reader": readers})
        # Case ids list the axes in this order: ".../staging_memory=M/reader=R".
        self.assertEqual(list(one["axes"])[-2:], ["staging_memory", "reader"])

    def fake_pathbench(self, bare_defaults: bool = False) -> Path:
        """A stand-in binary: run on the script's scenario with one setting's filter, its result
        holds the scenario's cases that the filter takes (chunk x queue_depth x staging_memory x
        reader from its axes), with known medians: pinned/threads qd * 0.5 GB/s (+ 0.1 in the
        second round), registered-4k/threads half of it, registered-thp/threads pinned + 1; the
        aio reader 2 more than threads for pinned, 0.5 more for the registered memories (so
        pinned/aio is the best); slots in 256 runs of contiguous pages for pinned/aio, 16 for
        registered-4k, 1 for registered-thp, unknown for pinned/threads; registered-hugetlb
        skipped; at qd 16 / 1 MiB all but hugetlb failed. With bare_defaults the params leave out
        staging_memory where it is pinned and reader where it is threads (the ids keep them).
        Each call's arguments and the scenario it was given are logged (a JSON object a line),
        with fio's results already written beside its --out, so the test sees the order of the
        fio and pathbench runs, the scenario, the filter and the options."""
        fake = Path(self.tmp.name) / "fake-pathbench"
        self.calls = Path(self.tmp.name) / "calls.log"
        fake.write_text(textwrap.dedent("""\
            #!/usr/bin/env python3
            import itertools, json, os, re, sys
            LOG = @LOG@
            args = sys.argv[1:]
            assert args[0] == "run" and args[1].endswith(".scenario.json"), args
            scenario = json.load(open(args[1]))
            pattern = args[args.index("--filter") + 1]
            out = args[args.index("--out") + 1]
            fio_before = sorted(f for f in os.listdir(os.path.dirname(os.path.abspath(out)))
                                if f.startswith("read-") and f.endswith(".json"))
            with open(LOG, "a") as log:
                log.write(json.dumps({"args": args, "scenario": scenario,
                                      "fio_before": fio_before}) + "\\n")
            filters = [call["args"][call["args"].index("--filter") + 1]
                       for call in map(json.loads, open(LOG).read().splitlines())]
            second_round = filters.count(pattern) == 2
            axes = scenario["scenarios"][0]["axes"]
            cases = []
            for qd, chunk, memory, reader in itertools.product(
                    axes["queue_depth"], axes["chunk"], axes["staging_memory"], axes["reader"]):
                params = {"method": "odirect_pinned", "bytes": axes["bytes"][0], "cache": "cold",
                          "chunk": chunk, "queue_depth": qd, "staging_memory": memory,
                          "reader": reader}
                case_id = "storage/" + "/".join(f"{k}={v}" for k, v in params.items())
                if not re.search(pattern, case_id):
                    continue
                if @BARE@:
                    if memory == "pinned":
                        del params["staging_memory"]
                    if reader == "threads":
                        del params["reader"]
                case = {"id": case_id, "params": params}
                if memory == "registered-hugetlb":
                    case.update(status="skipped", reason=@HUGETLB@)
                elif (qd, chunk) == (16, 1048576):
                    case.update(status="failed", reason="copy_pattern: byte 7 differs")
                else:
                    pinned = qd * 0.5 + (0.1 if second_round else 0.0)
                    median = {"pinned": pinned, "registered-4k": pinned / 2,
                              "registered-thp": pinned + 1}[memory]
                    if reader == "aio":
                        median += 2 if memory == "pinned" else 0.5
                    # The slots' median runs of contiguous pages: unknown (null, not root)
                    # for pinned/threads, one for THP; a check of another name is not read.
                    runs = {"pinned": None if reader == "threads" else 256,
                            "registered-4k": 16, "registered-thp": 1}[memory]
                    case.update(status="ok", reason="", metrics={
                        "throughput": {"stats": {"median": median}}}, checks=[
                            {"name": "timing", "value": {"slot_page_runs_median": 99}},
                            {"name": "direct_io", "value": {"slot_page_runs_median": runs}}])
                cases.append(case)
            json.dump({"schema": "pathbench.result/v1", "cases": cases}, open(out, "w"))
            sys.exit(2 if any(c["status"] == "failed" for c in cases) else 0)
            """).replace("@LOG@", repr(str(self.calls))).replace(
                "@HUGETLB@", repr(HUGETLB_REASON)).replace("@BARE@", repr(bare_defaults)))
        fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
        return fake

    def logged_calls(self) -> list[list[str]]:
        return [json.loads(line)["args"] for line in self.calls.read_text().splitlines()]

    def logged_scenarios(self) -> list[dict]:
        return [json.loads(line)["scenario"] for line in self.calls.read_text().splitlines()]

    def test_pathbench_reads_the_file_fio_reads_at_the_chosen_settings(self) -> None:
        # Staging memories and readers in an order of their own: the scenario keeps it, the
        # figures come in KNOWN's order then threads, aio. The stand-in's params leave out the
        # defaults (pinned, threads), which the script fills in.
        fake = self.fake_pathbench(bare_defaults=True)
        memories, readers = ["registered-thp", "pinned"], ["aio", "threads"]
        stdout, summary = self.measure("--buffers", "small", "--queue-depths", "2",
                                       "--block-sizes", "64k", "--with-pathbench",
                                       "--staging-memories", ",".join(memories),
                                       "--readers", ",".join(readers),
                                       env={"PATHBENCH": str(fake)})
        self.check_fio(stdout, summary, ["aio/small", "threads/small"], settings=ONE_SETTING)
        [call] = self.logged_calls()
        self.assertEqual(call[call.index("--filter") + 1],
                         "/chunk=65536/queue_depth=2/staging_memory=[a-z0-9-]+/reader=[a-z]+$")
        self.assertNotIn("--repetitions", call)
        [scenario] = self.logged_scenarios()
        self.check_scenario(scenario, FILE_BYTES, ONE_SETTING, memories, 5, readers)
        self.assertEqual(self.kept_scenario(summary), scenario, "the scenario pathbench ran")
        self.assertEqual(summary["staging_memories"], memories)
        self.assertEqual(summary["readers"], readers)
        self.assertIsNone(summary["pathbench_repetitions"])
        lines = stdout.splitlines()
        first = lines.index(next(line for line in lines if line.startswith("qd   2 bs   64k")))
        self.assertEqual(lines[first + 1], "  pathbench GB/s 3.000 (pinned/threads 1.000, "
                         "pinned/aio 3.000 [256 runs per slot], registered-thp/threads 2.000, "
                         "registered-thp/aio 2.500)")
        [s] = summary["settings"]
        each = s["pathbench_variants"]
        self.assertEqual(list(each), ["pinned/threads", "pinned/aio", "registered-thp/threads",
                                      "registered-thp/aio"])
        for name, median, runs in (("pinned/threads", 1.0, None), ("pinned/aio", 3.0, 256),
                                   ("registered-thp/threads", 2.0, 1),
                                   ("registered-thp/aio", 2.5, 1)):
            memory, reader = name.split("/")
            self.assertEqual(each[name]["slot_page_runs"], [runs], name)
            self.assertEqual(each[name]["staging_memory"], memory)
            self.assertEqual(each[name]["reader"], reader)
            self.assertAlmostEqual(each[name]["gb_per_s"], median, msg=name)
            self.assertTrue(each[name]["id"].endswith(
                f"/staging_memory={memory}/reader={reader}"), each[name])
        self.assertEqual(s["pathbench"]["variant"], "pinned/aio")
        self.assertEqual(s["pathbench"]["staging_memory"], "pinned")
        self.assertEqual(s["pathbench"]["reader"], "aio")
        self.assertEqual(s["pathbench"]["id"], "storage/method=odirect_pinned/bytes=4194304/"
                         "cache=cold/chunk=65536/queue_depth=2/staging_memory=pinned/reader=aio")
        self.assertAlmostEqual(s["pathbench"]["gb_per_s"], 3.0)
        self.assertEqual(summary["best"]["pathbench_setting"],
                         {"queue_depth": 2, "block_size": 65536, "staging_memory": "pinned",
                          "reader": "aio"})
        self.assertIn("(qd 2 bs 64k pinned/aio): ratio", stdout)

    def test_pathbench_figures_stand_beside_fio_with_the_ratio(self) -> None:
        fake = self.fake_pathbench()
        stdout, summary = self.measure("--buffers", "small", "--with-pathbench",
                                       size="16M", env={"PATHBENCH": str(fake)})
        self.check_fio(stdout, summary, ["aio/small", "threads/small"],
                       file_bytes=PATHBENCH_FILE_BYTES)
        # One pathbench run per setting, right after fio's, on the scenario of fio's settings,
        # filtered to that setting's cases of every staging memory and reader.
        calls = self.logged_calls()
        self.assertEqual([call[call.index("--filter") + 1] for call in calls],
                         [FILTER.format(bs=bs, qd=qd) for qd, bs in SETTINGS])
        for call in calls:
            self.assertNotIn("--repetitions", call)
            self.assertEqual(call[call.index("--storage-dir") + 1], str(self.dir))
        self.assertIsNone(summary["pathbench_repetitions"])
        scenario = self.kept_scenario(summary)
        self.check_scenario(scenario, PATHBENCH_FILE_BYTES, SETTINGS, STAGING_MEMORIES, 5)
        self.assertEqual(self.logged_scenarios(), [scenario] * len(SETTINGS))
        self.assertEqual(summary["staging_memories"], STAGING_MEMORIES)
        self.assertEqual(summary["readers"], READERS)
        self.assertNotIn("note:", self.stderr)  # fio and pathbench read files of one size
        lines = stdout.splitlines()
        first = lines.index(next(line for line in lines if line.startswith("qd   1 bs  128k")))
        self.assertEqual(lines[first + 1], "  pathbench GB/s 2.500 (pinned/threads 0.500, "
                         "pinned/aio 2.500 [256 runs per slot], registered-4k/threads 0.250 "
                         "[16 runs per slot], registered-4k/aio 0.750 [16 runs per slot], "
                         "registered-thp/threads 1.500, registered-thp/aio 2.000, "
                         "registered-hugetlb/threads skipped, registered-hugetlb/aio skipped)")
        last = lines.index(next(line for line in lines if line.startswith("qd  16 bs    1m")))
        self.assertEqual(lines[last + 1], "  pathbench failed: copy_pattern: byte 7 differs; "
                         f"skipped: {HUGETLB_REASON}")  # each status and reason once
        for s in summary["settings"]:
            qd = s["queue_depth"]
            setting = f"/chunk={s['block_size']}/queue_depth={qd}"
            pb, each = s["pathbench"], s["pathbench_variants"]
            self.assertEqual(list(each), VARIANTS)
            for name in ("registered-hugetlb/threads", "registered-hugetlb/aio"):
                self.assertEqual(each[name]["status"], "skipped", name)
                self.assertEqual(each[name]["reason"], HUGETLB_REASON, name)
            if (qd, s["block_size"]) == (16, 1024 * 1024):
                self.assertEqual(pb, {"status": "failed", "id": each["pinned/threads"]["id"],
                                      "reason": "copy_pattern: byte 7 differs"})
                for name in VARIANTS[:6]:
                    self.assertEqual(each[name]["status"], "failed", name)
                continue
            for name, median, runs in (("pinned/threads", qd * 0.5, None),
                                       ("pinned/aio", qd * 0.5 + 2, 256),
                                       ("registered-4k/threads", qd * 0.25, 16),
                                       ("registered-4k/aio", qd * 0.25 + 0.5, 16),
                                       ("registered-thp/threads", qd * 0.5 + 1, 1),
                                       ("registered-thp/aio", qd * 0.5 + 1.5, 1)):
                memory, reader = name.split("/")
                self.assertEqual(each[name]["status"], "ok", name)
                self.assertEqual(each[name]["slot_page_runs"], [runs], name)
                self.assertEqual((each[name]["staging_memory"], each[name]["reader"]),
                                 (memory, reader))
                self.assertAlmostEqual(each[name]["gb_per_s"], median, msg=name)
                self.assertEqual(len(each[name]["rounds"]), 1)
                self.assertTrue(each[name]["id"].endswith(
                    f"{setting}/staging_memory={memory}/reader={reader}"), each[name]["id"])
            self.assertEqual(pb["status"], "ok")
            self.assertEqual((pb["variant"], pb["staging_memory"], pb["reader"]),
                             ("pinned/aio", "pinned", "aio"))
            self.assertEqual(pb["id"], each["pinned/aio"]["id"])
            self.assertAlmostEqual(pb["gb_per_s"], qd * 0.5 + 2)
            self.assertAlmostEqual(pb["ratio"], pb["gb_per_s"] / s["fio_gb_per_s"])
            # One round: the round's two bests are the medians compared.
            self.assertEqual(len(pb["paired_ratios"]), 1)
            self.assertAlmostEqual(pb["paired_ratio"], pb["ratio"])
        best = summary["best"]
        self.assertNotIn("round_ratios", best)
        self.assertNotIn("paired", stdout)
        self.assertAlmostEqual(best["pathbench_gb_per_s"], 10.0)  # qd 16, 128 KiB, pinned/aio
        self.assertEqual(best["pathbench_setting"], {"queue_depth": 16, "block_size": 131072,
                                                     "staging_memory": "pinned",
                                                     "reader": "aio"})
        fastest = max(summary["settings"], key=lambda s: s["fio_gb_per_s"])
        self.assertAlmostEqual(best["fio_gb_per_s"], fastest["fio_gb_per_s"])
        self.assertEqual(best["fio_setting"], {"queue_depth": fastest["queue_depth"],
                                               "block_size": fastest["block_size"],
                                               "variant": fastest["fio_variant"]})
        self.assertAlmostEqual(best["ratio"], 10.0 / fastest["fio_gb_per_s"])
        self.assertIn("(qd 16 bs 128k pinned/aio): ratio", stdout)
        # One round: nothing to measure a drift from, and the last line says so.
        self.assertIsNone(best["fio_drift"])
        self.assertIsNone(best["pathbench_drift"])
        for s in summary["settings"]:
            self.assertIsNone(s["fio_drift"])
            if s["pathbench"]["status"] == "ok":
                self.assertIsNone(s["pathbench"]["drift"])
        self.assertEqual(stdout.splitlines()[-1],
                         "one round: how far this disk drifts between minutes is not measured "
                         "(--rounds 3 or more on a shared or virtual disk)")
        self.assertIn(" pathbench  ratio  variant  (GB/s; pathbench: its best variant", stdout)
        table = [line.split() for line in stdout.splitlines() if line.startswith(" 16  128k ")]
        self.assertEqual(len(table), 1, stdout)
        self.assertEqual(table[0][-1], "pinned/aio")  # the table names the best variant
        kept = json.loads(self.summary.with_suffix(".pathbench.json").read_text())
        self.assertEqual(len(kept["cases"]), len(VARIANTS) * len(SETTINGS),
                         "pathbench's results are kept beside the summary")

    def test_rounds_alternate_the_tools_and_compare_medians(self) -> None:
        # One reader: its cases alone, the best of the staging memories (THP) for threads.
        fake = self.fake_pathbench()
        stdout, summary = self.measure("--buffers", "small", "--models", "aio",
                                       "--with-pathbench", "--rounds", "2",
                                       "--pathbench-repetitions", "2", "--readers", "threads",
                                       size="16M", env={"PATHBENCH": str(fake)})
        self.assertEqual(summary["rounds"], 2)
        self.assertEqual(summary["rounds_asked"], 2)
        self.assertEqual(summary["pathbench_repetitions"], 2)
        self.assertEqual(summary["readers"], ["threads"])
        calls = self.logged_calls()
        self.assertEqual(len(calls), 2 * len(SETTINGS))
        for call in calls:
            self.assertNotIn("--repetitions", call)  # the scenario's repetitions
        for scenario in self.logged_scenarios():
            self.check_scenario(scenario, PATHBENCH_FILE_BYTES, SETTINGS, STAGING_MEMORIES, 2,
                                ["threads"])
        self.assertEqual(len(fio_lines(stdout)), 2 * len(SETTINGS))
        # Round 1 reads each setting with fio first, round 2 with pathbench first; the
        # pathbench line stays under fio's either way.
        logged = [json.loads(line) for line in self.calls.read_text().splitlines()]
        self.assertEqual(len(logged), 2 * len(SETTINGS))
        for call in logged:
            name = Path(call["args"][call["args"].index("--out") + 1]).name
            r, qd, bs = re.fullmatch(r"pathbench-r(\d)-qd(\d+)-bs(\w+)\.json", name).groups()
            fio_ran = f"read-r{r}-qd{qd}-bs{bs}-aio-small.json" in call["fio_before"]
            self.assertEqual(fio_ran, r == "1", name)
        lines = stdout.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("qd "):
                self.assertTrue(lines[i + 1].startswith("  pathbench "), lines[i:i + 2])
        for s in summary["settings"]:
            rounds = s["fio"]["aio/small"]["rounds"]
            self.assertEqual(len(rounds), 2)
            self.assertAlmostEqual(s["fio_gb_per_s"], sum(rounds) / 2)  # median of 2
            pb = s["pathbench"]
            if pb["status"] != "ok":
                continue
            self.assertEqual(len(pb["rounds"]), 2)
            self.assertEqual(pb["variant"], "registered-thp/threads")
            self.assertAlmostEqual(pb["gb_per_s"], s["queue_depth"] * 0.5 + 1.05)
            self.assertEqual(list(s["pathbench_variants"]),
                             [f"{memory}/threads" for memory in STAGING_MEMORIES])
            pinned = s["pathbench_variants"]["pinned/threads"]
            self.assertEqual(len(pinned["rounds"]), 2)
            self.assertAlmostEqual(pinned["rounds"][1] - pinned["rounds"][0], 0.1)
            self.assertAlmostEqual(pinned["gb_per_s"], s["queue_depth"] * 0.5 + 0.05)
            # THP/threads read qd * 0.5 + 1, then 0.1 more: it moved 0.1 over its median.
            self.assertAlmostEqual(pb["drift"], 0.1 / (s["queue_depth"] * 0.5 + 1.05))
            # Paired: each round's best over fio's best of that round, then their median.
            expected = [(s["queue_depth"] * 0.5 + 1 + 0.1 * r) / rounds[r] for r in (0, 1)]
            self.assertEqual(len(pb["paired_ratios"]), 2)
            for got, want in zip(pb["paired_ratios"], expected):
                self.assertAlmostEqual(got, want)
            self.assertAlmostEqual(pb["paired_ratio"], sum(expected) / 2)
            bs = s["block_size"]
            bs_text = f"{bs >> 20}m" if bs % (1 << 20) == 0 else f"{bs >> 10}k"
            row = [line.split() for line in stdout.splitlines()
                   if re.match(rf" *{s['queue_depth']} +{bs_text} ", line)]
            self.assertEqual(len(row), 1, stdout)
            self.assertEqual(row[0][-2:], [f"{pb['paired_ratio']:.2f}", pb["variant"]])
        for s in summary["settings"]:
            rounds = s["fio"][s["fio_variant"]]["rounds"]
            self.assertAlmostEqual(s["fio_drift"], (max(rounds) - min(rounds)) / (sum(rounds) / 2))
        self.assertIn(", medians of 2 rounds;", stdout)
        self.assertIn(" ratio paired  variant  (GB/s", stdout)
        self.assertIn("; paired: the median over rounds of the two bests' ratio within each round)",
                      stdout)
        best = summary["best"]
        # Each round's best against best: pathbench's best is qd 16 / 128 KiB THP/threads
        # (9 GB/s, 9.1 in round 2), fio's its fastest setting of that round.
        fio_round = [max(s["fio"]["aio/small"]["rounds"][r] for s in summary["settings"])
                     for r in (0, 1)]
        want = [(9 + 0.1 * r) / fio_round[r] for r in (0, 1)]
        self.assertEqual(len(best["round_ratios"]), 2)
        for got, expected in zip(best["round_ratios"], want):
            self.assertAlmostEqual(got, expected)
        self.assertAlmostEqual(best["round_ratio"], sum(want) / 2)
        self.assertEqual(stdout.splitlines()[-2],
                         "per round, pathbench's best against fio's best of the same round: "
                         + ", ".join(f"{x:.2f}" for x in best["round_ratios"])
                         + f" (median {best['round_ratio']:.2f})")
        fio_best = next(s for s in summary["settings"]
                        if (s["queue_depth"], s["block_size"], s["fio_variant"])
                        == tuple(best["fio_setting"].values()))
        pb_best = next(s["pathbench"] for s in summary["settings"]
                       if (s["queue_depth"], s["block_size"])
                       == tuple(best["pathbench_setting"].values())[:2])
        self.assertAlmostEqual(best["fio_drift"], fio_best["fio_drift"])
        self.assertAlmostEqual(best["pathbench_drift"], pb_best["drift"])
        self.assertAlmostEqual(best["pathbench_drift"], 0.1 / (16 * 0.5 + 1.05))  # qd 16, 128k
        line = stdout.splitlines()[-1]
        self.assertTrue(line.startswith(
            "drift between rounds ((max - min) / median): fio's best "
            f"{best['fio_drift'] * 100:.0f} %, pathbench's best "
            f"{best['pathbench_drift'] * 100:.0f} %"), line)
        # The gap to fio is said to be within the drift exactly when it is.
        within = abs(1 - best["ratio"]) <= max(best["fio_drift"], best["pathbench_drift"])
        self.assertEqual("is within it: more rounds or a quieter disk" in line, within, line)
        for name in (".pathbench.json", ".pathbench.round2.json"):
            kept = json.loads(Path(str(self.summary)[:-5] + name).read_text())
            self.assertEqual(len(kept["cases"]), 4 * len(SETTINGS), name)

    def test_a_run_stopped_in_round_two_keeps_the_summary_of_round_one(self) -> None:
        """The script is killed (as a time cap would) at round 2's first pathbench run: the
        summary written after round 1 stays, saying it holds 1 of the 2 rounds asked for."""
        fake = self.fake_pathbench()
        stopper = Path(self.tmp.name) / "stopping-pathbench"
        stopper.write_text(textwrap.dedent(f"""\
            #!/usr/bin/env python3
            import os, signal, sys
            calls = {str(self.calls)!r}
            done = len(open(calls).read().splitlines()) if os.path.exists(calls) else 0
            if done == {len(SETTINGS)}:
                os.kill(os.getppid(), signal.SIGTERM)
                sys.exit(1)
            os.execv({str(fake)!r}, [{str(fake)!r}, *sys.argv[1:]])
            """))
        stopper.chmod(stopper.stat().st_mode | stat.S_IXUSR)
        out = run("--storage-dir", str(self.dir), "--size", "16M", "--loops", "1",
                  "--out", str(self.summary), "--buffers", "small", "--models", "aio",
                  "--with-pathbench", "--rounds", "2", "--readers", "threads",
                  env={"PATHBENCH": str(stopper)})
        self.assertNotEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("summary of round 1 of 2: ", out.stderr)
        self.assertEqual(len(self.logged_calls()), len(SETTINGS), "round 1's runs only")
        summary = json.loads(self.summary.read_text())
        self.assertEqual((summary["rounds"], summary["rounds_asked"]), (1, 2))
        self.assertEqual([(s["queue_depth"], s["block_size"]) for s in summary["settings"]],
                         SETTINGS)
        for s in summary["settings"]:
            self.assertEqual(len(s["fio"]["aio/small"]["rounds"]), 1)
            self.assertAlmostEqual(s["fio_gb_per_s"], s["fio"]["aio/small"]["rounds"][0])
            if s["pathbench"]["status"] == "ok":
                self.assertEqual(len(s["pathbench"]["rounds"]), 1)
                # Round 1's registered-thp (pinned + 1), without round 2's 0.1.
                self.assertAlmostEqual(s["pathbench"]["gb_per_s"], s["queue_depth"] * 0.5 + 1)
        kept = json.loads(Path(str(self.summary)[:-5] + ".pathbench.json").read_text())
        self.assertEqual(len(kept["cases"]), 4 * len(SETTINGS))


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
