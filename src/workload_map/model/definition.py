"""The Karta definition model: every field of the upstream format, as frozen pydantic models.

Field names are snake_case in Python and camelCase on the wire (aliases), so existing Karta
YAML loads unchanged and ``to_wire`` writes the same shape back. Unknown fields are ignored by
the models themselves; the loader reports them (warnings, or errors in strict mode), because a
typo such as ``ownerName`` must not pass silently.

The models only describe shape and types. The rules that make a definition meaningful (unique
names, owner references, one pod-spec shape per component, safe jq...) live in
``workload_map.model.validator`` so that every finding is reported at once with its location.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

# The API's names live beside the model without pydantic (kube.objects reads them); re-exported.
from workload_map.model.karta_api import KARTA_API_VERSION as KARTA_API_VERSION
from workload_map.model.karta_api import KARTA_GROUP as KARTA_GROUP
from workload_map.model.karta_api import KARTA_KIND as KARTA_KIND
from workload_map.model.karta_api import KARTA_VERSION as KARTA_VERSION
from workload_map.model.karta_api import LEGACY_API_VERSION as LEGACY_API_VERSION
from workload_map.model.karta_api import LEGACY_KIND as LEGACY_KIND
from workload_map.model.karta_api import gvk_text as gvk_text


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        extra="ignore",
        # Validators are built on first validation: a command reading the catalog's cache rebuilds
        # the models without them (model.rebuild) and never pays for building them (issue 24).
        defer_build=True,
    )


class ResourceStatus(str, Enum):
    """The shared phases. ``UNDEFINED`` is never mapped: it is what nothing matching means."""

    INITIALIZING = "Initializing"
    RUNNING = "Running"
    COMPLETED = "Completed"
    FAILED = "Failed"
    DEGRADED = "Degraded"
    UNDEFINED = "Undefined"
    SUSPENDED = "Suspended"
    SUSPENDING = "Suspending"
    RESUMING = "Resuming"

    def __str__(self) -> str:
        """The phase word (``print(phase)``, f-strings), as every output of the tool shows it;
        ``repr`` keeps the member name."""
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


# The order in which upstream tries statuses; matched statuses are reported in this order.
STATUS_MATCH_ORDER: tuple[ResourceStatus, ...] = (
    ResourceStatus.RESUMING,
    ResourceStatus.SUSPENDING,
    ResourceStatus.SUSPENDED,
    ResourceStatus.RUNNING,
    ResourceStatus.FAILED,
    ResourceStatus.COMPLETED,
    ResourceStatus.INITIALIZING,
    ResourceStatus.DEGRADED,
)

# Most severe first; the primary phase of a workload is the first of its matched statuses here.
STATUS_SEVERITY_ORDER: tuple[ResourceStatus, ...] = (
    ResourceStatus.FAILED,
    ResourceStatus.DEGRADED,
    ResourceStatus.SUSPENDING,
    ResourceStatus.RESUMING,
    ResourceStatus.SUSPENDED,
    ResourceStatus.INITIALIZING,
    ResourceStatus.RUNNING,
    ResourceStatus.COMPLETED,
    ResourceStatus.UNDEFINED,
)


class GroupVersionKind(_Model):
    # Defaults are empty so the validator, not the parser, reports a missing part with
    # upstream's message ("root component must have full kind ...").
    group: str = ""
    version: str = ""
    kind: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.api_version}, Kind={self.kind}"


class FragmentedPodSpecDefinition(_Model):
    scheduler_name_path: str | None = None
    labels_path: str | None = None
    annotations_path: str | None = None
    resources_path: str | None = None
    resource_claims_path: str | None = None
    pod_affinity_path: str | None = None
    node_affinity_path: str | None = None
    containers_path: str | None = None
    container_path: str | None = None
    priority_class_name_path: str | None = None
    image_path: str | None = None


FRAGMENTED_FIELDS: tuple[str, ...] = tuple(FragmentedPodSpecDefinition.model_fields)


class SpecDefinition(_Model):
    pod_template_spec_path: str | None = None
    pod_spec_path: str | None = None
    metadata_path: str | None = None
    fragmented_pod_spec_definition: FragmentedPodSpecDefinition | None = None


class ScaleDefinition(_Model):
    replicas_path: str | None = None
    min_replicas_path: str | None = None
    max_replicas_path: str | None = None


class PhaseDefinition(_Model):
    path: str


class ConditionsDefinition(_Model):
    path: str
    # CRD defaults, applied on load too (upstream leaves them empty for file-loaded definitions).
    type_field_name: str = "type"
    status_field_name: str = "status"
    message_field_name: str | None = "message"
    reason_field_name: str | None = "reason"


class ConditionMatcher(_Model):
    type: str
    status: str | None = None
    reason: str | None = None


class ExpressionMatcher(_Model):
    expression: str
    expected_result: str


class StatusMatcher(_Model):
    by_phase: str | None = None
    by_conditions: tuple[ConditionMatcher, ...] | None = None
    by_expression: ExpressionMatcher | None = None

    @property
    def is_empty(self) -> bool:
        return not self.by_phase and not self.by_conditions and self.by_expression is None


class StatusMappings(_Model):
    initializing: tuple[StatusMatcher, ...] = ()
    running: tuple[StatusMatcher, ...] = ()
    completed: tuple[StatusMatcher, ...] = ()
    failed: tuple[StatusMatcher, ...] = ()
    degraded: tuple[StatusMatcher, ...] = ()
    suspended: tuple[StatusMatcher, ...] = ()
    suspending: tuple[StatusMatcher, ...] = ()
    resuming: tuple[StatusMatcher, ...] = ()

    def matchers_for(self, status: ResourceStatus) -> tuple[StatusMatcher, ...]:
        matchers: tuple[StatusMatcher, ...] = getattr(self, status.value.lower(), ())
        return matchers


class StatusDefinition(_Model):
    phase_definition: PhaseDefinition | None = None
    conditions_definition: ConditionsDefinition | None = None
    status_mappings: StatusMappings = Field(default_factory=StatusMappings)


class SuspendAction(_Model):
    path: str
    # JSON-encoded value: "true", "0", "\"Suspended\"", "null".
    value: str


class SuspendDefinition(_Model):
    suspend_actions: tuple[SuspendAction, ...] = ()
    resume_actions: tuple[SuspendAction, ...] = ()


class ComponentTypeSelector(_Model):
    key_path: str | None = None
    value: str | None = None
    match_labels: dict[str, str] | None = None


class ComponentInstanceSelector(_Model):
    id_path: str


class ReplicaSelector(_Model):
    key_path: str


class PodSelector(_Model):
    component_type_selector: ComponentTypeSelector | None = None
    component_instance_selector: ComponentInstanceSelector | None = None
    replica_selector: ReplicaSelector | None = None


class ComponentDefinition(_Model):
    name: str = ""
    kind: GroupVersionKind | None = None
    owner_ref: str | None = None
    spec_definition: SpecDefinition | None = None
    scale_definition: ScaleDefinition | None = None
    status_definition: StatusDefinition | None = None
    suspend_definition: SuspendDefinition | None = None
    instance_id_path: str | None = None
    pod_selector: PodSelector | None = None

    @property
    def has_pod_definition(self) -> bool:
        spec = self.spec_definition
        return spec is not None and bool(
            spec.pod_template_spec_path or spec.pod_spec_path or spec.fragmented_pod_spec_definition
        )


class StructureDefinition(_Model):
    root_component: ComponentDefinition
    child_components: tuple[ComponentDefinition, ...] = ()
    additional_child_kinds: tuple[GroupVersionKind, ...] = ()


class PodGroupMember(_Model):
    component_name: str
    group_by_key_paths: tuple[str, ...] | None = None
    filters: tuple[str, ...] | None = None


class PodGroupAlpha(_Model):
    """One entry of the deprecated ``podGroups`` gang format (the one the catalog uses)."""

    name: str
    members: tuple[PodGroupMember, ...] = ()


class Topology(_Model):
    topology_name: str
    preferred_topology_level: str
    required_topology_level: str


class SubGroup(_Model):
    component_name: str
    topology: Topology | None = None


class PodGroup(_Model):
    """The current ``podGroup`` gang format: one group, optional subgroups per component."""

    name: str
    topology: Topology | None = None
    sub_groups: tuple[SubGroup, ...] | None = None


#: The variables the :class:`GangExpressions` see besides the top owner (``.``): the pod, and the
#: pods ``podsSelector`` selects (``null`` when the caller has none to give).
GANG_EXPRESSION_VARIABLES: tuple[str, ...] = ("pod", "pods")


class GangExpressions(_Model):
    """workload-map extension: jq expressions that compute the PodGroup fields a rule of the
    Karta format cannot express (annotation overrides, policy-dependent sizes, nested subgroups).

    Each runs on the top owner (``.``) with the pod as ``$pod`` and yields one value; ``null``
    keeps what the gang format computed. KAI's Karta plugin does not read them; a definition
    without them means what it meant before.

    ``pods_selector`` yields the labels (an object of strings) of the other pods a native grouper
    lists (KAI's MPIJob grouper: the job's launcher pods): the pods in the top owner's namespace
    carrying all of them are ``$pods`` for the other expressions, read live or from the objects
    given (``-f``); ``$pods`` is ``null`` when the caller has no pods to give.
    """

    name: str | None = None
    min_member: str | None = None
    min_sub_group: str | None = None
    sub_groups: str | None = None
    pod_sub_group: str | None = None
    pods_selector: str | None = None
    # Gang policy for the schedulers that read it from the gang's objects (Volcano, coscheduling,
    # the Workload API, Kueue): where the operator keeps it (e.g. a training job's
    # runPolicy.schedulingPolicy). KAI's pod-grouper takes these from labels instead.
    queue: str | None = None
    priority_class_name: str | None = None
    schedule_timeout_seconds: str | None = None
    min_resources: str | None = None


class GangScheduling(_Model):
    pod_groups: tuple[PodGroupAlpha, ...] | None = None
    pod_group: PodGroup | None = None
    expressions: GangExpressions | None = None


class OptimizationInstructions(_Model):
    gang_scheduling: GangScheduling | None = None


class KartaSpec(_Model):
    structure_definition: StructureDefinition
    optimization_instructions: OptimizationInstructions = Field(default_factory=OptimizationInstructions)

    @property
    def components(self) -> tuple[ComponentDefinition, ...]:
        """Root first, then children in declaration order."""
        s = self.structure_definition
        return (s.root_component, *s.child_components)

    def component(self, name: str) -> ComponentDefinition | None:
        for c in self.components:
            if c.name == name:
                return c
        return None


class ObjectMeta(_Model):
    name: str = ""
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    uid: str | None = None
    resource_version: str | None = None
    creation_timestamp: str | None = None
    generation: int | None = None


class Karta(_Model):
    """A whole definition object (``run.ai/v1alpha1 Karta``)."""

    api_version: str = KARTA_API_VERSION
    kind: str = KARTA_KIND
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: KartaSpec
    # Written by the operator; kept as data, never interpreted by the core.
    status: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def root_gvk(self) -> GroupVersionKind | None:
        return self.spec.structure_definition.root_component.kind

    def to_wire(self) -> dict[str, Any]:
        """The camelCase object, as it would be written to YAML or sent to the API server."""
        data: dict[str, Any] = _drop_empty_lists(
            self.model_dump(mode="json", by_alias=True, exclude_none=True)
        )
        if not data.get("status"):
            data.pop("status", None)
        return data


def _drop_empty_lists(value: Any) -> Any:
    # Empty lists are the models' "not set"; writing them back would add keys the author never wrote.
    if isinstance(value, dict):
        return {k: _drop_empty_lists(v) for k, v in value.items() if v != []}
    if isinstance(value, list):
        return [_drop_empty_lists(v) for v in value]
    return value
