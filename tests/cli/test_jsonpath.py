"""``-o jsonpath`` against kubectl's own jsonpath on the test API server.

Two comparisons, both on the same data:

- the engine (views/jsonpath.py) on ``kubectl get -o json --show-managed-fields`` output equals
  ``kubectl get -o jsonpath=T`` for a table of templates over real Pods, Jobs and a JobSet,
  errors included (kubectl's words, its first line);
- ``wmap get TYPE -o jsonpath=T`` equals kubectl's jsonpath over a list holding the same view
  documents (stored as custom objects of a schemaless CRD, one per view document, in
  ``wmap``'s order), and jq over ``wmap get -o json``.

Where Go walks a map in random order (``*`` and ``..``), the values are compared as multisets.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.cli.helpers import kubectl, wmap
from tests.support.crds import install_crds, schemaless_crd
from tests.support.kube import KubeTestClient
from tests.support.seed import create_deployment_tree, create_jobset_tree
from workload_map.views.jsonpath import JSONPathExecutionError, JSONPathParseError, parse

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed"),
]

DOCUMENT_CRD = schemaless_crd("jsonpath.test.wmap.io", "Document", "documents")

#: Templates over real objects: fields, indexes, slices, unions, filters, ranges (nested, empty,
#: unterminated), literals, recursive descent, wildcards, and the errors of each.
OBJECT_TEMPLATES = [
    "{.items[*].metadata.name}",
    '{range .items[*]}{.metadata.name}{"\\t"}{.status.phase}{"\\n"}{end}',
    "{.items[0].metadata.labels}",
    "{.items[0].spec.containers[0].resources}",
    "literal {.items[0].kind} text",
    "{.items[-1:].metadata.name}{.items[-1].kind}{.items[1:1]}{.items[::2].metadata.name}",
    "{.items[0,1].metadata.name}",
    "{.items[*]['metadata']['name']}",
    "{.items[0].metadata['name','namespace']}",
    '{.items[?(@.status.phase=="Running")].metadata.name}',
    "{.items[?(@.metadata.name!='nope')].metadata.name}",
    '{.items[?(@.metadata.name<"z")].metadata.name}',
    "{.items[?(@.spec.nodeName)].metadata.name}",
    "{.items[?(@.spec.terminationGracePeriodSeconds>=30)].metadata.name}",
    "{.items[?(@.status.containerStatuses[0].ready==true)].metadata.name}",
    "{.items[*].metadata.ownerReferences[?(@.controller==true)].kind}",
    '{.items[*].status.conditions[?(@.type=="Ready")].status}',
    "{.items[0].spec.containers[0].resources.limits.nvidia\\.com/gpu}",
    "{range .items[*]}{.metadata.name}:{range .spec.containers[*]} {.name}{end};{end}",
    "{range .items[*]}{.kind}",
    "{range .items[*]}{range .spec.containers[*]}{.name}{end}{.kind}",
    "{range .nothing[*]}{.kind}{end}{.kind}",
    "{.missing}{.items.x}{.items[0].metadata.name.x}{.}",
    '{true}{1}{1.5}{"a" "b"}{$.kind}{ @.kind }',
    "{.items[0].metadata.name.*}",
    "{..name}",
    "{.items[*]..kind}",
    "{.items[0].metadata.*}",
    # errors
    "{.items[99]}",
    "{.items[-99]}",
    "{.items[0:1:0]}",
    "{.items[0].kind[0]}",
    "{end}",
    "{range .items[*]}{end}{end}",
    "{foo}",
    "{.items[?(@.metadata.name==1)]}",
    "{.items[?(@.spec.terminationGracePeriodSeconds>20.5)]}",
    "{.items[?(@.status.containerStatuses[0].ready<true)]}",
    "{.items[?(@.metadata=='x')]}",
    "{.items[0",
    "{.items[0]",
    '{"abc}',
    '{.items[?(@.x=="a"}',
    "{.items[a]}",
    '{.items[*]["metadata.name"]}',
    "{.items[1:x]}",
    "{....a}",
    "{#}",
    "{.items[*].metadata.name,.kind}",
]


def _ours(template: str, data: Any) -> tuple[int, str]:
    try:
        return 0, parse(template).render(data)
    except JSONPathParseError as exc:
        return 1, f"error: error parsing jsonpath {template}, {exc}\n"
    except JSONPathExecutionError as exc:
        return 1, f"error: error executing jsonpath {json.dumps(template)}: Error executing template: {exc}."


def _same(template: str, theirs: str, ours: str) -> bool:
    if theirs == ours:
        return True
    unordered = "*" in template.replace("[*]", "") or ".." in template
    return unordered and sorted(theirs.split()) == sorted(ours.split())


def _first_part(stderr: str) -> str:
    return stderr.split(" Printing more information", 1)[0]


@pytest.mark.parametrize("target", [("pods",), ("jobs",), ("jobsets",), ("pods", "first")])
def test_engine_prints_what_kubectl_prints(
    target: tuple[str, ...], kube: KubeTestClient, namespace: str, kc: str
) -> None:
    _js, pods = create_jobset_tree(kube, "train", namespace, (("leader", 1), ("workers", 2)))
    create_deployment_tree(kube, "web", namespace, replicas=2)
    args = ["get", target[0], *([pods[0]["metadata"]["name"]] if len(target) > 1 else []), "-n", namespace]
    data = json.loads(kubectl(kc, *args, "-o", "json", "--show-managed-fields").stdout)
    failures = []
    for template in OBJECT_TEMPLATES:
        k = kubectl(kc, *args, "-o", f"jsonpath={template}")
        theirs = k.stdout if k.returncode == 0 else _first_part(k.stderr)
        rc, ours = _ours(template, data)
        if rc == 1:
            ours = _first_part(ours)
        if (rc != 0) != (k.returncode != 0) or not _same(template, theirs, ours):
            failures.append(f"{template!r}\n  kubectl: {theirs[:200]!r}\n  ours:    {ours[:200]!r}")
    assert not failures, "\n".join(failures)


#: Templates over the view model (JSON Schema view.v1); none names kind, apiVersion or metadata,
#: which the stored copies must carry as custom objects.
VIEW_TEMPLATES = [
    "{.items[*].name}",
    '{range .items[*]}{.name}{"\\t"}{.primaryPhase}{"\\t"}{.resources.gpus}{"\\n"}{end}',
    "{.items[*].components[*].name}",
    "{range .items[*]}{.name}:{range .components[*]} {.name}={.ready}/{.desired}{end}{'\\n'}{end}",
    '{.items[?(@.primaryPhase=="Running")].name}',
    "{.items[?(@.resources.gpus>4)].name}",
    "{.items[0].resources}",
    "{.items[-1:].labels}",
    "{.items[*].pods.ready}",
    "{.items[99]}",
    "{.items[?(@.name==1)]}",
]


@pytest.mark.usefixtures("bundled_catalog")
def test_wmap_jsonpath_equals_kubectl_and_jq_on_the_view_documents(
    kube: KubeTestClient, namespace: str, kc: str
) -> None:
    for name, roles in (("small", (("leader", 1),)), ("big", (("leader", 1), ("workers", 2)))):
        create_jobset_tree(kube, name, namespace, roles, gpus=2)
    rc, listing, err = wmap("get", "jobsets", "-n", namespace, "-o", "json", "--kubeconfig", kc)
    assert rc == 0, err
    views = json.loads(listing)["items"]
    assert len(views) == 2
    install_crds(kube, [DOCUMENT_CRD], downlevel=False)
    store = kube.create_namespace("wmap-jp")
    for i, view in enumerate(views):
        body = {k: v for k, v in view.items() if k not in ("kind", "apiVersion")}
        meta = {"name": f"d{i:03d}", "namespace": store}
        kube.create({"apiVersion": "jsonpath.test.wmap.io/v1", "kind": "Document", "metadata": meta, **body})
    for template in VIEW_TEMPLATES:
        k = kubectl(kc, "get", "documents.jsonpath.test.wmap.io", "-n", store, "-o", f"jsonpath={template}")
        rc, out, err = wmap(
            "get", "jobsets", "-n", namespace, "-o", f"jsonpath={template}", "--kubeconfig", kc
        )
        if k.returncode == 0:
            assert (rc, out) == (0, k.stdout), template
        else:
            assert rc == 1 and out == "", template
            error = err[err.index("error: ") :]
            assert _first_part(error) == _first_part(k.stderr), template
    if shutil.which("jq"):
        names = subprocess.run(
            ["jq", "-r", '[.items[].name] | join(" ")'],
            input=listing,
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
        rc, out, _ = wmap(
            "get", "jobsets", "-n", namespace, "-o", "jsonpath={.items[*].name}", "--kubeconfig", kc
        )
        assert out == names and names.split() == [v["name"] for v in views]


@pytest.mark.usefixtures("bundled_catalog")
def test_jsonpath_file_as_json_and_template_errors(
    kube: KubeTestClient, namespace: str, kc: str, tmp_path: Path
) -> None:
    create_jobset_tree(kube, "one", namespace, (("leader", 1),))
    template = tmp_path / "t.jsonpath"
    template.write_text("{range .items[*]}{.name}{'\\n'}{end}\n")
    rc, out, err = wmap(
        "get", "jobsets", "-n", namespace, "-o", f"jsonpath-file={template}", "--kubeconfig", kc
    )
    assert (rc, out) == (0, "one\n"), err
    rc, out, err = wmap(
        "get", "jobset/one", "-n", namespace, "-o", "jsonpath-as-json={.name}", "--kubeconfig", kc
    )
    assert (rc, out) == (0, '[\n    "one"\n]\n'), err
    theirs = kubectl(kc, "get", "jobsets", "-n", namespace, "-o", "jsonpath={.items[0").stderr.strip()
    rc, out, err = wmap("get", "jobsets", "-n", namespace, "-o", "jsonpath={.items[0", "--kubeconfig", kc)
    assert rc == 2 and out == "" and theirs in err
    theirs = kubectl(kc, "get", "jobsets", "-n", namespace, "-o", "jsonpath=").stderr.strip()
    rc, out, err = wmap("get", "jobsets", "-n", namespace, "-o", "jsonpath=", "--kubeconfig", kc)
    assert rc == 2 and theirs in err
    rc, out, err = wmap("get", "jobsets", "-n", namespace, "-o", f"jsonpath-file={tmp_path / 'nope'}")
    assert rc == 2 and "nope" in err
