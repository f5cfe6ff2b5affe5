"""The batch schedulers' vocabulary: the objects each takes a gang as, and the labels,
annotations and pod fields that put a pod into it. Constants only (the CLI reads
:data:`SCHEDULERS` without importing the renderers, :mod:`workload_map.resolve.schedulers`)."""

from __future__ import annotations

#: What ``--scheduler`` takes, in the order help texts list it.
SCHEDULERS: tuple[str, ...] = ("kai", "volcano", "coscheduling", "workload-api", "kueue")
DEFAULT_SCHEDULER = "kai"

# KAI Scheduler (kai-scheduler/KAI-Scheduler; external PodGroups: docs/batch/README.md)
KAI_SCHEDULER_NAME = "kai-scheduler"
KAI_SKIP_PODGROUPER_ANNOTATION = "kai.scheduler/skip-podgrouper"

# Volcano (volcano-sh/apis pkg/apis/scheduling/v1beta1, batch/v1alpha1)
VOLCANO_API_VERSION = "scheduling.volcano.sh/v1beta1"
VOLCANO_SCHEDULER_NAME = "volcano"
VOLCANO_GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
VOLCANO_TASK_SPEC_ANNOTATION = "volcano.sh/task-spec"
VOLCANO_QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
VOLCANO_QUEUE_LABEL = "volcano.sh/queue-name"
VOLCANO_NETWORK_TOPOLOGY_MODE_LABEL = "volcano.sh/network-topology-mode"
VOLCANO_NETWORK_TOPOLOGY_TIER_LABEL = "volcano.sh/network-topology-highest-tier-allowed"
VOLCANO_DEFAULT_QUEUE = "default"

# scheduler-plugins coscheduling (kubernetes-sigs/scheduler-plugins apis/scheduling/v1alpha1)
COSCHEDULING_API_VERSION = "scheduling.x-k8s.io/v1alpha1"
COSCHEDULING_POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
COSCHEDULING_SCHEDULER_NAME = "scheduler-plugins-scheduler"

# The Kubernetes Workload API (k8s.io/api scheduling/v1beta1, v1alpha3)
WORKLOAD_API_VERSION = "scheduling.k8s.io/v1beta1"
WORKLOAD_API_COMPOSITE_VERSION = "scheduling.k8s.io/v1alpha3"
WORKLOAD_API_MAX_TEMPLATES = 8
WORKLOAD_API_MAX_DEPTH = 4
WORKLOAD_API_MAX_CLAIMS = 4

# Kueue (kubernetes-sigs/kueue apis/kueue/v1beta2)
KUEUE_API_VERSION = "kueue.x-k8s.io/v1beta2"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
KUEUE_MAX_POD_SETS = 18

#: The fields of a core/v1 PodSpec (Kubernetes 1.35): what a Kueue podSet template may hold. A
#: definition's pod spec can be a framework's superset (KServe's predictor adds minReplicas...).
POD_SPEC_FIELDS = frozenset(
    {
        "activeDeadlineSeconds",
        "affinity",
        "automountServiceAccountToken",
        "containers",
        "dnsConfig",
        "dnsPolicy",
        "enableServiceLinks",
        "ephemeralContainers",
        "hostAliases",
        "hostIPC",
        "hostNetwork",
        "hostPID",
        "hostUsers",
        "hostname",
        "hostnameOverride",
        "imagePullSecrets",
        "initContainers",
        "nodeName",
        "nodeSelector",
        "os",
        "overhead",
        "preemptionPolicy",
        "priority",
        "priorityClassName",
        "readinessGates",
        "resourceClaims",
        "resources",
        "restartPolicy",
        "runtimeClassName",
        "schedulerName",
        "schedulingGates",
        "schedulingGroup",
        "securityContext",
        "serviceAccount",
        "serviceAccountName",
        "setHostnameAsFQDN",
        "shareProcessNamespace",
        "subdomain",
        "terminationGracePeriodSeconds",
        "tolerations",
        "topologySpreadConstraints",
        "volumes",
        "workloadRef",
    }
)
