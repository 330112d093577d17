#!/usr/bin/env python3
"""End-to-end test of ci/slurm/ (submit.sh, pathbench.sbatch, fleet.sbatch) on a real Slurm.

    python3 tests/e2e/test_slurm.py --pathbench build/release/pathbench --source . [unittest args]

Starts a private Slurm cluster on this host, as child processes in a temporary folder: munged
(its own key, socket, pid, log and seed files) and slurmctld -D with three slurmd -D (nodes
pbnode1-3, each with this host's CPUs and memory from `slurmd -C`, on free unprivileged ports,
proctrack/linuxproc, task/none, no cgroups, select/cons_tres, SlurmUser=root). Then, with
host-side cases only (`--quick --filter ^host_memory/`, a few seconds a node):
  - ci/slurm/submit.sh --nodes=3 --partition=pathbench (not the default partition) with
    PATHBENCH_GRES=none (the cluster has no GPU GRES) must queue an exclusive sweep and a fleet
    job in the same partition that depends on it (afterany); the sweep must
    write one pathbench.result/v1 per node (<node>.json, ok host_memory cases, at most 3 samples:
    the run arguments reached `pathbench run`) under results/<sweep job>/ of the submit dir, and
    the fleet job must run `pathbench fleet` there: fleet.txt, fleet.json (pathbench.fleet/v1),
    fleet-junit.xml, fleet.html;
  - plain `sbatch ci/slurm/pathbench.sbatch` from the checkout root must find the checkout from
    SLURM_SUBMIT_DIR (slurmd runs a spool copy of the script), and from elsewhere, without
    PATHBENCH_ROOT, the job must exit 3 naming PATHBENCH_ROOT;
  - submit.sh refuses bad input with exit 3 naming the variable, and by default asks for GPU
    GRES (which this cluster refuses).
Stops exactly the daemons it started (SIGTERM, then SIGKILL after a timeout), also on failure;
prints the daemons' log tails when a check fails. Exits 77 (CTest SKIP_RETURN_CODE) when Slurm
cannot start here: munge/slurm binaries missing (Debian packages `slurm-wlm` and `munge`;
scripts/setup.sh --test-deps installs them), not root, or a daemon exits at start. Standard
library only.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import harness

# Set by main() from --pathbench / --source; CLUSTER by main() once Slurm runs.
PATHBENCH: Path = Path("pathbench")
SOURCE: Path = Path(".")
CLUSTER: SlurmCluster | None = None

EXIT_SKIP = 77
EXIT_BAD_INPUT = 3
RESULT_SCHEMA = "pathbench.result/v1"
FLEET_SCHEMA = "pathbench.fleet/v1"
NODES = ("pbnode1", "pbnode2", "pbnode3")
PARTITION = "pathbench"
RUN_ARGS = ("--quick", "--filter", "^host_memory/")
QUICK_MAX_SAMPLES = 3
START_DEADLINE_S = 60.0
JOB_DEADLINE_S = 150.0
STOP_TIMEOUT_S = 10.0
# Daemons and client commands; munged also needs nothing else (the key is written here).
REQUIRED = ("munged", "slurmctld", "slurmd", "sbatch", "sinfo", "scontrol", "squeue", "scancel",
            "srun")
SBIN_DIRS = ("/usr/sbin", "/sbin", "/usr/local/sbin")
FINISHED_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
                   "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "SPECIAL_EXIT"}


def find_program(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for d in SBIN_DIRS:  # daemons live in sbin, which a non-root PATH may lack
        candidate = Path(d) / name
        if os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def free_ports(count: int) -> list[int]:
    """`count` distinct TCP ports free on every address right now (the sockets are held until
    all are chosen, so they differ)."""
    held: list[socket.socket] = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("0.0.0.0", 0))
            held.append(s)
        return [int(s.getsockname()[1]) for s in held]
    finally:
        for s in held:
            s.close()


def tail(path: Path, lines: int = 40) -> str:
    if not path.is_file():
        return f"--- {path}: (none)\n"
    text = path.read_text(errors="replace").splitlines()
    return f"--- {path} (last {min(lines, len(text))} of {len(text)} lines)\n" + \
        "\n".join(text[-lines:]) + "\n"


def host_node_line(slurmd: str) -> str:
    """This host's CPUs and memory as a NodeName line's attributes, as `slurmd -C` reports them
    (so slurmd registers without a mismatch); /proc as the fallback."""
    keys = ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore", "RealMemory")
    try:
        proc = subprocess.run([slurmd, "-C"], capture_output=True, text=True, timeout=30,
                              check=False)
        first = proc.stdout.splitlines()[0] if proc.returncode == 0 and proc.stdout else ""
    except (OSError, subprocess.TimeoutExpired):
        first = ""
    found = dict(re.findall(r"(\w+)=(\S+)", first))
    if all(k in found for k in keys):
        return " ".join(f"{k}={found[k]}" for k in keys)
    meminfo = Path("/proc/meminfo").read_text()
    mem_mib = int(re.search(r"MemTotal:\s+(\d+) kB", meminfo).group(1)) // 1024  # type: ignore[union-attr]
    return f"CPUs={os.cpu_count() or 1} RealMemory={mem_mib}"


class StartError(Exception):
    """Slurm cannot start here (a reason to skip, not a failure)."""


class SlurmCluster:
    """munged, slurmctld and one slurmd per node, children of this process, in `root`."""

    def __init__(self, root: Path, programs: dict[str, str]) -> None:
        self.root = root
        self.programs = programs
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.logs: dict[str, Path] = {}
        self.jobs: list[str] = []
        self.conf = root / "slurm.conf"
        self.munge_socket = root / "munge" / "munge.socket"
        for d in ("munge", "state", "spool", "log", "run", "submit"):
            (root / d).mkdir(parents=True)

    # -- setup ---------------------------------------------------------------------------------
    def write_config(self) -> None:
        key = self.root / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        host = socket.gethostname().split(".")[0]  # hostname -s
        ctld_port, *node_ports = free_ports(1 + len(NODES))
        node = host_node_line(self.programs["slurmd"])
        r = self.root
        lines = [
            "ClusterName=pathbenche2e",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={ctld_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={r}/state",
            f"SlurmdSpoolDir={r}/spool/%n",
            f"SlurmctldPidFile={r}/run/slurmctld.pid",
            f"SlurmdPidFile={r}/run/slurmd-%n.pid",
            f"SlurmctldLogFile={r}/log/slurmctld.log",
            f"SlurmdLogFile={r}/log/slurmd-%n.log",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SchedulerType=sched/backfill",
            "MpiDefault=none",
            "MailProg=/bin/true",
            "ReturnToService=2",
            "MinJobAge=600",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=60",
            *(f"NodeName={name} NodeAddr=127.0.0.1 Port={port} {node} State=UNKNOWN"
              for name, port in zip(NODES, node_ports)),
            # Not the default: the fleet job must follow the sweep into it.
            "PartitionName=other Nodes=ALL Default=YES MaxTime=30 State=UP",
            f"PartitionName={PARTITION} Nodes=ALL Default=NO MaxTime=30 State=UP",
        ]
        self.conf.write_text("\n".join(lines) + "\n")

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of a client command: this cluster's slurm.conf, and no Slurm or
        pathbench variables from outside (ctest may itself run inside a Slurm job)."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_", "PATHBENCH_"))}
        env["SLURM_CONF"] = str(self.conf)
        env.update(extra)
        return env

    def spawn(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        log = self.root / "log" / f"{name}.out"
        self.logs[name] = log
        with open(log, "wb") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=self.env(),
                                    cwd=self.root, start_new_session=True)
        self.procs[name] = proc
        return proc

    def check_alive(self) -> None:
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                raise StartError(f"{name} exited at start with {proc.returncode}")

    def start(self) -> None:
        self.write_config()
        r = self.root
        self.spawn("munged", [self.programs["munged"], "--foreground", "--force",
                              f"--socket={self.munge_socket}",
                              f"--key-file={r}/munge/munge.key",
                              f"--pid-file={r}/run/munged.pid",
                              f"--log-file={r}/log/munged.log",
                              f"--seed-file={r}/munge/munged.seed"])
        deadline = time.monotonic() + 10
        while not self.munge_socket.exists():
            self.check_alive()
            if time.monotonic() > deadline:
                raise StartError(f"munged made no socket {self.munge_socket} within 10 s")
            time.sleep(0.1)
        self.spawn("slurmctld", [self.programs["slurmctld"], "-D", "-f", str(self.conf)])
        for name in NODES:
            self.spawn(f"slurmd-{name}", [self.programs["slurmd"], "-D", "-N", name,
                                          "-f", str(self.conf)])
        deadline = time.monotonic() + START_DEADLINE_S
        states: dict[str, str] = {}
        while time.monotonic() < deadline:
            self.check_alive()
            proc = self.run("sinfo", "-h", "-N", "-o", "%N %t", timeout=15)
            if proc.returncode == 0:
                states = dict(line.split() for line in proc.stdout.splitlines() if line.strip())
                if all(states.get(n) == "idle" for n in NODES):
                    return
            time.sleep(0.5)
        # The daemons run but the nodes did not come up: that is a failure, not a skip.
        raise AssertionError(f"nodes not idle within {START_DEADLINE_S:.0f} s: {states}\n"
                             + self.diagnostics())

    # -- use -----------------------------------------------------------------------------------
    def run(self, *argv: str, cwd: Path | None = None, timeout: float = 60,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        program = self.programs.get(argv[0], argv[0])
        return subprocess.run([program, *argv[1:]], capture_output=True, text=True,
                              timeout=timeout, check=False, cwd=cwd or self.root,
                              env=env if env is not None else self.env())

    def job(self, job_id: str) -> dict[str, str]:
        """`scontrol show job -o` as key -> value."""
        proc = self.run("scontrol", "show", "job", "-o", job_id, timeout=30)
        if proc.returncode != 0:
            raise AssertionError(f"scontrol show job {job_id}: exit {proc.returncode}: "
                                 f"{proc.stderr}")
        fields: dict[str, str] = {}
        for item in re.split(r" (?=[A-Za-z/:]+=)", proc.stdout.strip()):
            key, _, value = item.partition("=")
            fields[key] = value
        return fields

    def wait(self, job_ids: list[str], deadline_s: float = JOB_DEADLINE_S) -> dict[str, dict[str, str]]:
        """Each job's final `scontrol show job`, once all have finished."""
        deadline = time.monotonic() + deadline_s
        while True:
            jobs = {j: self.job(j) for j in job_ids}
            if all(info.get("JobState") in FINISHED_STATES for info in jobs.values()):
                return jobs
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise AssertionError(f"{name} exited with {proc.returncode} while jobs ran\n"
                                         + self.diagnostics())
            if time.monotonic() > deadline:
                states = {j: (i.get("JobState"), i.get("Reason")) for j, i in jobs.items()}
                raise AssertionError(f"jobs not finished within {deadline_s:.0f} s: {states}\n"
                                     + self.diagnostics())
            time.sleep(0.5)

    def diagnostics(self) -> str:
        parts = [tail(self.root / "log" / "slurmctld.log"), tail(self.root / "log" / "munged.log", 10)]
        parts += [tail(self.root / "log" / f"slurmd-{n}.log", 20) for n in NODES]
        parts += [tail(log, 15) for log in self.logs.values()]
        try:
            proc = self.run("squeue", "-a", "-o", "%i %j %T %r %N", timeout=15)
            parts.append(f"--- squeue\n{proc.stdout}{proc.stderr}")
        except subprocess.TimeoutExpired:
            parts.append("--- squeue: no answer within 15 s\n")
        return "".join(parts)

    # -- teardown ------------------------------------------------------------------------------
    def stop(self) -> None:
        """Cancels this cluster's jobs, then stops exactly the daemons started here: slurmd,
        slurmctld, munged, each SIGTERM then SIGKILL after STOP_TIMEOUT_S."""
        if self.jobs and self.procs.get("slurmctld") and self.procs["slurmctld"].poll() is None:
            self.run("scancel", *self.jobs, timeout=30)
            deadline = time.monotonic() + STOP_TIMEOUT_S
            while time.monotonic() < deadline:
                proc = self.run("squeue", "-h", "-o", "%i", timeout=15)
                if proc.returncode != 0 or not proc.stdout.strip():
                    break
                time.sleep(0.5)
        order = [n for n in self.procs if n.startswith("slurmd-")] + ["slurmctld", "munged"]
        for name in order:
            proc = self.procs.get(name)
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                print(f"test_slurm: {name} (pid {proc.pid}) ignored SIGTERM: SIGKILL",
                      file=sys.stderr)
                proc.kill()
                proc.wait(timeout=STOP_TIMEOUT_S)


def read_json(test: unittest.TestCase, path: Path) -> dict[str, Any]:
    test.assertTrue(path.is_file(), f"{path} is missing")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        test.fail(f"{path} is not JSON: {e}")
    test.assertIsInstance(data, dict, str(path))
    return data


def cluster() -> SlurmCluster:
    assert CLUSTER is not None, "main() starts the cluster"
    return CLUSTER


def binary_env() -> dict[str, str]:
    """PATHBENCH_BIN when the binary under test is not where the scripts look by default."""
    default = (SOURCE / "build" / "release" / "pathbench").resolve()
    return {} if default == PATHBENCH else {"PATHBENCH_BIN": str(PATHBENCH)}


def exit_code(job: dict[str, str]) -> int:
    return int(job.get("ExitCode", "-1:0").split(":")[0])


class SlurmSweep(unittest.TestCase):
    """One submission through submit.sh, two through plain sbatch; all queued at once."""
    submit_dir: Path
    submit: subprocess.CompletedProcess[str]
    ids: dict[str, str]
    results: Path
    fleet_pending: dict[str, str]
    direct_id: str
    direct_results: Path
    nocheckout_id: str
    jobs: dict[str, dict[str, str]]

    @classmethod
    def setUpClass(cls) -> None:
        c = cluster()
        cls.submit_dir = c.root / "submit"
        env = c.env(PATHBENCH_GRES="none", **binary_env())
        cls.submit = c.run(str(SOURCE / "ci" / "slurm" / "submit.sh"), f"--nodes={len(NODES)}",
                           f"--partition={PARTITION}", "--time=5", "--", *RUN_ARGS, cwd=cls.submit_dir, env=env)
        print(f"\nsubmit.sh: exit {cls.submit.returncode}\n{cls.submit.stdout}{cls.submit.stderr}",
              file=sys.stderr)
        if cls.submit.returncode != 0:
            raise AssertionError(f"submit.sh failed: exit {cls.submit.returncode}\n"
                                 f"{cls.submit.stdout}{cls.submit.stderr}\n{c.diagnostics()}")
        cls.ids = dict(line.split(" ", 1) for line in cls.submit.stdout.splitlines())
        c.jobs += [cls.ids["sweep"], cls.ids["fleet"]]
        cls.results = Path(cls.ids["results"])
        cls.fleet_pending = c.job(cls.ids["fleet"])  # before the sweep ends

        # From the checkout root with plain sbatch, as the script's header says.
        cls.direct_results = c.root / "direct"
        direct = c.run("sbatch", "--parsable", "--nodes=1", "--time=5",
                       f"--output={c.root}/direct-%j.log", "ci/slurm/pathbench.sbatch",
                       "--quick", "--filter", "^host_memory/measure=mlock/", cwd=SOURCE,
                       env=c.env(PATHBENCH_RESULTS=str(cls.direct_results), **binary_env()))
        if direct.returncode != 0:
            raise AssertionError(f"sbatch from the checkout root: {direct.stderr}")
        cls.direct_id = direct.stdout.strip().split(";")[0]
        c.jobs.append(cls.direct_id)

        # From outside the checkout, without PATHBENCH_ROOT: the job must say what to set.
        nocheckout = c.run("sbatch", "--parsable", "--nodes=1", "--time=5",
                           f"--output={c.root}/nocheckout-%j.log",
                           str(SOURCE / "ci" / "slurm" / "pathbench.sbatch"), "--quick",
                           cwd=cls.submit_dir, env=c.env(**binary_env()))
        if nocheckout.returncode != 0:
            raise AssertionError(f"sbatch from outside the checkout: {nocheckout.stderr}")
        cls.nocheckout_id = nocheckout.stdout.strip().split(";")[0]
        c.jobs.append(cls.nocheckout_id)

        start = time.monotonic()
        cls.jobs = c.wait([cls.ids["sweep"], cls.ids["fleet"], cls.direct_id, cls.nocheckout_id])
        print(f"test_slurm: 4 jobs finished in {time.monotonic() - start:.1f} s: "
              + ", ".join(f"{j} {i['JobName']} {i['JobState']} {i['ExitCode']}"
                          for j, i in cls.jobs.items()), file=sys.stderr)

    def fail_with_logs(self, message: str) -> None:
        logs = "".join(tail(p, 60) for p in sorted(self.submit_dir.glob("pathbench-*.log")))
        logs += "".join(tail(p, 40) for p in sorted(self.results.glob("fleet-*.log")))
        self.fail(f"{message}\n{logs}{cluster().diagnostics()}")

    def test_sweep_ran_one_task_per_node_on_whole_nodes(self) -> None:
        sweep = self.jobs[self.ids["sweep"]]
        if sweep["JobState"] != "COMPLETED" or exit_code(sweep) != 0:
            self.fail_with_logs(f"sweep job {sweep['JobState']} exit {sweep['ExitCode']}")
        self.assertEqual(sweep["NumNodes"], str(len(NODES)))
        self.assertEqual(sweep["OverSubscribe"], "NO", "--exclusive: whole nodes")
        self.assertEqual(sweep["Partition"], PARTITION)
        self.assertNotIn("gres/gpu", sweep.get("TRES", ""), "PATHBENCH_GRES=none asks for no GPU")
        self.assertEqual(self.results, self.submit_dir / "results" / self.ids["sweep"],
                         "default results folder: results/<sweep job id> in the submit dir")
        log = (self.submit_dir / f"pathbench-{self.ids['sweep']}.log").read_text()
        for node in NODES:
            self.assertIn(f"pathbench.sbatch: {node}: pathbench run exit 0", log)

    def test_each_node_wrote_a_result(self) -> None:
        names = sorted(p.name for p in self.results.glob("*.json") if p.name != "fleet.json")
        if names != sorted(f"{n}.json" for n in NODES):
            self.fail_with_logs(f"results in {self.results}: {names}")
        for node in NODES:
            result = read_json(self, self.results / f"{node}.json")
            self.assertEqual(result.get("schema"), RESULT_SCHEMA, node)
            self.assertIs(result.get("complete"), True, node)
            cases = result["cases"]
            families = {c["family"] for c in cases}
            self.assertEqual(families, {"host_memory"}, f"{node}: --filter reached pathbench run")
            ok = [c for c in cases if c["status"] == "ok"]
            self.assertGreaterEqual(len(ok), 3, f"{node}: memcpy, first_touch, mlock ok")
            self.assertEqual([c["id"] for c in cases if c["status"] == "failed"], [], node)
            for case in ok:
                for name, metric in case["metrics"].items():
                    self.assertLessEqual(len(metric["samples"]), QUICK_MAX_SAMPLES,
                                         f"{node} {case['id']} {name}: --quick reached pathbench run")
        print(f"test_slurm: {len(NODES)} results in {self.results}", file=sys.stderr)

    def test_fleet_job_depended_on_the_sweep(self) -> None:
        self.assertEqual(self.fleet_pending["JobName"], "pathbench-fleet")
        self.assertEqual(self.fleet_pending["Partition"], PARTITION, "the sweep's partition")
        self.assertIn(f"afterany:{self.ids['sweep']}", self.fleet_pending["Dependency"])

    def test_fleet_report(self) -> None:
        fleet = self.jobs[self.ids["fleet"]]
        # exit 0 no outlier, 1 an outlier (three nodes sharing one host's cores), 2 too few
        # comparable results; 3 would be bad input: the sweep's results were not accepted.
        if fleet["JobState"] not in ("COMPLETED", "FAILED") or exit_code(fleet) not in (0, 1, 2):
            self.fail_with_logs(f"fleet job {fleet['JobState']} exit {fleet['ExitCode']}")
        report = read_json(self, self.results / "fleet.json")
        self.assertEqual(report.get("schema"), FLEET_SCHEMA)
        # The job's exit is the report's verdict: the nodes' load decides which, not the test.
        self.assertTrue(report["judged"], "three nodes of one type are judged")
        self.assertEqual(exit_code(fleet), 1 if report["outliers"] > 0 else 0)
        nodes = [n["label"] for g in report["groups"] for n in g["nodes"]]
        self.assertEqual(sorted(nodes), sorted(NODES))
        table = (self.results / "fleet.txt").read_text()
        self.assertNotEqual(table.strip(), "", "fleet.txt holds the table")
        for node in NODES:
            self.assertIn(node, table, "the table names every node")
        junit = ElementTree.parse(self.results / "fleet-junit.xml").getroot()
        self.assertEqual(len(junit.findall(".//testcase")), len(NODES), "a testcase per node")
        self.assertIn("<html", (self.results / "fleet.html").read_text().lower())
        print(f"test_slurm: fleet job exit {fleet['ExitCode']}:\n{table}", file=sys.stderr)

    def test_plain_sbatch_from_the_checkout_root(self) -> None:
        job = self.jobs[self.direct_id]
        log = cluster().root / f"direct-{self.direct_id}.log"
        if job["JobState"] != "COMPLETED" or exit_code(job) != 0:
            self.fail(f"sbatch ci/slurm/pathbench.sbatch: {job['JobState']} {job['ExitCode']}\n"
                      + tail(log, 60))
        files = list(self.direct_results.glob("*.json"))
        self.assertEqual(len(files), 1, f"{self.direct_results}: {files}")
        self.assertIn(files[0].stem, NODES)
        result = read_json(self, files[0])
        self.assertEqual(result.get("schema"), RESULT_SCHEMA)
        self.assertEqual([(c["params"]["measure"], c["status"]) for c in result["cases"]],
                         [("mlock", "ok")])
        # The checkout came from SLURM_SUBMIT_DIR: the default scenario file under it ran.
        self.assertIn(f"run {SOURCE.resolve()}/scenarios/default.json", log.read_text())

    def test_job_without_checkout_exits_3_naming_the_variable(self) -> None:
        job = self.jobs[self.nocheckout_id]
        log = (cluster().root / f"nocheckout-{self.nocheckout_id}.log").read_text()
        self.assertEqual((job["JobState"], exit_code(job)), ("FAILED", EXIT_BAD_INPUT), log)
        self.assertIn("PATHBENCH_ROOT", log)
        self.assertIn("cannot find the pathbench checkout", log)


class SubmitRefuses(unittest.TestCase):
    """submit.sh's bad input: exit 3, the variable named, nothing queued."""

    def submit(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        c = cluster()
        return c.run(str(SOURCE / "ci" / "slurm" / "submit.sh"), *args, cwd=c.root / "submit",
                     env=c.env(**env))

    def check_refused(self, proc: subprocess.CompletedProcess[str], variable: str) -> None:
        self.assertEqual(proc.returncode, EXIT_BAD_INPUT, proc.stderr)
        self.assertIn(variable, proc.stderr)
        self.assertNotIn("sweep", proc.stdout)
        self.assertNotIn("Traceback", proc.stderr)

    def test_missing_binary(self) -> None:
        missing = cluster().root / "no" / "pathbench"
        proc = self.submit("--", "--quick", PATHBENCH_GRES="none", PATHBENCH_BIN=str(missing))
        self.check_refused(proc, "PATHBENCH_BIN")
        self.assertIn(str(missing), proc.stderr)

    def test_not_a_checkout(self) -> None:
        proc = self.submit(PATHBENCH_GRES="none", PATHBENCH_ROOT=str(cluster().root),
                           **binary_env())
        self.check_refused(proc, "PATHBENCH_ROOT")

    def test_missing_scenario(self) -> None:
        proc = self.submit(PATHBENCH_GRES="none", PATHBENCH_SCENARIOS="scenarios/nope.json",
                           **binary_env())
        self.check_refused(proc, "PATHBENCH_SCENARIOS")
        self.assertIn("nope.json", proc.stderr)

    def test_results_folder_with_results(self) -> None:
        stale = cluster().root / "stale"
        stale.mkdir()
        (stale / "pbnode1.json").write_text("{}")
        proc = self.submit(PATHBENCH_GRES="none", PATHBENCH_RESULTS=str(stale), **binary_env())
        self.check_refused(proc, "PATHBENCH_RESULTS")

    def test_default_asks_for_the_nodes_gpus(self) -> None:
        # This cluster has no GPU GRES: the default request (gpu:8 a node) must reach sbatch,
        # which refuses it; PATHBENCH_GRES=none (above) is how such a cluster is used.
        proc = self.submit("--nodes=1", "--", "--quick", **binary_env())
        queued = re.findall(r"^(?:sweep|fleet) (\d+)$", proc.stdout, re.MULTILINE)
        cluster().jobs += queued  # cancelled at the end, should the check below fail
        self.assertNotEqual(proc.returncode, 0, proc.stdout)
        self.assertNotIn("sweep", proc.stdout)
        self.assertRegex(proc.stderr, r"(?i)gres|generic resource", proc.stderr)


def main() -> int:
    global PATHBENCH, SOURCE, CLUSTER
    PATHBENCH, SOURCE, rest = harness.parse_binary_args((__doc__ or "").splitlines()[0])
    programs = {name: find_program(name) for name in REQUIRED}
    missing = sorted(name for name, path in programs.items() if path is None)
    if missing:
        print(f"SKIPPED: no {', '.join(missing)} here: install the Debian packages slurm-wlm and "
              "munge (scripts/setup.sh --test-deps installs them)")
        return EXIT_SKIP
    if os.geteuid() != 0:
        print("SKIPPED: not root: this private cluster runs slurmd and its jobs as root "
              "(SlurmUser=root), as CI does")
        return EXIT_SKIP
    with tempfile.TemporaryDirectory(prefix="pathbench_slurm_") as tmp:
        root = Path(tmp)
        root.chmod(0o755)  # munged wants its socket's folder searchable by all
        CLUSTER = SlurmCluster(root, {k: v for k, v in programs.items() if v is not None})
        try:
            start = time.monotonic()
            try:
                CLUSTER.start()
            except StartError as e:
                print(f"SKIPPED: Slurm cannot start here: {e}\n{CLUSTER.diagnostics()}")
                return EXIT_SKIP
            except AssertionError as e:
                print(f"test_slurm: FAILED: {e}", file=sys.stderr)
                return 1
            print(f"test_slurm: munged, slurmctld and {len(NODES)} slurmd up in "
                  f"{time.monotonic() - start:.1f} s ({root})", file=sys.stderr)
            return harness.run_unittests(rest)
        finally:
            CLUSTER.stop()


if __name__ == "__main__":
    sys.exit(main())
