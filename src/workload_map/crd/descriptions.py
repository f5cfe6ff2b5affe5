# ruff: noqa: E501  (a table of prose; one entry per line reads better than wrapped strings)
"""Field documentation for the generated CRD schema, keyed by model class and Python field name.

The pydantic models in :mod:`workload_map.model.definition` carry shape only; the text users see
in ``kubectl explain karta.spec...`` lives here. ``tests/crd`` checks that every model field has an
entry, so a new field cannot reach the CRD undocumented.
"""

from __future__ import annotations

CLASS_DOCS: dict[str, str] = {
    "KartaSpec": "The structure of one workload type: its components and, optionally, gang-scheduling rules.",
    "StructureDefinition": "The component tree of the workload: the root object and its logical children.",
    "ComponentDefinition": "One component of the workload (the root object, or a logical part of it).",
    "GroupVersionKind": "A Kubernetes group, version and kind. The group is empty for the core API group.",
    "SpecDefinition": (
        "Where this component's pod spec lives inside the root object. Set one of podTemplateSpecPath, "
        "podSpecPath or fragmentedPodSpecDefinition."
    ),
    "FragmentedPodSpecDefinition": (
        "Individual pod fields scattered across the root object. Every path is used for reading and "
        "writing back, so it should be an assignable jq path."
    ),
    "ScaleDefinition": "Where replica counts live inside the root object (one number per instance).",
    "StatusDefinition": "How the workload's own status maps to the normalized statuses.",
    "PhaseDefinition": "Where a phase string lives in the root object.",
    "ConditionsDefinition": "Where a list of condition objects lives in the root object, and its field names.",
    "StatusMappings": (
        "Per normalized status, a list of matchers (ORed). Statuses are independent: several can "
        "match at once."
    ),
    "StatusMatcher": "One way to recognise a status; every key set here must hold (ANDed).",
    "ConditionMatcher": "A condition that must exist (matched by type) with the given status and reason.",
    "ExpressionMatcher": "A jq expression run on the root object whose stringified result must equal expectedResult.",
    "SuspendDefinition": "Native suspend and resume switches of the workload.",
    "SuspendAction": "One assignment applied to the root object.",
    "PodSelector": "How live pods are mapped to this component, its instances and replicas (paths run on pods).",
    "ComponentTypeSelector": (
        "Whether a pod plays this component's role. At least one of keyPath and matchLabels must be "
        "set; value requires keyPath."
    ),
    "ComponentInstanceSelector": "Which instance (from instanceIdPath) a pod belongs to.",
    "ReplicaSelector": "Which replica (identical copy) of this component a pod belongs to.",
    "OptimizationInstructions": "Hints for schedulers and other consumers.",
    "GangScheduling": "Gang-scheduling rules: podGroup (current) or podGroups (deprecated alpha format).",
    "PodGroupAlpha": "A deprecated alpha pod group: pods whose group keys are equal form one gang.",
    "PodGroupMember": "A component whose pods join the pod group.",
    "PodGroup": "The pod group of the whole workload, with optional subgroups per component.",
    "GangExpressions": "PodGroup fields computed by jq (workload-map extension).",
    "SubGroup": "A subgroup made of one component's pods (and its descendants').",
    "Topology": "Topology-aware placement constraints.",
}

FIELD_DOCS: dict[tuple[str, str], str] = {
    ("KartaSpec", "structure_definition"): "The component tree of the workload.",
    ("KartaSpec", "optimization_instructions"): "Optional hints for consumers such as gang schedulers.",
    ("StructureDefinition", "root_component"): "The workload object itself (the top owner of its pods).",
    ("StructureDefinition", "child_components"): (
        "Logical components below the root; each names its parent in ownerRef. Names are unique."
    ),
    ("StructureDefinition", "additional_child_kinds"): (
        "Other kinds the workload creates (services, config maps...). Keyed by kind only, for wire "
        "compatibility with upstream: two entries with the same kind in different groups collide."
    ),
    ("ComponentDefinition", "name"): "Unique component name across the root and its children.",
    ("ComponentDefinition", "kind"): (
        "GVK of the object this component corresponds to. Required on the root; a child without kind "
        "is a logical grouping."
    ),
    (
        "ComponentDefinition",
        "owner_ref",
    ): "Name of the parent component. Required on children, forbidden on the root.",
    (
        "ComponentDefinition",
        "spec_definition",
    ): "Where this component's pod spec lives inside the root object.",
    (
        "ComponentDefinition",
        "scale_definition",
    ): "Where this component's replica counts live inside the root object.",
    ("ComponentDefinition", "status_definition"): "Status mapping. Required on the root.",
    ("ComponentDefinition", "suspend_definition"): "Native suspend/resume field assignments.",
    ("ComponentDefinition", "instance_id_path"): (
        "jq path on the root object yielding one id per instance, in the same order as the spec path. "
        "Must be paired with podSelector.componentInstanceSelector."
    ),
    (
        "ComponentDefinition",
        "pod_selector",
    ): "How live pods are mapped to this component (paths run on pods).",
    ("GroupVersionKind", "group"): "API group; empty for the core group.",
    ("GroupVersionKind", "version"): "API version.",
    ("GroupVersionKind", "kind"): "Kind.",
    (
        "SpecDefinition",
        "pod_template_spec_path",
    ): "jq path yielding PodTemplateSpec objects (metadata and spec).",
    ("SpecDefinition", "pod_spec_path"): "jq path yielding bare PodSpec objects.",
    ("SpecDefinition", "metadata_path"): "jq path yielding ObjectMeta objects; only used with podSpecPath.",
    (
        "SpecDefinition",
        "fragmented_pod_spec_definition",
    ): "Individual pod fields scattered across the root object.",
    ("FragmentedPodSpecDefinition", "scheduler_name_path"): "jq path to the scheduler name (string).",
    ("FragmentedPodSpecDefinition", "labels_path"): "jq path to the pod labels (map of strings).",
    ("FragmentedPodSpecDefinition", "annotations_path"): "jq path to the pod annotations (map of strings).",
    ("FragmentedPodSpecDefinition", "resources_path"): "jq path to a ResourceRequirements object.",
    ("FragmentedPodSpecDefinition", "resource_claims_path"): "jq path to a list of PodResourceClaim (DRA).",
    ("FragmentedPodSpecDefinition", "pod_affinity_path"): "jq path to a PodAffinity object.",
    ("FragmentedPodSpecDefinition", "node_affinity_path"): "jq path to a NodeAffinity object.",
    ("FragmentedPodSpecDefinition", "containers_path"): "jq path to a list of containers.",
    (
        "FragmentedPodSpecDefinition",
        "container_path",
    ): "jq path to a single container (one-container components).",
    (
        "FragmentedPodSpecDefinition",
        "priority_class_name_path",
    ): "jq path to the priority class name (string).",
    ("FragmentedPodSpecDefinition", "image_path"): "jq path to the container image (string).",
    ("ScaleDefinition", "replicas_path"): "jq path yielding the desired replica count per instance.",
    ("ScaleDefinition", "min_replicas_path"): "jq path yielding the autoscaling lower bound per instance.",
    ("ScaleDefinition", "max_replicas_path"): "jq path yielding the autoscaling upper bound per instance.",
    ("StatusDefinition", "phase_definition"): "Where the phase string lives; needed by byPhase matchers.",
    (
        "StatusDefinition",
        "conditions_definition",
    ): "Where the conditions live; needed by byConditions matchers.",
    ("StatusDefinition", "status_mappings"): "Matchers per normalized status (may be empty).",
    ("PhaseDefinition", "path"): "jq path to the phase; the first result is read as a string.",
    ("ConditionsDefinition", "path"): "jq path that must yield an array of condition objects.",
    ("ConditionsDefinition", "type_field_name"): "Name of the condition type field.",
    ("ConditionsDefinition", "status_field_name"): "Name of the condition status field.",
    ("ConditionsDefinition", "message_field_name"): "Name of the condition message field.",
    ("ConditionsDefinition", "reason_field_name"): "Name of the condition reason field.",
    ("StatusMappings", "initializing"): "Created or starting, before Running.",
    ("StatusMappings", "running"): "Actively running.",
    ("StatusMappings", "completed"): "Finished successfully.",
    ("StatusMappings", "failed"): "Failed.",
    ("StatusMappings", "degraded"): "Running but degraded.",
    ("StatusMappings", "suspended"): "Fully suspended.",
    ("StatusMappings", "suspending"): "Being suspended (draining pods).",
    ("StatusMappings", "resuming"): "Being resumed.",
    ("StatusMatcher", "by_phase"): "The extracted phase must equal this string.",
    ("StatusMatcher", "by_conditions"): "Every listed condition must exist and match.",
    ("StatusMatcher", "by_expression"): "A jq expression whose result must equal expectedResult.",
    ("ConditionMatcher", "type"): "Condition type.",
    ("ConditionMatcher", "status"): "Expected condition status, if set.",
    ("ConditionMatcher", "reason"): "Expected condition reason, if set.",
    ("ExpressionMatcher", "expression"): "jq expression run on the root object.",
    ("ExpressionMatcher", "expected_result"): 'Expected stringified result, such as "true".',
    ("SuspendDefinition", "suspend_actions"): "Assignments that suspend the workload, applied in order.",
    ("SuspendDefinition", "resume_actions"): "Assignments that resume the workload, applied in order.",
    ("SuspendAction", "path"): "Assignable jq path in the root object.",
    ("SuspendAction", "value"): 'JSON-encoded value, such as "true", "0", "\\"Suspended\\"" or "null".',
    ("PodSelector", "component_type_selector"): "Whether a pod plays this component's role.",
    ("PodSelector", "component_instance_selector"): "Which instance a pod belongs to.",
    ("PodSelector", "replica_selector"): "Which replica a pod belongs to.",
    ("ComponentTypeSelector", "key_path"): "jq path on the pod; without value, any non-null result matches.",
    ("ComponentTypeSelector", "value"): "The string keyPath must equal.",
    ("ComponentTypeSelector", "match_labels"): "Pod labels that must all be equal.",
    (
        "ComponentInstanceSelector",
        "id_path",
    ): "jq path on the pod yielding an instance id from instanceIdPath.",
    ("ReplicaSelector", "key_path"): "jq path on the pod yielding a replica index.",
    ("OptimizationInstructions", "gang_scheduling"): "Gang-scheduling rules.",
    ("GangScheduling", "pod_groups"): "Deprecated alpha format: pod groups keyed by name.",
    (
        "GangScheduling",
        "pod_group",
    ): "Current format: one pod group with optional subgroups. Wins over podGroups.",
    ("GangScheduling", "expressions"): (
        "workload-map extension: jq on the top owner (.) with the pod as $pod, computing PodGroup"
        " fields; null keeps the computed value. KAI's Karta plugin ignores it."
    ),
    ("GangExpressions", "name"): "The PodGroup name (a DNS-1123 subdomain).",
    ("GangExpressions", "min_member"): "The PodGroup minMember (an integer >= 0).",
    ("GangExpressions", "min_sub_group"): "The PodGroup minSubGroup (an integer >= 0); replaces minMember.",
    ("GangExpressions", "sub_groups"): (
        "The subgroups: an array of {name, minMember or minSubGroup, parent, topologyConstraint}."
    ),
    ("GangExpressions", "pod_sub_group"): "The name of the subgroup the pod joins.",
    (
        "GangExpressions",
        "queue",
    ): "The gang's queue (Volcano queue, Kueue LocalQueue); null: the scheduler's label.",
    ("GangExpressions", "priority_class_name"): (
        "The gang's PriorityClass name; null: the first pod template that names one."
    ),
    (
        "GangExpressions",
        "schedule_timeout_seconds",
    ): "Seconds the gang may wait to be scheduled (coscheduling).",
    ("GangExpressions", "min_resources"): (
        "An object of resource quantities replacing the computed minimum resources of the gang."
    ),
    ("PodGroupAlpha", "name"): "Pod group name.",
    ("PodGroupAlpha", "members"): "Components whose pods join the group, keyed by componentName.",
    ("PodGroupMember", "component_name"): "A root or child component name.",
    ("PodGroupMember", "group_by_key_paths"): (
        "jq paths on the pod; each must yield exactly one non-empty value. Pods with equal keys form one gang."
    ),
    ("PodGroupMember", "filters"): "jq boolean filters on the pod, ANDed.",
    ("PodGroup", "name"): "Pod group name.",
    ("PodGroup", "topology"): "Topology constraint for all pods.",
    ("PodGroup", "sub_groups"): "Subgroups keyed by componentName.",
    ("SubGroup", "component_name"): "The component whose pods (and descendants' pods) form the subgroup.",
    ("SubGroup", "topology"): "Topology constraint for this subgroup.",
    ("Topology", "topology_name"): "Name of the topology.",
    ("Topology", "preferred_topology_level"): "Preferred topology level.",
    ("Topology", "required_topology_level"): "Maximal level all matching pods must fit in.",
}
