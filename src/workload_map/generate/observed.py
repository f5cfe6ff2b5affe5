"""Pod selectors from the pods an operator really created: what no CRD schema says.

Given live objects of the drafted type and the pods each one's owner chain reaches, a component
with instances gets the pod label whose values are its instance ids (``ray.io/group`` carries the
worker group names, ``jobset.sigs.k8s.io/replicatedjob-name`` the replicated jobs'), and, when
the workload has several components, each gets the label and value naming it
(``ray.io/node-type: head`` for ``headgroup``). Each finding replaces the draft's flagged guess
and says how many pods of how many objects showed it. Work is linear in the pods and labels
given; the caller bounds how many it reads.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from workload_map.generate.draft import Draft, to_commented_yaml
from workload_map.kube.objects import labels_of, uid_of

__all__ = ["observe_selectors"]

#: A workload object and a pod, as decoded JSON.
Object = Mapping[str, Any]


def _instance_ids(draft: Draft, objects: Sequence[Object]) -> dict[str, set[str]]:
    """component -> the instance ids the draft reads from ``objects``."""
    from workload_map.errors import WorkloadMapError
    from workload_map.model.loader import load_definitions_text
    from workload_map.resolve import compile_definition, resolve

    loaded = load_definitions_text(draft.text, name="draft.yaml")
    if loaded.errors or not loaded.definitions:
        return {}
    compiled = compile_definition(loaded.definitions[0].karta)
    out: dict[str, set[str]] = {}
    for obj in objects:
        try:
            workload = resolve(compiled, dict(obj))
        except WorkloadMapError:
            continue
        for name, comp in workload.components.items():
            out.setdefault(name, set()).update(i.id for i in comp.instances if i.id)
    return out


def _name_match(value: str, name: str) -> int:
    """How well a label value names a component: 3 equal, 2 the value ends with ``-name``, 1 one
    contains the other (``head`` / ``headgroup``), 0 not at all."""
    v, n = value.lower(), name.lower()
    if v == n:
        return 3
    if v.endswith(f"-{n}"):
        return 2
    if len(v) >= 4 and len(n) >= 4 and (v in n or n in v):
        return 1
    return 0


def observe_selectors(
    draft: Draft, objects: Sequence[Object], pods_by_uid: Mapping[str, Sequence[Object]]
) -> Draft:
    """``draft`` with pod selectors taken from the pods of ``objects`` (by owner UID)."""
    karta = copy.deepcopy(draft.karta)
    structure = karta["spec"]["structureDefinition"]
    children: list[dict[str, Any]] = structure.get("childComponents") or []
    pods = [p for o in objects for p in pods_by_uid.get(uid_of(o) or "", ())]
    if not children or not pods:
        return draft
    with_pods = sum(1 for o in objects if pods_by_uid.get(uid_of(o) or ""))
    ids = _instance_ids(draft, objects)
    comments = dict(draft.comments)
    for i, comp in enumerate(children):
        where = ("spec", "structureDefinition", "childComponents", i)
        selector: dict[str, Any] = {}
        wanted = ids.get(comp["name"], set())
        if "instanceIdPath" in comp and wanted:
            hits = Counter(k for p in pods for k, v in labels_of(p).items() if v in wanted)
            if hits:
                key, n = max(hits.items(), key=lambda kv: (kv[1], -len(kv[0])))
                selector["componentInstanceSelector"] = {"idPath": f'.metadata.labels["{key}"]'}
                comments[(*where, "podSelector")] = (
                    f"observed: label {key} carries the instance ids on {n} pods of {with_pods} "
                    "objects in the cluster"
                )
        if len(children) > 1:
            scored = Counter(
                (k, v) for p in pods for k, v in labels_of(p).items() if _name_match(v, comp["name"])
            )
            if scored:
                (key, value), n = max(
                    scored.items(), key=lambda kv: (_name_match(kv[0][1], comp["name"]), kv[1])
                )
                selector["componentTypeSelector"] = {"matchLabels": {key: value}}
                note = f"observed: label {key}={value} names this component on {n} pods"
                previous = comments.get((*where, "podSelector"))
                comments[(*where, "podSelector")] = f"{previous}; {note}" if previous else note
                comments.pop((*where, "ownerRef"), None)
        if selector:
            guessed = comp.get("podSelector", {})
            if "componentInstanceSelector" not in selector and "componentInstanceSelector" in guessed:
                selector["componentInstanceSelector"] = guessed["componentInstanceSelector"]
            comp["podSelector"] = selector
    header = [
        *draft.header,
        "Pod selectors marked 'observed' come from the pods of live objects of the type.",
    ]
    return Draft(draft.name, karta, to_commented_yaml(karta, comments, header), comments, tuple(header))
