"""The Karta definition model, its loader and its validator.

The model classes are exported lazily: importing a light module of this package (the API names
in :mod:`workload_map.model.karta_api`, the bounded reader :mod:`workload_map.model.inputs`)
does not import pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workload_map.model.definition import (
        FRAGMENTED_FIELDS,
        KARTA_API_VERSION,
        KARTA_KIND,
        LEGACY_API_VERSION,
        LEGACY_KIND,
        STATUS_MATCH_ORDER,
        STATUS_SEVERITY_ORDER,
        ComponentDefinition,
        ComponentInstanceSelector,
        ComponentTypeSelector,
        ConditionMatcher,
        ConditionsDefinition,
        ExpressionMatcher,
        FragmentedPodSpecDefinition,
        GangScheduling,
        GroupVersionKind,
        Karta,
        KartaSpec,
        ObjectMeta,
        OptimizationInstructions,
        PhaseDefinition,
        PodGroup,
        PodGroupAlpha,
        PodGroupMember,
        PodSelector,
        ReplicaSelector,
        ResourceStatus,
        ScaleDefinition,
        SpecDefinition,
        StatusDefinition,
        StatusMappings,
        StatusMatcher,
        StructureDefinition,
        SubGroup,
        SuspendAction,
        SuspendDefinition,
        Topology,
    )

__all__ = [
    "FRAGMENTED_FIELDS",
    "KARTA_API_VERSION",
    "KARTA_KIND",
    "LEGACY_API_VERSION",
    "LEGACY_KIND",
    "STATUS_MATCH_ORDER",
    "STATUS_SEVERITY_ORDER",
    "ComponentDefinition",
    "ComponentInstanceSelector",
    "ComponentTypeSelector",
    "ConditionMatcher",
    "ConditionsDefinition",
    "ExpressionMatcher",
    "FragmentedPodSpecDefinition",
    "GangScheduling",
    "GroupVersionKind",
    "Karta",
    "KartaSpec",
    "ObjectMeta",
    "OptimizationInstructions",
    "PhaseDefinition",
    "PodGroup",
    "PodGroupAlpha",
    "PodGroupMember",
    "PodSelector",
    "ReplicaSelector",
    "ResourceStatus",
    "ScaleDefinition",
    "SpecDefinition",
    "StatusDefinition",
    "StatusMappings",
    "StatusMatcher",
    "StructureDefinition",
    "SubGroup",
    "SuspendAction",
    "SuspendDefinition",
    "Topology",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module("workload_map.model.definition"), name)
    globals()[name] = value
    return value
