"""Benchmark: the ``wmap`` CLI against kubectl on a real kube-apiserver (tests/support).

Setup: a TestCluster with the corpus CRDs; 2,000 ~20 KB JobSets (bench/fixtures.py) in one namespace
(created concurrently, 16 threads), a JobSet with 1,000 owned pods in another, and 3,000 more JobSets
for the memory measurement (5,000 workloads in all).

Measured (median of interleaved rounds, ratios from the same run):

* ``wmap get jobsets -n NS`` (table) and ``-o json`` vs ``kubectl get jobsets -n NS -o json``: <= 1.5x
* ``wmap describe jobset/big -n NS2`` (1,000 pods) vs ``kubectl get pods -n NS2 -o json``: <= 1x
* ``wmap --help`` and ``wmap --version`` vs ``python -c pass``: <= 4x (issue 24)
* peak RSS of ``wmap get -A --all-types`` over 5,000 workloads (``RUSAGE_CHILDREN``): < 400 MB

``wmap`` is measured as users install it: the wheel is built and installed with its dependencies
into a fresh virtualenv (as tests/packaging does), so pip has compiled the bytecode and no
development-only package is importable (the dev venv's trio and rich are imported by httpcore and
httpx when present: ~0.35 s per command here). ``--dev`` measures the development venv instead.
Either way the children run without ``PYTHONDONTWRITEBYTECODE`` and with a private
``PYTHONPYCACHEPREFIX``, so source trees (editable install, ``--baseline``) get cached bytecode in
the warm-up round, as an installed package has; compiling every module on every run is not what
users see. The warm-up round also fills the user's caches in a private ``XDG_CACHE_HOME``
(discovery, the root help, the parsed catalog), as a user's earlier commands have; kubectl keeps its
discovery cache under the same private ``HOME``. The kubectl binary and its client version are
printed with the conditions.

With ``--baseline SRC`` (e.g. a checkout of the previous commit's ``src``), ``wmap --help``,
``describe`` and ``get`` (table) also run from that tree, and its peak RSS of ``get -A --all-types``
is measured too (``python -c 'from workload_map.cli.main import main;
main()'``, as its console script did) in the same rounds, and their ratios are printed beside.

Prints the ratios; exits 1 when a target is missed unless ``--no-assert``. Uses the bundled catalog
when it covers JobSet, else the test catalog (tests/cli/data/catalog).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tests.support.fixtures import start_corpus_cluster  # noqa: E402
from tests.support.kube import KubeTestClient, owner_reference  # noqa: E402

from fixtures import jobset as big_jobset  # noqa: E402

PY = sys.executable
WMAP = str(Path(PY).with_name("wmap"))


def kubectl() -> str:
    """The kubectl binary itself. Google Cloud SDK's ``kubectl`` is a dispatcher that starts one of
    the ``kubectl.1.NN`` binaries beside it: the one it would start is measured, without the
    dispatcher's own start-up, so that wmap is not compared with a slower kubectl than users have."""
    found = shutil.which("kubectl") or "/usr/bin/kubectl"
    if not Path(found).exists():
        sys.exit("kubectl not found (apt-get install kubernetes-client)")
    out = subprocess.run([found, "version", "--client"], capture_output=True, text=True, check=False).stdout
    m = re.search(r"Client Version: v(\d+)\.(\d+)\.\d+-dispatcher", out)
    if m:
        real = Path(found).resolve().with_name(f"kubectl.{m.group(1)}.{m.group(2)}")
        if real.exists():
            return str(real)
    return found


def clean(obj: dict[str, Any], namespace: str, name: str) -> dict[str, Any]:
    meta = obj["metadata"]
    for key in ("managedFields", "uid", "resourceVersion", "creationTimestamp", "generation", "selfLink"):
        meta.pop(key, None)
    meta["namespace"] = namespace
    meta["name"] = name
    obj.pop("status", None)
    return obj


def create_many(kube: KubeTestClient, objs: list[dict[str, Any]], threads: int = 16) -> None:
    def one(o: dict[str, Any]) -> None:
        kube.create(o)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, objs))


def timed(cmd: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()[-2000:]}")
    return elapsed


def install_wheel(tmp: Path, env: dict[str, str]) -> tuple[str, str]:
    """Build the wheel and install it with its dependencies into a fresh venv under ``tmp``:
    (its python, its ``wmap``)."""
    venv = tmp / "venv"
    dist = tmp / "dist"
    python = str(venv / "bin" / "python")
    for cmd in (
        [PY, "-m", "venv", str(venv)],
        [python, "-m", "pip", "install", "-q", "setuptools>=77", "wheel"],
        [python, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
    ):
        subprocess.run(cmd, env=env, check=True, cwd=tmp)
    wheel = next(dist.glob("*.whl"))
    subprocess.run([python, "-m", "pip", "install", "-q", str(wheel)], env=env, check=True, cwd=tmp)
    return python, str(venv / "bin" / "wmap")


def peak_rss_mb(cmd: list[str], env: dict[str, str]) -> float:
    code = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    out = subprocess.run([PY, "-c", code, *cmd], env=env, capture_output=True, text=True, check=True)
    return int(out.stdout.strip()) / 1024.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-assert", action="store_true", help="report only; never fail on targets")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--extra", type=int, default=3000, help="more JobSets for the RSS measurement")
    ap.add_argument("--baseline", metavar="SRC", help="source tree to compare --help, describe and get with")
    ap.add_argument("--dev", action="store_true", help="measure the development venv, not the wheel")
    args = ap.parse_args(argv)

    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    catalog = ROOT / "src" / "workload_map" / "catalog" / "data"
    if not any("jobset" in p.name for p in catalog.glob("*.yaml")):
        env["WMAP_CATALOG_DIR"] = str(ROOT / "tests" / "cli" / "data" / "catalog")
    tmp = Path(tempfile.mkdtemp(prefix="wmap-bench-"))
    env["XDG_CACHE_HOME"] = str(tmp / "cache")
    env["HOME"] = str(tmp)
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    py, wmap = PY, WMAP
    if not args.dev:
        print("building the wheel and installing it into a fresh venv ...", flush=True)
        py, wmap = install_wheel(tmp, env)
    print(
        f"conditions: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; wmap from "
        f"{'the development venv' if args.dev else 'the wheel in a fresh venv'} ({wmap})",
        flush=True,
    )
    k = kubectl()
    version = subprocess.run([k, "version", "--client"], capture_output=True, text=True, check=False)
    print(f"compared with {k}: {' '.join(version.stdout.split()) or version.stderr.strip()}", flush=True)
    print("starting the test cluster ...", flush=True)
    cluster = start_corpus_cluster()
    try:
        kc = str(cluster.write_kubeconfig(tmp / "kubeconfig", user="admin"))
        kube = KubeTestClient(cluster.server, cluster.admin_token, cluster.ca_file)
        ns = kube.create_namespace("bench")
        t = time.perf_counter()
        create_many(kube, [clean(big_jobset(i), ns, f"js-{i:05d}") for i in range(args.count)])
        print(f"created {args.count} JobSets in {time.perf_counter() - t:.1f}s", flush=True)

        ns2 = kube.create_namespace("bench-pods")
        js = kube.create(clean(big_jobset(0), ns2, "big"))
        roles = [rj["name"] for rj in js["spec"]["replicatedJobs"]]
        pods = []
        for i in range(args.pods):
            role = roles[i % len(roles)]
            pods.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": f"big-{role}-{i:04d}",
                        "namespace": ns2,
                        "labels": {"jobset.sigs.k8s.io/replicatedjob-name": role},
                        "ownerReferences": [owner_reference(js)],
                    },
                    "spec": {
                        "nodeName": f"node-{i % 50}",
                        "containers": [
                            {"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "4"}}}
                        ],
                    },
                }
            )
        create_many(kube, pods)

        base = ["--kubeconfig", kc]
        kenv = dict(env)
        cases = {
            "wmap get (table)": [wmap, "get", "jobsets", "-n", ns, *base],
            "wmap get -o json": [wmap, "get", "jobsets", "-n", ns, "-o", "json", *base],
            "kubectl get -o json": [k, "get", "jobsets", "-n", ns, "-o", "json", *base],
            "wmap describe (1000 pods)": [wmap, "describe", "jobset/big", "-n", ns2, *base],
            "kubectl get pods -o json": [k, "get", "pods", "-n", ns2, "-o", "json", *base],
            "wmap --help": [wmap, "--help"],
            "wmap --version": [wmap, "--version"],
            "python -c pass": [py, "-c", "pass"],
        }
        envs = {name: kenv for name in cases}
        if args.baseline:
            benv = dict(kenv, PYTHONPATH=str(Path(args.baseline).resolve()))
            old = [py, "-c", "from workload_map.cli.main import main; main()"]
            cases["baseline --help"] = [*old, "--help"]
            cases["baseline describe"] = [*old, "describe", "jobset/big", "-n", ns2, *base]
            cases["baseline get (table)"] = [*old, "get", "jobsets", "-n", ns, *base]
            for name in ("baseline --help", "baseline describe", "baseline get (table)"):
                envs[name] = benv
        quick = ("wmap --help", "wmap --version", "python -c pass", "baseline --help")
        for name, cmd in cases.items():  # warm discovery caches, the help cache and page cache
            timed(cmd, envs[name])
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.rounds):
            for name, cmd in cases.items():
                reps = 5 if name in quick else 1
                samples[name].append(min(timed(cmd, envs[name]) for _ in range(reps)))
        med = {name: statistics.median(v) for name, v in samples.items()}
        for name, v in med.items():
            print(f"{name:28s} {v * 1000:9.1f} ms")

        ns3 = kube.create_namespace("bench-more")
        create_many(kube, [clean(big_jobset(i), ns3, f"more-{i:05d}") for i in range(args.extra)])
        rss = peak_rss_mb([wmap, "get", "-A", "--all-types", *base], kenv)
        if args.baseline:
            old_rss = peak_rss_mb([*old, "get", "-A", "--all-types", *base], benv)

        ratios = {
            "get table / kubectl json": (med["wmap get (table)"] / med["kubectl get -o json"], 1.5),
            "get json / kubectl json": (med["wmap get -o json"] / med["kubectl get -o json"], 1.5),
            "describe / kubectl pods json": (
                med["wmap describe (1000 pods)"] / med["kubectl get pods -o json"],
                1.0,
            ),
            "--help / python -c pass": (med["wmap --help"] / med["python -c pass"], 4.0),
            "--version / python -c pass": (med["wmap --version"] / med["python -c pass"], 4.0),
        }
        if args.baseline:
            print(
                "baseline side by side: --help / python -c pass "
                f"{med['baseline --help'] / med['python -c pass']:.2f} (this "
                f"{med['wmap --help'] / med['python -c pass']:.2f}); describe / kubectl pods json "
                f"{med['baseline describe'] / med['kubectl get pods -o json']:.2f} (this "
                f"{med['wmap describe (1000 pods)'] / med['kubectl get pods -o json']:.2f}); "
                "get table / kubectl json "
                f"{med['baseline get (table)'] / med['kubectl get -o json']:.2f} (this "
                f"{med['wmap get (table)'] / med['kubectl get -o json']:.2f}); peak RSS of get -A "
                f"--all-types {old_rss:.0f} MB (this {rss:.0f} MB)"
            )
        failed = []
        for name, (ratio, target) in ratios.items():
            ok = ratio <= target
            print(f"ratio {name:30s} = {ratio:5.2f}  (target <= {target}) {'ok' if ok else 'MISSED'}")
            if not ok:
                failed.append(name)
        total = args.count + args.extra + 1
        rss_ok = rss < 400
        print(f"peak RSS of wmap get -A --all-types over {total} workloads = {rss:.0f} MB (target < 400 MB)")
        if not rss_ok:
            failed.append("rss")
        kube.close()
    finally:
        cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    if failed and not args.no_assert:
        print("missed:", ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
