#!/usr/bin/env python3
"""The deployment files, checked offline by real validators (no network at test time).

    python3 tests/e2e/test_deploy_artifacts.py --python build/venv/bin/python --source . \
        [--pathbench build/release/pathbench] [unittest args]

--python is the interpreter of build/venv (scripts/setup.sh --test-deps installs
tests/requirements.txt there); the validators are the programs beside it:
  - ci/kubernetes/*.yaml: kubernetes-validate --strict (bundled OpenAPI schemas, Kubernetes 1.30
    and the newest it ships), plus Guaranteed QoS over the parsed YAML (requests == limits for
    cpu, memory and nvidia.com/gpu in every container, whole CPUs), which no schema can say, and
    the shape the measurement needs (indexed Job with one pod per node, GPU product node selector,
    NODE_NAME from spec.nodeName, the results and textfile mounts);
  - ci/examples/github-actions.yml: actionlint (with shellcheck on the run: scripts where it is
    installed) and check-jsonschema --builtin-schema vendor.github-workflows;
  - ci/examples/gitlab-ci.yml: check-jsonschema --builtin-schema vendor.gitlab-ci;
  - ci/docker/Dockerfile: hadolint, and dockerfile-parse for its stages (COPY --from names an
    earlier stage, the CUDA 13 devel/runtime Ubuntu 24.04 bases) and COPY sources (they exist and
    .dockerignore does not drop them);
  - the pathbench commands and options the YAML files run exist in --pathbench's --help and
    ci/gate.sh's usage;
  - ci/docker/pathbench-node.sh (the container's entry point): shellcheck where installed, and with
    --pathbench a real quick run, once (the Job) and periodically until SIGTERM (the DaemonSet).
Every validator also gets a deliberately broken copy that it must reject, so a validator that
accepts anything fails the test. Exit 77 (skipped) only when --python or one of the validators is
not installed; it says which.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

PYTHON: Path = Path("python3")
SOURCE: Path = Path(".")
PATHBENCH: Path | None = None
TOOLS = ("kubernetes-validate", "check-jsonschema", "actionlint", "hadolint")
K8S_VERSIONS = ("1.30.0", None)  # None: the newest kubernetes-validate ships
EXIT_SKIP = 77

# Runs under --python (PyYAML, dockerfile-parse): the checks no schema can express, as JSON
# {"file": [problem, ...]}. An empty list is a pass.
CHECKS = r'''
import json, re, sys
from pathlib import Path
import yaml

def whole_cpus(v):
    s = str(v)
    return re.fullmatch(r"[1-9][0-9]*", s) is not None

def pod_problems(where, pod, labels):
    out = []
    containers = pod.get("containers", []) + pod.get("initContainers", [])
    if not pod.get("containers"):
        out.append(f"{where}: no containers")
    for c in containers:
        name = f"{where} container {c.get('name')}"
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        for key in ("cpu", "memory", "nvidia.com/gpu"):
            if key not in req or key not in lim:
                out.append(f"{name}: {key} missing from requests or limits")
            elif str(req[key]) != str(lim[key]):
                out.append(f"{name}: {key} requests {req[key]} != limits {lim[key]}")
        if set(req) != set(lim):
            out.append(f"{name}: requests and limits name different resources")
        for k, v in list(req.items()) + list(lim.items()):
            if str(req.get(k)) != str(lim.get(k)):
                out.append(f"{name}: {k} requests {req.get(k)} != limits {lim.get(k)}")
        if "cpu" in lim and not whole_cpus(lim["cpu"]):
            out.append(f"{name}: cpu {lim['cpu']!r} is not a whole number of CPUs")
    env = {e["name"]: e for c in pod.get("containers", []) for e in c.get("env", [])}
    node = env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
    if node != "spec.nodeName":
        out.append(f"{where}: NODE_NAME does not come from the downward API's spec.nodeName")
    if "nvidia.com/gpu.product" not in (pod.get("nodeSelector") or {}):
        out.append(f"{where}: no nodeSelector on nvidia.com/gpu.product")
    mounts = {m["mountPath"]: m["name"] for c in pod.get("containers", []) for m in c.get("volumeMounts", [])}
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for path in ("/results", "/textfile"):
        if path not in mounts or mounts[path] not in volumes:
            out.append(f"{where}: nothing mounted at {path}")
    tf = volumes.get(mounts.get("/textfile"), {})
    if "hostPath" not in tf:
        out.append(f"{where}: the textfile collector directory is not a hostPath")
    return out

def manifest_problems(path):
    out = []
    for doc in yaml.safe_load_all(Path(path).read_text()):
        if not doc:
            continue
        kind = doc.get("kind")
        if kind not in ("Job", "DaemonSet"):
            continue
        spec = doc["spec"]
        tmpl = spec["template"]
        labels = tmpl.get("metadata", {}).get("labels", {})
        out += pod_problems(kind, tmpl["spec"], labels)
        if kind == "Job":
            if spec.get("completionMode") != "Indexed":
                out.append("Job: completionMode is not Indexed")
            if spec.get("parallelism") != spec.get("completions"):
                out.append("Job: parallelism != completions")
            anti = (tmpl["spec"].get("affinity") or {}).get("podAntiAffinity", {})
            terms = anti.get("requiredDuringSchedulingIgnoredDuringExecution", [])
            one_per_node = any(
                t.get("topologyKey") == "kubernetes.io/hostname"
                and all(labels.get(k) == v for k, v in t["labelSelector"]["matchLabels"].items())
                for t in terms)
            spread = any(
                t.get("topologyKey") == "kubernetes.io/hostname" and t.get("maxSkew") == 1
                and t.get("whenUnsatisfiable") == "DoNotSchedule"
                for t in tmpl["spec"].get("topologySpreadConstraints", []))
            if not (one_per_node or spread):
                out.append("Job: nothing keeps its pods on distinct nodes (kubernetes.io/hostname)")
        if kind == "DaemonSet":
            env = {e["name"]: e.get("value") for c in tmpl["spec"]["containers"] for e in c.get("env", [])}
            if env.get("PATHBENCH_INTERVAL") in (None, "", "0"):
                out.append("DaemonSet: PATHBENCH_INTERVAL unset: it would run once and be restarted in a loop")
    return out

def dockerfile_problems(path, root):
    from dockerfile_parse import DockerfileParser
    out = []
    parser = DockerfileParser(path=str(path))
    ignored = [l.strip().rstrip("/") for l in (root / ".dockerignore").read_text().splitlines()
               if l.strip() and not l.startswith("#")]
    stages, bases = [], []
    args = {}
    for ins in parser.structure:
        kw, value = ins["instruction"], ins["value"]
        if kw == "ARG" and not stages:
            name, _, default = value.partition("=")
            args[name.strip()] = default.strip()
        if kw == "FROM":
            words = value.split()
            image = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), words[0])
            bases.append(image)
            stages.append(words[2] if len(words) == 3 and words[1].upper() == "AS" else str(len(stages)))
        if kw in ("COPY", "ADD"):
            words = shlex.split(value)
            flags = [w for w in words if w.startswith("--")]
            paths = [w for w in words if not w.startswith("--")]
            frm = [f.split("=", 1)[1] for f in flags if f.startswith("--from=")]
            if frm:
                if frm[0] not in stages[:-1]:
                    out.append(f"line {ins['startline'] + 1}: COPY --from={frm[0]} names no earlier stage")
                continue
            for src in paths[:-1]:
                rel = src.rstrip("/") or "."
                if rel != "." and not (root / rel).exists():
                    out.append(f"line {ins['startline'] + 1}: COPY source {src} is not in the repository")
                if any(rel == i or rel.startswith(i + "/") for i in ignored):
                    out.append(f"line {ins['startline'] + 1}: COPY source {src} is excluded by .dockerignore")
    if len(stages) < 2:
        out.append("not a multi-stage build")
    if not bases or not re.fullmatch(r"nvidia/cuda:13\.0\.\d+-devel-ubuntu24\.04", bases[0]):
        out.append(f"build stage base {bases[:1]} is not nvidia/cuda:13.0.x-devel-ubuntu24.04")
    if not re.fullmatch(r"nvidia/cuda:13\.0\.\d+-runtime-ubuntu24\.04", bases[-1] if bases else ""):
        out.append(f"runtime stage base {bases[-1:]} is not nvidia/cuda:13.0.x-runtime-ubuntu24.04")
    if not re.search(r"scripts/setup\.sh release", parser.content):
        out.append("the build stage does not build with scripts/setup.sh release")
    return out

import shlex
mode, root, files = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
result = {}
for f in files:
    result[f] = manifest_problems(f) if mode == "manifests" else dockerfile_problems(Path(f), root)
print(json.dumps(result))
'''

YAML_TO_JSON = r'''
import json, sys, yaml
print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1]))]))
'''


def tool(name: str) -> Path:
    return PYTHON.parent / name


def run(args: list[str | Path], **kw) -> subprocess.CompletedProcess[str]:
    kw.setdefault("timeout", 120)
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)


def show(label: str, p: subprocess.CompletedProcess[str]) -> None:
    """What the validator said, in the test log (the report quotes it)."""
    text = (p.stdout + p.stderr).strip()
    print(f"--- {label}: exit {p.returncode}\n{text}", file=sys.stderr)


def checks(mode: str, *files: Path) -> dict[str, list[str]]:
    p = run([PYTHON, "-c", CHECKS, mode, SOURCE, *files])
    if p.returncode != 0:
        raise AssertionError(f"checks under {PYTHON} failed: {p.stderr}")
    return json.loads(p.stdout)


def load_yaml(path: Path) -> list:
    p = run([PYTHON, "-c", YAML_TO_JSON, path])
    if p.returncode != 0:
        raise AssertionError(p.stderr)
    return json.loads(p.stdout)


class Broken:
    """A temporary copy of a repository file with one edit, for the negative controls."""

    def __init__(self, test: unittest.TestCase, rel: str, old: str, new: str, name: str | None = None):
        self.dir = tempfile.TemporaryDirectory(prefix="pathbench-deploy-")
        test.addCleanup(self.dir.cleanup)
        text = (SOURCE / rel).read_text()
        test.assertIn(old, text, f"{rel} changed: the negative control's anchor {old!r} is gone")
        self.path = Path(self.dir.name) / (name or Path(rel).name)
        self.path.write_text(text.replace(old, new, 1))


class KubernetesManifests(unittest.TestCase):
    def manifests(self) -> list[Path]:
        files = sorted((SOURCE / "ci" / "kubernetes").glob("*.yaml"))
        self.assertGreaterEqual({f.name for f in files}, {"job.yaml", "daemonset.yaml"})
        return files

    def validate(self, *files: Path, version: str | None = None) -> subprocess.CompletedProcess[str]:
        args: list[str | Path] = [tool("kubernetes-validate"), "--strict"]
        if version:
            args += ["-k", version]
        return run([*args, *files])

    def test_schema_strict(self) -> None:
        files = self.manifests()
        for version in K8S_VERSIONS:
            with self.subTest(kubernetes=version or "newest"):
                p = self.validate(*files, version=version)
                show(f"kubernetes-validate --strict {version or '(newest)'}", p)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                for f in files:
                    self.assertRegex(p.stdout, rf"{re.escape(str(f))} passed")

    def test_schema_rejects_unknown_field(self) -> None:
        # Negative control: a misspelt field (strict mode) and a wrong type.
        bad = Broken(self, "ci/kubernetes/job.yaml", "      nodeSelector:", "      nodeSelectr:")
        p = self.validate(bad.path, version=K8S_VERSIONS[0])
        show("kubernetes-validate --strict on job.yaml with nodeSelectr", p)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("nodeSelectr", p.stdout + p.stderr)
        bad = Broken(self, "ci/kubernetes/daemonset.yaml", "maxUnavailable: 1", "maxUnavailable: [1]")
        p = self.validate(bad.path, version=K8S_VERSIONS[0])
        self.assertNotEqual(p.returncode, 0, p.stdout)

    def test_guaranteed_qos_and_shape(self) -> None:
        files = self.manifests()
        problems = checks("manifests", *files)
        print(f"--- Guaranteed QoS and shape checks: {json.dumps(problems)}", file=sys.stderr)
        self.assertEqual({f: [] for f in map(str, files)}, problems)

    def test_guaranteed_qos_rejects_broken_copies(self) -> None:
        # Negative control: requests != limits, and a fractional CPU, must be found.
        cases = [
            ("ci/kubernetes/job.yaml", 'limits:\n              cpu: "4"\n              memory: 16Gi',
             'limits:\n              cpu: "4"\n              memory: 32Gi', "memory requests 16Gi != limits 32Gi"),
            ("ci/kubernetes/daemonset.yaml", 'cpu: "4"\n              memory: 16Gi\n              nvidia.com/gpu: 1\n            limits:\n              cpu: "4"',
             'cpu: 3500m\n              memory: 16Gi\n              nvidia.com/gpu: 1\n            limits:\n              cpu: 3500m',
             "is not a whole number of CPUs"),
            ("ci/kubernetes/job.yaml", "  parallelism: 4", "  parallelism: 2", "parallelism != completions"),
            ("ci/kubernetes/daemonset.yaml", "value: 6h", 'value: "0"', "PATHBENCH_INTERVAL unset"),
        ]
        for rel, old, new, expect in cases:
            with self.subTest(expect=expect):
                bad = Broken(self, rel, old, new)
                problems = checks("manifests", bad.path)[str(bad.path)]
                self.assertTrue(any(expect in x for x in problems), problems)
                # The schema alone passes them: only the QoS check catches these.
                self.assertEqual(self.validate(bad.path).returncode, 0)


class Dockerfile(unittest.TestCase):
    path = property(lambda self: SOURCE / "ci" / "docker" / "Dockerfile")

    def test_hadolint(self) -> None:
        p = run([tool("hadolint"), self.path])
        show("hadolint ci/docker/Dockerfile", p)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_hadolint_rejects_broken_copy(self) -> None:
        bad = Broken(self, "ci/docker/Dockerfile", "FROM nvidia/cuda:${CUDA_VERSION}-runtime-ubuntu24.04 AS runtime",
                     "FROM nvidia/cuda:${CUDA_VERSION}-runtime-ubuntu24.04 AS runtime\n"
                     "RUN apt-get update && apt-get install libnuma1\nCOPY /opt/x /y", "Dockerfile")
        p = run([tool("hadolint"), bad.path])
        show("hadolint on a copy with an unpinned apt-get install", p)
        self.assertNotEqual(p.returncode, 0)
        self.assertRegex(p.stdout, r"DL3008|DL3009|DL3015")

    def test_stages_and_copy_sources(self) -> None:
        problems = checks("dockerfile", self.path)[str(self.path)]
        print(f"--- Dockerfile stages and COPY sources: {problems}", file=sys.stderr)
        self.assertEqual(problems, [])
        self.assertTrue((SOURCE / ".dockerignore").is_file())

    def test_stage_check_rejects_broken_copy(self) -> None:
        bad = Broken(self, "ci/docker/Dockerfile", "COPY --from=build /opt/pathbench/", "COPY --from=builder /opt/pathbench/")
        # A copy outside the repository: its COPY sources are looked up in SOURCE, as the context.
        self.assertTrue(any("names no earlier stage" in x for x in checks("dockerfile", bad.path)[str(bad.path)]))
        bad = Broken(self, "ci/docker/Dockerfile", "COPY scenarios/ ", "COPY scenario/ ")
        self.assertTrue(any("is not in the repository" in x for x in checks("dockerfile", bad.path)[str(bad.path)]))
        bad = Broken(self, "ci/docker/Dockerfile", "COPY scenarios/ ", "COPY build/release/pathbench ")
        self.assertTrue(any("excluded by .dockerignore" in x or "not in the repository" in x
                            for x in checks("dockerfile", bad.path)[str(bad.path)]))


class CiExamples(unittest.TestCase):
    github = property(lambda self: SOURCE / "ci" / "examples" / "github-actions.yml")
    gitlab = property(lambda self: SOURCE / "ci" / "examples" / "gitlab-ci.yml")

    def actionlint(self, path: Path) -> subprocess.CompletedProcess[str]:
        with tempfile.TemporaryDirectory() as tmp:
            config = Path(tmp) / "actionlint.yaml"
            config.write_text("self-hosted-runner:\n  labels: [gpu]\n")  # the runner's custom label
            return run([tool("actionlint"), "-config-file", config, "-no-color", path])

    def schema(self, name: str, path: Path) -> subprocess.CompletedProcess[str]:
        return run([tool("check-jsonschema"), "--builtin-schema", name, path])

    def test_actionlint(self) -> None:
        p = self.actionlint(self.github)
        show(f"actionlint (shellcheck {'on' if shutil.which('shellcheck') else 'not installed'})", p)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_actionlint_rejects_broken_copy(self) -> None:
        bad = Broken(self, "ci/examples/github-actions.yml", "steps.venv.outputs.cache-hit", "steps.no_such_step.outputs.cache-hit")
        p = self.actionlint(bad.path)
        show("actionlint on a copy naming an undefined step", p)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("no_such_step", p.stdout)

    def test_github_schema(self) -> None:
        p = self.schema("vendor.github-workflows", self.github)
        show("check-jsonschema vendor.github-workflows", p)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        bad = Broken(self, "ci/examples/github-actions.yml", "timeout-minutes: 60", "timeout-minutes: soon")
        p = self.schema("vendor.github-workflows", bad.path)
        show("check-jsonschema vendor.github-workflows on timeout-minutes: soon", p)
        self.assertNotEqual(p.returncode, 0)

    def test_gitlab_schema(self) -> None:
        p = self.schema("vendor.gitlab-ci", self.gitlab)
        show("check-jsonschema vendor.gitlab-ci", p)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        bad = Broken(self, "ci/examples/gitlab-ci.yml", "  when: manual", "  when: sometimes")
        p = self.schema("vendor.gitlab-ci", bad.path)
        show("check-jsonschema vendor.gitlab-ci on when: sometimes", p)
        self.assertNotEqual(p.returncode, 0)

    def test_github_shape(self) -> None:
        (workflow,) = load_yaml(self.github)
        self.assertEqual(workflow["permissions"], {"contents": "read", "checks": "write"})
        steps = workflow["jobs"]["gate"]["steps"]
        uses = [s for s in steps if "uses" in s]
        checkouts = [s["with"] for s in uses if s["uses"].startswith("actions/checkout@")]
        pathbench = [c for c in checkouts if c.get("path") == "pathbench"]
        self.assertEqual(len(pathbench), 1, checkouts)
        self.assertIn("repository", pathbench[0])
        caches = [s["with"]["path"] for s in uses if s["uses"].startswith("actions/cache@")]
        self.assertTrue(any("build/release" in c for c in caches) and any("build/venv" in c for c in caches), caches)
        for s in uses:
            if s["uses"].startswith(("actions/upload-artifact@", "mikepenz/action-junit-report@")):
                self.assertIn("!cancelled()", s.get("if", ""), s)  # after a failed gate too
        gate = " ".join(s.get("run", "") for s in steps)
        self.assertRegex(gate, r"ci/gate\.sh .*--baselines")
        self.assertNotIn("scripts/run.sh", gate)

    def test_gitlab_shape(self) -> None:
        (config,) = load_yaml(self.gitlab)
        self.assertIn("-e build/", config["variables"]["GIT_CLEAN_FLAGS"])
        self.assertIn("build/venv/", config["default"]["cache"]["paths"])
        promote = config["pathbench-promote"]
        self.assertTrue(promote.get("resource_group"))
        script = "\n".join(promote["script"])
        for needle in ("git config user.name", "git config user.email", 'git checkout -B "$CI_COMMIT_REF_NAME"',
                       "PATHBENCH_PUSH_TOKEN", "git push"):
            self.assertIn(needle, script)
        self.assertNotIn("CI_JOB_TOKEN@", script)

    def unknown_options(self, *files: Path) -> tuple[int, list[str]]:
        """The pathbench subcommand options and ci/gate.sh options the files use: how many, and
        those that --help (ci/gate.sh's usage) does not list."""
        assert PATHBENCH is not None
        gate_usage = (SOURCE / "ci" / "gate.sh").read_text().split("usage()")[0]
        helps: dict[str, str] = {}
        seen, unknown = 0, []
        for f in files:
            for line in f.read_text().splitlines():
                for m in re.finditer(r"(?:build/release/pathbench |\$pathbench\"? |\bpathbench )"
                                     r"(run|gate|export|compare|list|inventory|baseline promote|baseline path)\b([^;|&]*)",
                                     line):
                    sub = m.group(1)
                    if sub not in helps:
                        p = run([PATHBENCH, *sub.split(), "--help"])
                        self.assertEqual(p.returncode, 0, p.stderr)
                        helps[sub] = p.stdout
                    for opt in re.findall(r"(?<![\w-])(--[a-z][a-z0-9_-]*)", m.group(2)):
                        seen += 1
                        if not re.search(rf"(?m)^\s+(?:-\w,)?{re.escape(opt)}\b", helps[sub]):
                            unknown.append(f"{f.name}: pathbench {sub} {opt}")
                for m in re.finditer(r"ci/gate\.sh ([^;|&]*)", line):
                    for opt in re.findall(r"(?<![\w-])(--[a-z][a-z0-9_-]*)", m.group(1)):
                        seen += 1
                        if f"[{opt} " not in gate_usage:
                            unknown.append(f"{f.name}: ci/gate.sh {opt}")
        return seen, unknown

    def test_commands_exist(self) -> None:
        """Every pathbench subcommand option and ci/gate.sh option the deployment files use."""
        if PATHBENCH is None:
            self.skipTest("no --pathbench given")
        files = [self.github, self.gitlab, *sorted((SOURCE / "ci" / "kubernetes").glob("*.yaml")),
                 SOURCE / "ci" / "docker" / "pathbench-node.sh"]
        seen, unknown = self.unknown_options(*files)
        print(f"--- pathbench/ci/gate.sh options used: {seen}, unknown: {unknown}", file=sys.stderr)
        self.assertEqual(unknown, [])
        self.assertGreater(seen, 10)
        # Negative control: a misspelt option of each kind is found.
        bad = Broken(self, "ci/examples/gitlab-ci.yml", "--dir ci/baselines --force", "--dir ci/baselines --forse")
        bad2 = Broken(self, "ci/examples/github-actions.yml", '--baselines "$BASELINES"', '--baseline "$BASELINES"')
        self.assertEqual(self.unknown_options(bad.path, bad2.path)[1],
                         ["gitlab-ci.yml: pathbench baseline promote --forse", "github-actions.yml: ci/gate.sh --baseline"])


class EntryPoint(unittest.TestCase):
    script = property(lambda self: SOURCE / "ci" / "docker" / "pathbench-node.sh")

    def test_shell(self) -> None:
        self.assertEqual(run(["bash", "-n", self.script]).returncode, 0)
        if shutil.which("shellcheck"):
            p = run(["shellcheck", self.script])
            self.assertEqual(p.returncode, 0, p.stdout)

    def env(self, tmp: Path, **extra: str) -> dict[str, str]:
        assert PATHBENCH is not None
        env = dict(os.environ, NODE_NAME="node-a", PATHBENCH=str(PATHBENCH),
                   PATHBENCH_RESULTS_DIR=str(tmp / "results"), PATHBENCH_TEXTFILE_DIR=str(tmp / "textfile"),
                   PATHBENCH_RUN_ARGS="--quick --filter ^host_memory/measure=memcpy/.*page=4k")
        env.update(extra)
        return env

    def test_once(self) -> None:
        if PATHBENCH is None:
            self.skipTest("no --pathbench given")
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            p = run(["bash", self.script], cwd=SOURCE, env=self.env(tmp, PATHBENCH_INTERVAL="0"), timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            result = json.loads((tmp / "results" / "node-a.json").read_text())
            self.assertTrue(result["complete"])
            self.assertTrue(result["cases"])
            prom = (tmp / "textfile" / "pathbench.prom").read_text()
            self.assertIn("pathbench_info{", prom)
            self.assertEqual(sorted(os.listdir(tmp / "textfile")), ["pathbench.prom"])  # no temporaries left

    def test_periodic_until_sigterm(self) -> None:
        if PATHBENCH is None:
            self.skipTest("no --pathbench given")
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            proc = subprocess.Popen(["bash", str(self.script)], cwd=SOURCE, text=True,
                                    env=self.env(tmp, PATHBENCH_INTERVAL="1", PATHBENCH_KEEP="2"),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            try:
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:
                    if proc.poll() is not None:
                        break
                    if (tmp / "results").is_dir() and len(list((tmp / "results").glob("node-a-*.json"))) >= 3:
                        break
                    time.sleep(0.2)
                time.sleep(1.2)
                self.assertIsNone(proc.poll(), "the periodic entry point exited on its own")
                proc.send_signal(signal.SIGTERM)
                out, err = proc.communicate(timeout=60)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            self.assertEqual(proc.returncode, 0, err)
            self.assertIn("stopped", err)
            kept = sorted((tmp / "results").glob("node-a-*.json"))
            self.assertLessEqual(len(kept), 2, kept)  # PATHBENCH_KEEP
            self.assertTrue((tmp / "textfile" / "pathbench.prom").is_file())


def main() -> None:
    global PYTHON, SOURCE, PATHBENCH
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", required=True, help="interpreter of the venv with tests/requirements.txt")
    parser.add_argument("--source", default=".", help="repository root")
    parser.add_argument("--pathbench", help="the built binary (commands in the YAML files, the entry point's runs)")
    args, rest = parser.parse_known_args()
    # The venv's own bin/ (not the interpreter a symlink resolves to): its tools sit beside it.
    PYTHON = Path(os.path.abspath(args.python))
    SOURCE = Path(args.source).resolve()
    PATHBENCH = Path(args.pathbench).resolve() if args.pathbench else None
    missing = [] if PYTHON.exists() else [str(PYTHON)]
    missing += [str(tool(t)) for t in TOOLS if PYTHON.exists() and not tool(t).exists()]
    if not missing and run([PYTHON, "-c", "import yaml, dockerfile_parse"]).returncode != 0:
        missing.append("PyYAML/dockerfile-parse in " + str(PYTHON))
    if missing:
        print("SKIP: not installed: " + ", ".join(missing) +
              " (scripts/setup.sh --test-deps installs tests/requirements.txt into build/venv)", file=sys.stderr)
        sys.exit(EXIT_SKIP)
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)


if __name__ == "__main__":
    main()
