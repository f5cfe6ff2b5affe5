"""One live workload, every consumer: ``wmap get -o json``, ``wmap describe -o json``, the REST
API (what the web UI renders) and the exporter report the same pods desired/ready per component,
the same attributed pods and the same GPU, CPU and memory totals, for every catalog type (29
cases over 24 kinds) seeded with the objects, owner chains and labels its controllers create
(tests/support/seed.py and seed_catalog.py, framework-shapes.md "Owner chain" per type)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import orjson
import pytest
from starlette.testclient import TestClient

from tests.cli.helpers import wmap
from tests.exporter.conftest import ExporterProcess, start_exporter
from tests.server.conftest import AppFactory
from tests.support.cluster import TestCluster
from tests.support.crds import install_crds
from tests.support.kube import KubeTestClient
from tests.support.seed import (
    PYTORCH_ROLE,
    create_deployment_tree,
    create_isvc_tree,
    create_job_tree,
    create_jobset_tree,
    create_lws_tree,
    create_mpijob_tree,
    create_raycluster_tree,
    create_rayjob_tree,
    create_statefulset_tree,
    role_pods,
)
from tests.support.seed_catalog import (
    DCD_CRD,
    DYNAMO_SLUG,
    create_dynamo_components_tree,
    create_isvc_knative_tree,
    create_llmisvc_single_tree,
    create_nimservice_lws_tree,
    expected_counts,
    fixture,
    seed_catalog_type,
)

pytestmark = pytest.mark.cluster

Counts = dict[str, tuple[int, int]]  # component -> (desired, ready)


def _seed_pytorch(kube: KubeTestClient, name: str, ns: str) -> Tree:
    """PyTorchJob -> Pods: the training operator owns the pods by the job directly."""
    from tests.cli.helpers import pytorchjob

    pt = kube.create(pytorchjob(name, ns))
    roles = (("master", 0), ("worker", 0), ("worker", 1))
    pods = [(f"{name}-{role}-{i}", role, "n1") for role, i in roles]
    return pt, role_pods(
        kube, pt, PYTORCH_ROLE, pods, labels={"training.kubeflow.org/job-name": name}, gpus=1
    )


Tree = tuple[dict[str, Any], list[dict[str, Any]]]
Seed = Callable[[KubeTestClient, str, str], Tree]


class Case(NamedTuple):
    kind: str
    word: str  # the type word the CLI and REST API are asked with
    name: str
    seed: Seed
    #: (desired, owned) pods the lifecycle fixture's definition reads (None: not from a fixture)
    expected: tuple[int, int] | None = None


def _fixture_case(kind: str, word: str, slug: str) -> Case:
    name = fixture(slug)["object"]["metadata"]["name"]
    return Case(kind, word, name, lambda k, n, ns: seed_catalog_type(k, slug, ns, n), expected_counts(slug))


CASES: dict[str, Case] = {
    "JobSet": Case(
        "JobSet",
        "jobsets",
        "train",
        lambda k, n, ns: create_jobset_tree(k, n, ns, (("leader", 1), ("workers", 3))),
    ),
    "LeaderWorkerSet": Case(
        "LeaderWorkerSet", "lws", "vllm", lambda k, n, ns: create_lws_tree(k, n, ns, replicas=2, size=3)
    ),
    "PyTorchJob": Case("PyTorchJob", "pytorchjobs", "pt", _seed_pytorch),
    "RayCluster": Case(
        "RayCluster", "rayclusters", "rc", lambda k, n, ns: create_raycluster_tree(k, n, ns, workers=2)
    ),
    "Deployment": Case(
        "Deployment", "deploy", "web", lambda k, n, ns: create_deployment_tree(k, n, ns, replicas=2)
    ),
    "MPIJob": Case("MPIJob", "mpijobs", "mpi", lambda k, n, ns: create_mpijob_tree(k, n, ns, workers=2)),
    "RayJob": Case("RayJob", "rayjobs", "rj", lambda k, n, ns: create_rayjob_tree(k, n, ns, workers=2)),
    "StatefulSet": Case(
        "StatefulSet", "sts", "db", lambda k, n, ns: create_statefulset_tree(k, n, ns, replicas=2)
    ),
    "Job": Case("Job", "jobs", "batchy", lambda k, n, ns: create_job_tree(k, n, ns, parallelism=2)),
    "InferenceService": Case(
        "InferenceService", "isvc", "iris", lambda k, n, ns: create_isvc_tree(k, n, ns, replicas=2)
    ),
    "InferenceService-knative": Case(
        "InferenceService", "isvc", "iris-kn", lambda k, n, ns: create_isvc_knative_tree(k, n, ns, replicas=2)
    ),
    "KnativeService": _fixture_case("Service", "ksvc", "serving-knative-dev-service-v1"),
    "LLMInferenceService-multinode": _fixture_case(
        "LLMInferenceService", "llminferenceservices", "serving-kserve-io-llminferenceservice-v1alpha2"
    ),
    "LLMInferenceService-single": Case(
        "LLMInferenceService", "llmisvc", "qwen-7b", lambda k, n, ns: create_llmisvc_single_tree(k, n, ns)
    ),
    "NIMService": _fixture_case("NIMService", "nimservices", "apps-nvidia-com-nimservice-v1alpha1"),
    "NIMService-lws": Case(
        "NIMService", "nimservice", "llama3-mn", lambda k, n, ns: create_nimservice_lws_tree(k, n, ns)
    ),
    "Milvus": _fixture_case("Milvus", "milvuses", "milvus-io-milvus-v1beta1"),
    "PodCliqueSet": _fixture_case("PodCliqueSet", "pcs", "grove-io-podcliqueset-v1alpha1"),
    "DynamoGraphDeployment-grove": _fixture_case("DynamoGraphDeployment", "dgd", DYNAMO_SLUG),
    "DynamoGraphDeployment-components": Case(
        "DynamoGraphDeployment",
        "dynamographdeployments",
        "vllm-dcd",
        lambda k, n, ns: create_dynamo_components_tree(k, n, ns),
        expected_counts(DYNAMO_SLUG),
    ),
    "Sandbox": _fixture_case("Sandbox", "sandboxes", "agents-x-k8s-io-sandbox-v1beta1"),
    "TrainJob": _fixture_case("TrainJob", "trainjobs", "trainer-kubeflow-org-trainjob-v1alpha1"),
    "SparkApplication": _fixture_case(
        "SparkApplication", "sparkapplications", "sparkoperator-k8s-io-sparkapplication-v1beta2"
    ),
    "VolcanoJob": _fixture_case("Job", "vcjob", "batch-volcano-sh-job-v1alpha1"),
    "RayService": _fixture_case("RayService", "rayservices", "ray-io-rayservice-v1"),
    "TFJob": _fixture_case("TFJob", "tfjobs", "kubeflow-org-tfjob-v1"),
    "XGBoostJob": _fixture_case("XGBoostJob", "xgboostjobs", "kubeflow-org-xgboostjob-v1"),
    "JAXJob": _fixture_case("JAXJob", "jaxjobs", "kubeflow-org-jaxjob-v1"),
    "PaddleJob": _fixture_case("PaddleJob", "paddlejobs", "kubeflow-org-paddlejob-v1"),
}


@pytest.fixture(scope="module")
def dcd_crd(kube: KubeTestClient) -> None:
    """Dynamo's DynamoComponentDeployment (not in the corpus): a stand-in CRD, see DCD_CRD."""
    try:
        install_crds(kube, [DCD_CRD], downlevel=False)
    except RuntimeError as exc:
        if "AlreadyExists" not in str(exc) and "already exists" not in str(exc):
            raise


@pytest.fixture(scope="module")
def api(make_app: AppFactory) -> TestClient:
    return make_app()


@pytest.fixture(scope="module")
def exporter(cluster: TestCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExporterProcess]:
    proc = start_exporter(cluster, tmp_path_factory.mktemp("agree"))
    try:
        proc.wait_ready(timeout=180)  # lists every catalog kind first: slow on a loaded machine
        yield proc
    finally:
        proc.stop()


def _row_key(name: str) -> str:
    """A row's instance (or component) name without its replica key: ``pleader[0]`` -> ``pleader``.
    get splits an instance into replica rows where describe lists the instance."""
    return name.split("[", 1)[0]


def _leaves(components: list[dict[str, Any]]) -> Counts:
    """(desired, ready) per row key over the tree's leaves (rows without children)."""
    out: dict[str, list[int]] = {}

    def walk(c: dict[str, Any]) -> None:
        children = c.get("children") or ()
        if not children:
            d, r = out.setdefault(_row_key(c["name"]), [0, 0])
            out[_row_key(c["name"])] = [d + c["replicas"]["desired"], r + c["replicas"]["ready"]]
        for child in children:
            walk(child)

    for c in components:
        walk(c)
    return {k: (v[0], v[1]) for k, v in out.items() if (v[0], v[1]) != (0, 0)}


@pytest.mark.parametrize("case_id", list(CASES))
def test_get_describe_rest_and_exporter_agree(
    case_id: str,
    kube: KubeTestClient,
    namespace: str,
    admin_kubeconfig: Path,
    api: TestClient,
    bearer: Callable[[str], dict[str, str]],
    exporter: ExporterProcess,
    dcd_crd: None,
) -> None:
    case = CASES[case_id]
    kind, word, name = case.kind, case.word, case.name
    _, seeded = case.seed(kube, name, namespace)
    kc = str(admin_kubeconfig)
    rc, out, err = wmap("get", word, name, "-n", namespace, "-o", "json", "--kubeconfig", kc)
    assert rc == 0, err
    row = orjson.loads(out)["items"][0]
    # A component the workload does not use (an ISVC without transformer) is a 0/0 row in get
    # and absent from describe: the same fact, compared without it.
    from_get = {}
    for c in row["components"]:
        if (c["desired"], c["ready"]) != (0, 0):
            d, r = from_get.get(_row_key(c["name"]), (0, 0))
            from_get[_row_key(c["name"])] = (d + c["desired"], r + c["ready"])
    rc, out, err = wmap("describe", f"{word}/{name}", "-n", namespace, "-o", "json", "--kubeconfig", kc)
    assert rc == 0, err
    described = orjson.loads(out)
    r = api.get(f"/api/v1/namespaces/{namespace}/workloads/{word}/{name}", headers=bearer("admin"))
    assert r.status_code == 200, r.text
    rest = r.json()  # what the web UI renders (static/app.js reads this document)
    assert _leaves(described["components"]) == from_get == _leaves(rest["components"])
    assert row["resources"] == described["resources"] == rest["resources"]
    described_pods = _pod_names(described["components"])
    assert described_pods == _pod_names(rest["components"])
    # Every pod the controllers created for the workload is attributed, through its whole chain.
    assert described_pods == {p["metadata"]["name"] for p in seeded}
    assert len(described_pods) == sum(ready for _, ready in from_get.values())
    if case.expected is not None:  # and the counts are the ones the lifecycle fixture expects
        desired, owned = case.expected
        assert (sum(d for d, _ in from_get.values()), len(described_pods)) == (desired, owned)

    group = row["apiVersion"].rpartition("/")[0]
    lb = {"namespace": namespace, "group": group, "kind": kind, "name": name}

    def exported_pods(e: Any) -> dict[str, tuple[str, str]]:
        """pod -> (component, row key) as the exporter attributes it."""
        return {
            s.labels["pod"]: (s.labels["component"], s.labels["instance"] or s.labels["component"])
            for s in e.find("wmap_pod_workload_info", namespace=namespace, workload_kind=kind)
        }

    def ready_by_component(e: Any) -> dict[str, int]:
        return {
            s.labels["component"]: int(s.value)
            for s in e.find("wmap_workload_component_pods", **lb, state="ready")
            if s.value
        }

    def agrees(e: Any) -> bool:
        pods = exported_pods(e)
        if set(pods) != described_pods:
            return False
        per_component = Counter(comp for comp, _ in pods.values())
        ready = ready_by_component(e)  # grouping components (an LWS group) also sum their children
        return all(ready.get(comp) == n for comp, n in per_component.items())

    exp = exporter.wait_for(agrees, what=f"{kind}: the exporter's pods and component counts")
    pods = exported_pods(exp)
    # The exporter's rows (instance, else component) hold the pods get and describe count there.
    assert dict(Counter(key for _, key in pods.values())) == {k: r for k, (_, r) in from_get.items() if r}
    # Desired per pod-bearing component: the exporter's number is the sum of get's rows of it.
    component_of = {key: comp for comp, key in pods.values()}
    for comp in set(component_of.values()):
        want = sum(d for key, (d, _) in from_get.items() if component_of.get(key) == comp)
        assert exp.value("wmap_workload_component_pods", **lb, component=comp, state="desired") == want, comp
    # Roles apart: each instance row (a JobSet's replicated job, a Ray worker group) per instance.
    for key, comp in component_of.items():
        if key == comp:
            continue
        inst = {"component": comp, "instance": key}
        got = tuple(
            exp.value("wmap_workload_instance_pods", **lb, **inst, state=st) for st in ("desired", "ready")
        )
        assert got == from_get[key], (key, got)
    for resource, field in (("nvidia.com/gpu", "gpus"), ("cpu", "cpuMillis"), ("memory", "memoryBytes")):
        value = exp.value("wmap_workload_resource_requests", **lb, resource=resource) or 0
        scale = 1000 if field == "cpuMillis" else 1
        assert round(value * scale) == row["resources"][field], resource


def _pod_names(components: list[dict[str, Any]]) -> set[str]:
    out: set[str] = set()
    for c in components:
        out.update(p["name"] for p in c.get("pods") or ())
        out |= _pod_names(c.get("children") or [])
    return out
