"""Completion for every argument, through the shells' own protocols and through kubectl's plugin
completion (kubectl 1.26+ runs ``kubectl_complete-wmap``, installed next to ``kubectl-wmap``):
commands, types (comma lists too), names per type and namespace, pods for ``group``, definition
names for ``explain``/``definitions``, namespaces, contexts and ``-o`` values, each compared with
what kubectl itself lists for the same objects."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.kube import KubeTestClient
from tests.support.seed import create_deployment_tree, create_jobset_tree

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.usefixtures("bundled_catalog"),
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed"),
]

BIN = Path(sys.executable).parent


def _env(kc: str) -> dict[str, str]:
    return {
        **os.environ,
        "KUBECONFIG": kc,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        # The 2 s default bounds a user's TAB; a loaded CI machine needs longer for discovery + list.
        "WMAP_COMPLETION_TIMEOUT": "25",
    }


def _kubectl_complete(kc: str, *words: str) -> tuple[list[str], str]:
    """``kubectl __complete wmap WORDS...`` (what kubectl's shell scripts run on TAB): the
    candidates and the directive line."""
    proc = subprocess.run(
        ["kubectl", "__complete", "wmap", *words], env=_env(kc), capture_output=True, text=True, timeout=60
    )
    lines = proc.stdout.splitlines()
    assert lines and lines[-1].startswith(":"), (proc.stdout, proc.stderr)
    return [ln.split("\t", 1)[0] for ln in lines[:-1]], lines[-1]


def _shell(kc: str, shell: str, words: str, cword: int) -> list[str]:
    # fish passes the word being completed itself as COMP_CWORD; bash and zsh its index
    cword_value = words.split()[cword] if shell == "fish" else str(cword)
    env = {**_env(kc), "_WMAP_COMPLETE": f"{shell}_complete", "COMP_WORDS": words, "COMP_CWORD": cword_value}
    proc = subprocess.run(
        [sys.executable, "-m", "workload_map.cli.main"], env=env, capture_output=True, text=True, timeout=60
    )
    if shell == "bash":
        return [ln.split(",", 1)[1] for ln in proc.stdout.splitlines() if "," in ln]
    if shell == "zsh":
        lines = proc.stdout.splitlines()
        return [lines[i + 1] for i in range(0, len(lines) - 2, 3) if lines[i] == "plain"]
    return [ln.split(",", 1)[1].split("\t")[0] for ln in proc.stdout.splitlines() if "," in ln]


def test_the_plugin_completion_executable_is_installed_beside_the_plugin() -> None:
    assert (BIN / "kubectl_complete-wmap").exists() and (BIN / "kubectl-wmap").exists()


def test_kubectl_wmap_tab_completes_commands_types_names_and_flags(
    kube: KubeTestClient, namespace: str, kc: str
) -> None:
    create_deployment_tree(kube, "web", namespace, replicas=1)
    create_deployment_tree(kube, "api", namespace, replicas=1)
    create_jobset_tree(kube, "train", namespace, (("leader", 1),))
    commands, directive = _kubectl_complete(kc, "")
    assert {"get", "describe", "explain", "group", "definitions", "completion"} <= set(commands)
    assert directive == ":4"  # no file names for a command word
    types, _ = _kubectl_complete(kc, "get", "depl")
    assert types == ["deployment"]
    types, _ = _kubectl_complete(kc, "get", "deployment,job")
    assert {"deployment,job.v1.batch", "deployment,jobset"} <= set(types)  # Job: two kinds named so
    theirs = subprocess.run(
        ["kubectl", "--kubeconfig", kc, "get", "deploy", "-n", namespace, "-o", "name"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    names, _ = _kubectl_complete(kc, "get", "deployment", "-n", namespace, "")
    assert sorted(names) == sorted(n.split("/", 1)[1] for n in theirs) == ["api", "web"]
    slashed, _ = _kubectl_complete(kc, "describe", "-n", namespace, "jobset/tr")
    assert slashed == ["jobset/train"]
    outputs, _ = _kubectl_complete(kc, "get", "-o", "js")
    assert {"json", "jsonpath=", "jsonpath-file=", "jsonpath-as-json="} <= set(outputs)
    spaces, _ = _kubectl_complete(kc, "get", "-n", namespace[:-2])
    assert namespace in spaces
    contexts, _ = _kubectl_complete(kc, "--context", "")
    theirs = subprocess.run(
        ["kubectl", "--kubeconfig", kc, "config", "get-contexts", "-o", "name"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    assert contexts == sorted(theirs)


def test_every_shell_completes_pods_definitions_and_types(
    kube: KubeTestClient, namespace: str, kc: str
) -> None:
    _, pods = create_jobset_tree(kube, "train", namespace, (("leader", 1), ("workers", 2)))
    pod_names = sorted(p["metadata"]["name"] for p in pods)
    for shell in ("bash", "zsh", "fish"):
        got = _shell(kc, shell, f"wmap group -n {namespace} train-", 4)
        assert sorted(got) == pod_names, (shell, got)
        got = _shell(kc, shell, "wmap explain jobset-x-k8s", 2)
        assert got == ["jobset-x-k8s-io-jobset-v1alpha2"], (shell, got)
        got = _shell(kc, shell, "wmap definitions lead", 2)
        assert "leaderworkerset" in got, (shell, got)
        got = _shell(kc, shell, "wmap get --phase Ru", 3)
        assert got == ["Running"], (shell, got)
        got = _shell(kc, shell, "wmap gang --scheduler vo", 3)
        assert got == ["volcano"], (shell, got)
