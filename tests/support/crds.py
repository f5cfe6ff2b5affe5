"""The real framework CRDs of ``../shared/crds``, made installable into kube-apiserver v1.20.

v1.20 predates a few CRD schema keywords; :func:`downlevel_crd` removes them (see
``../shared/bin/README.md``). Three CRD names exist twice in the corpus (see ``shared/crds/SOURCES.md``):
``mpijobs.kubeflow.org``, ``dynamographdeployments.nvidia.com`` and
``resourcebindings.work.karmada.io``. :data:`DEFAULT_PREFER` picks one file for each; pass
``prefer=`` to pick the other, or :func:`swap_crd` on a running cluster.

The project's own Karta CRD (``src/workload_map/crd/kartas.run.ai.yaml``) is made installable by
:func:`karta_crd_doc`; :func:`ensure_karta_crd` / :func:`remove_karta_crd` install and delete it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson
import yaml

from tests.support.apiserver_binary import cache_dir, shared_dir
from tests.support.kube import KubeApiError, KubeTestClient
from workload_map.crd.generate import shipped_crd

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available

Obj = dict[str, Any]

CRD_API = "apiextensions.k8s.io/v1"
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

#: Schema keywords v1.20 rejects; removed at any depth.
UNSUPPORTED_SCHEMA_KEYS = frozenset(
    {
        "x-kubernetes-validations",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-map-type",
    }
)

#: For CRD names that more than one corpus file defines: the file (relative to the crds dir) to use.
DEFAULT_PREFER: dict[str, str] = {
    # kubeflow/mpi-operator v2beta1, not the training-operator's v1.
    "mpijobs.kubeflow.org": "mpi-operator/kubeflow.org_mpijobs.yaml",
    # The v1alpha1-only CRD (Dynamo <= 1.1) whose examples in shared/docs were schema-checked; the
    # v1beta1 one (dynamo-v1beta1/) needs a conversion webhook for any v1alpha1 request.
    "dynamographdeployments.nvidia.com": "dynamo/nvidia.com_dynamographdeployments.yaml",
    # Karmada's HEAD ResourceBinding (adds spec.clusters[].components for multi-template workloads);
    # karmada/ holds the v1.18.2 release file with the same CRD name.
    "resourcebindings.work.karmada.io": "karmada-main/work.karmada.io_resourcebindings.yaml",
}


def crds_dir() -> Path:
    """``$WMAP_SHARED_DIR/crds`` or ``<repo>/../shared/crds``."""
    return shared_dir() / "crds"


def load_yaml_docs(path: Path) -> list[Obj]:
    with path.open("rb") as fh:
        return [doc for doc in yaml.load_all(fh, Loader=_Loader) if doc]


def load_crd_docs(paths: Iterable[Path]) -> list[Obj]:
    """All ``CustomResourceDefinition`` documents in ``paths``."""
    docs: list[Obj] = []
    for path in paths:
        docs.extend(d for d in load_yaml_docs(path) if d.get("kind") == "CustomResourceDefinition")
    return docs


def corpus_files(directory: Path | None = None) -> list[Path]:
    base = directory or crds_dir()
    return sorted(p for p in base.rglob("*.yaml") if p.is_file())


_MEMO: dict[str, bytes] = {}


def corpus_crds(
    *, prefer: Mapping[str, str] | None = None, directory: Path | None = None
) -> list[tuple[Path, Obj]]:
    """(file, CRD doc) for every CRD in the corpus, one per CRD name (conflicts resolved by ``prefer``,
    which is merged over :data:`DEFAULT_PREFER`). An unresolved conflict is an error.

    Parsing the ~23 MB of YAML takes 4-10 s, so the result is kept as JSON in the cache dir, keyed
    by :func:`corpus_fingerprint` (and in memory). Every call returns fresh objects."""
    base = (directory or crds_dir()).resolve()
    if not base.is_dir():
        raise FileNotFoundError(f"CRD corpus not found at {base} (set WMAP_SHARED_DIR)")
    fingerprint = corpus_fingerprint(prefer=prefer, directory=base)
    key = hashlib.sha256(f"{base}\n{fingerprint}".encode()).hexdigest()[:32]
    if key in _MEMO:
        return [(Path(p), doc) for p, doc in orjson.loads(_MEMO[key])]
    cached = cache_dir() / "crd-corpus" / f"{key}.json"
    if directory is None:  # the shared corpus only; never cache ad-hoc directories
        with contextlib.suppress(OSError, ValueError):
            raw = cached.read_bytes()
            pairs = orjson.loads(raw)
            _MEMO[key] = raw
            return [(Path(p), doc) for p, doc in pairs]
    _MEMO[key] = orjson.dumps([[str(p), doc] for p, doc in _parse_corpus(base, prefer)])
    if directory is None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        for old in cached.parent.glob("*.json"):
            old.unlink(missing_ok=True)
        tmp = cached.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(_MEMO[key])
        os.replace(tmp, cached)
    return [(Path(p), doc) for p, doc in orjson.loads(_MEMO[key])]


def _parse_corpus(base: Path, prefer: Mapping[str, str] | None) -> list[tuple[Path, Obj]]:
    choices = {**DEFAULT_PREFER, **(prefer or {})}
    by_name: dict[str, list[tuple[Path, Obj]]] = {}
    for path in corpus_files(base):
        for doc in load_crd_docs([path]):
            by_name.setdefault(doc["metadata"]["name"], []).append((path, doc))
    chosen: list[tuple[Path, Obj]] = []
    for name, candidates in sorted(by_name.items()):
        if len(candidates) == 1:
            chosen.append(candidates[0])
            continue
        wanted = choices.get(name)
        picks = [c for c in candidates if wanted is not None and c[0] == base / wanted]
        if len(picks) != 1:
            files = ", ".join(str(c[0].relative_to(base)) for c in candidates)
            raise ValueError(f"CRD {name} is defined by several files ({files}); choose one with prefer=")
        chosen.append(picks[0])
    return chosen


#: Bump when :func:`downlevel_crd` changes (part of :func:`corpus_fingerprint`).
DOWNLEVEL_REVISION = 1


def corpus_fingerprint(*, prefer: Mapping[str, str] | None = None, directory: Path | None = None) -> str:
    """A hash of everything :func:`install_corpus` would send (file contents, choices, transform),
    cheap to compute without parsing any YAML."""
    base = directory or crds_dir()
    digest = hashlib.sha256(f"downlevel-{DOWNLEVEL_REVISION}\n".encode())
    digest.update(json.dumps({**DEFAULT_PREFER, **(prefer or {})}, sort_keys=True).encode())
    for path in corpus_files(base):
        digest.update(f"\n{path.relative_to(base)}\n".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        out: Obj = {}
        for key, value in node.items():
            if key in UNSUPPORTED_SCHEMA_KEYS:
                continue
            if key == "default" and value == "" and node.get("type") == "string":
                continue
            out[key] = _strip(value)
        return out
    if isinstance(node, list):
        return [_strip(item) for item in node]
    return node


def downlevel_crd(doc: Mapping[str, Any]) -> Obj:
    """A copy of the CRD that kube-apiserver v1.20 accepts: unsupported schema keywords removed
    everywhere, ``default: ""`` dropped from string properties, top-level ``status`` dropped."""
    out: Obj = _strip(dict(doc))  # _strip builds new dicts and lists all the way down
    out.pop("status", None)
    return out


def _is_established(crd: Mapping[str, Any]) -> bool:
    for cond in crd.get("status", {}).get("conditions", []) or []:
        if cond.get("type") == "Established" and cond.get("status") == "True":
            return True
    return False


def wait_established(client: KubeTestClient, names: Sequence[str], *, timeout: float = 120.0) -> None:
    """Wait until every named CRD has ``Established=True`` (one list call per poll)."""
    deadline = time.monotonic() + timeout
    pending = set(names)
    while pending:
        listing = client.request("GET", CRD_PATH)
        for crd in listing.get("items", []):
            if crd["metadata"]["name"] in pending and _is_established(crd):
                pending.discard(crd["metadata"]["name"])
        if not pending:
            return
        if time.monotonic() >= deadline:
            raise TimeoutError(f"CRDs not Established within {timeout}s: {sorted(pending)}")
        time.sleep(0.2)


def install_crds(
    client: KubeTestClient,
    crds: Iterable[Path | Mapping[str, Any]],
    *,
    downlevel: bool = True,
    timeout: float = 300.0,
) -> list[str]:
    """Create the CRDs (files or docs) one after another, then wait until all are Established.
    Returns the CRD names, in order."""
    names: list[str] = []
    deadline = time.monotonic() + timeout
    for item in crds:
        docs = load_crd_docs([item]) if isinstance(item, Path) else [dict(item)]
        for doc in docs:
            body = downlevel_crd(doc) if downlevel else doc
            try:
                client.request("POST", CRD_PATH, body)
            except KubeApiError as exc:
                raise RuntimeError(f"installing CRD {doc['metadata']['name']} failed: {exc}") from exc
            names.append(doc["metadata"]["name"])
    wait_established(client, names, timeout=max(1.0, deadline - time.monotonic()))
    return names


def install_corpus(
    client: KubeTestClient,
    *,
    prefer: Mapping[str, str] | None = None,
    extra_docs: Sequence[Mapping[str, Any]] = (),
    timeout: float = 300.0,
) -> list[str]:
    """Install every CRD of ``shared/crds`` (one per name) plus ``extra_docs`` (e.g. the project's
    own Karta CRD)."""
    docs: list[Mapping[str, Any]] = [doc for _, doc in corpus_crds(prefer=prefer)]
    docs.extend(extra_docs)
    return install_crds(client, docs, timeout=timeout)


def swap_crd(client: KubeTestClient, crd: Path | Mapping[str, Any], *, timeout: float = 60.0) -> str:
    """Replace an installed CRD with another definition of the same name (e.g. the training-operator
    MPIJob instead of mpi-operator's). Deletes the old CRD, and with it all its objects, first."""
    doc = load_crd_docs([crd])[0] if isinstance(crd, Path) else dict(crd)
    name = str(doc["metadata"]["name"])
    deadline = time.monotonic() + timeout
    try:
        client.request("DELETE", f"{CRD_PATH}/{name}")
    except KubeApiError as exc:
        if exc.status_code != 404:
            raise
    while client.status_of("GET", f"{CRD_PATH}/{name}") != 404:
        if time.monotonic() >= deadline:
            raise TimeoutError(f"CRD {name} still exists {timeout}s after delete")
        time.sleep(0.2)
    install_crds(client, [doc], timeout=max(1.0, deadline - time.monotonic()))
    for version in doc["spec"]["versions"]:
        client.forget_discovery(f"{doc['spec']['group']}/{version['name']}")
    return name


# ------------------------------------------------------------------------------------- Karta CRD

KARTA_CRD_NAME = "kartas.run.ai"
KARTA_API_VERSION = "run.ai/v1alpha1"


def _nullable_strings(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("type") == "string":
            node["nullable"] = True
        for value in node.values():
            _nullable_strings(value)
    elif isinstance(node, list):
        for value in node:
            _nullable_strings(value)


def karta_crd_doc() -> Obj:
    """The project's shipped Karta CRD as the test API server accepts it: down-levelled for v1.20
    (:func:`downlevel_crd`: no CEL, no list types) and with ``nullable: true`` on every string.

    The v1.20.2 build in use validates an empty string inside a custom resource as ``null`` ("must be
    of type string: null"), so e.g. the core group ``group: ""`` would be refused; with ``nullable``
    it is accepted and stored as ``""``. Real clusters need neither change. Install it with
    ``install_crds(client, [karta_crd_doc()], downlevel=False)`` or :func:`ensure_karta_crd`."""
    doc = downlevel_crd(shipped_crd())
    for version in doc["spec"]["versions"]:
        _nullable_strings(version.get("schema"))
    return doc


def ensure_karta_crd(client: KubeTestClient) -> None:
    """Install :func:`karta_crd_doc` unless a ``kartas.run.ai`` CRD exists; wait until it is served."""
    if client.status_of("GET", f"{CRD_PATH}/{KARTA_CRD_NAME}") == 404:
        install_crds(client, [karta_crd_doc()], downlevel=False)
    client.forget_discovery(KARTA_API_VERSION)
    client.plural_for(KARTA_API_VERSION, "Karta")


def remove_karta_crd(client: KubeTestClient, *, timeout: float = 30.0) -> None:
    """Delete the ``kartas.run.ai`` CRD (and every Karta) if present; wait until it is not served."""
    if client.status_of("GET", f"{CRD_PATH}/{KARTA_CRD_NAME}") != 404:
        client.request("DELETE", f"{CRD_PATH}/{KARTA_CRD_NAME}")

    def gone() -> bool:
        return (
            client.status_of("GET", f"{CRD_PATH}/{KARTA_CRD_NAME}") == 404
            and client.status_of("GET", "/apis/run.ai/v1alpha1/kartas") == 404
        )

    client.wait_until(gone, timeout=timeout)
    client.forget_discovery(KARTA_API_VERSION)


def schemaless_crd(
    group: str,
    kind: str,
    plural: str,
    *,
    version: str = "v1",
    short_names: Sequence[str] = (),
    scope: str = "Namespaced",
) -> dict[str, Any]:
    """A CRD that keeps any field (``x-kubernetes-preserve-unknown-fields``): a stand-in for a
    framework whose CRD the corpus lacks, or a throwaway type for one test."""
    names: dict[str, Any] = {
        "plural": plural,
        "singular": kind.lower(),
        "kind": kind,
        "listKind": f"{kind}List",
    }
    if short_names:
        names["shortNames"] = list(short_names)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": names,
            "versions": [
                {
                    "name": version,
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        },
    }
