"""Unit tests of the cluster test support that need no cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support import apiserver_binary, crds
from tests.support.kube import owner_reference, resource_path, split_api_version


def small_crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-validations": [{"rule": "self.spec.a == self.spec.a"}],
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "x-kubernetes-map-type": "atomic",
                                    "properties": {
                                        "a": {"type": "string", "default": ""},
                                        "b": {"type": "string", "default": "keep"},
                                        "n": {"type": "integer", "default": 0},
                                        "items": {
                                            "type": "array",
                                            "x-kubernetes-list-type": "map",
                                            "x-kubernetes-list-map-keys": ["name"],
                                            "items": {
                                                "type": "object",
                                                "properties": {"name": {"type": "string", "default": ""}},
                                            },
                                        },
                                    },
                                }
                            },
                        }
                    },
                }
            ],
        },
        "status": {"acceptedNames": {"kind": "", "plural": ""}, "storedVersions": []},
    }


def test_downlevel_crd_removes_unsupported_keywords() -> None:
    original = small_crd()
    out = crds.downlevel_crd(original)
    assert "status" not in out
    schema = out["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert "x-kubernetes-validations" not in schema
    spec = schema["properties"]["spec"]
    assert "x-kubernetes-map-type" not in spec
    props = spec["properties"]
    assert props["a"] == {"type": "string"}
    assert props["b"] == {"type": "string", "default": "keep"}
    assert props["n"] == {"type": "integer", "default": 0}
    assert props["items"] == {
        "type": "array",
        "items": {"type": "object", "properties": {"name": {"type": "string"}}},
    }
    # The input is untouched.
    assert original["status"]["storedVersions"] == []
    assert "x-kubernetes-validations" in original["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def test_downlevel_keeps_a_property_named_like_a_keyword() -> None:
    doc = {"spec": {"properties": {"default": {"type": "string"}, "status": {"type": "object"}}}}
    assert crds.downlevel_crd(doc) == doc


def test_corpus_conflicts_must_be_resolved(tmp_path: Path) -> None:
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "w.yaml").write_text(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
            f"metadata: {{name: widgets.example.com}}\nspec: {{group: {folder}}}\n"
        )
    with pytest.raises(ValueError, match="several files"):
        crds.corpus_crds(directory=tmp_path)
    chosen = crds.corpus_crds(directory=tmp_path, prefer={"widgets.example.com": "two/w.yaml"})
    assert [doc["spec"]["group"] for _, doc in chosen] == ["two"]
    before = crds.corpus_fingerprint(directory=tmp_path)
    assert crds.corpus_fingerprint(directory=tmp_path, prefer={"widgets.example.com": "two/w.yaml"}) != before


def test_kube_paths() -> None:
    assert split_api_version("v1") == ("", "v1")
    assert split_api_version("jobset.x-k8s.io/v1alpha2") == ("jobset.x-k8s.io", "v1alpha2")
    assert resource_path("v1", "pods", "p", "ns", "status") == "/api/v1/namespaces/ns/pods/p/status"
    assert resource_path("ray.io/v1", "rayclusters") == "/apis/ray.io/v1/rayclusters"
    owner = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "r", "uid": "u1"}}
    assert owner_reference(owner) == {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "name": "r",
        "uid": "u1",
        "controller": True,
        "blockOwnerDeletion": True,
    }


def test_apiserver_binary_cache_is_verified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cached file that does not match the stamp/sha256 is not trusted."""
    monkeypatch.setenv("WMAP_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("WMAP_SHARED_DIR", str(tmp_path / "no-shared"))
    fake = tmp_path / "kube-apiserver"
    fake.write_text("#!/bin/sh\necho fake\n")
    fake.chmod(0o755)
    with pytest.raises(apiserver_binary.ApiserverBinaryError, match="not cached"):
        apiserver_binary.ensure_apiserver_binary(allow_build=False)
