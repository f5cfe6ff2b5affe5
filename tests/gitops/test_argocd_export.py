"""``wmap export argocd``: the three forms (argocd-cm ConfigMap, argo-helm values, the
resource_customizations directory), usage errors and exit codes, hostile definitions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.helpers import wmap
from tests.support.argocd_lua import ArgoCDLua
from tests.support.karmada_lua import LuaScriptError
from workload_map.catalog import get_definition
from workload_map.interpret.argocd import ARGO_HEALTH, ERROR_PREFIX, health, health_check
from workload_map.model import Karta
from workload_map.model.definition import ResourceStatus
from workload_map.resolve import compile_definition

HEALTH = "resource.customizations.health."
OPEN_LIBS = "resource.customizations.useOpenLibs."


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    for name in ("KUBECONFIG", "WMAP_CONFIG", "WMAP_OUTPUT", "WMAP_CATALOG_DIR"):
        monkeypatch.delenv(name, raising=False)
    yield


def gizmo(phase_expression: str, *, condition_type: str = "Ready") -> dict[str, Any]:
    """A Karta for example.com/v1 Gizmo whose Initializing rule is ``phase_expression``."""
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "gizmos-example-com-v1"},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "gizmo",
                    "kind": {"group": "example.com", "version": "v1", "kind": "Gizmo"},
                    "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                    "statusDefinition": {
                        "conditionsDefinition": {"path": ".status.conditions"},
                        "statusMappings": {
                            "initializing": [
                                {"byExpression": {"expression": phase_expression, "expectedResult": "true"}}
                            ],
                            "failed": [{"byConditions": [{"type": condition_type, "status": "False"}]}],
                            "running": [{"byConditions": [{"type": condition_type, "status": "True"}]}],
                        },
                    },
                }
            }
        },
    }


def _write(tmp_path: Path, name: str, data: object) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return str(path)


def _obj(**status: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}, "status": status}


# --- the forms ---------------------------------------------------------------------------------


def test_the_configmap_holds_a_script_and_open_libs_per_group_and_kind() -> None:
    rc, out, err = wmap("export", "argocd", "--all")
    assert rc == 0, err
    cm = yaml.safe_load(out)
    assert (cm["apiVersion"], cm["kind"], cm["metadata"]["name"], cm["metadata"]["namespace"]) == (
        "v1",
        "ConfigMap",
        "argocd-cm",
        "argocd",
    )
    data = cm["data"]
    keys = {k.removeprefix(HEALTH) for k in data if k.startswith(HEALTH)}
    assert {k.removeprefix(OPEN_LIBS) for k in data if k.startswith(OPEN_LIBS)} == keys
    assert all(data[OPEN_LIBS + k] == "true" for k in keys)
    assert {"kubeflow.org_PyTorchJob", "ray.io_RayJob", "serving.kserve.io_InferenceService"} <= keys
    # Argo CD judges these in Go: only with --include-native
    assert not {"apps_Deployment", "batch_Job", "Pod", "apps_StatefulSet"} & keys
    assert "batch_CronJob" in keys  # Argo CD's bundled Lua check, replaced on purpose
    assert len(keys) == 24
    rc, out, _ = wmap("export", "argocd", "--all", "--include-native", "-o", "json")
    assert rc == 0
    native = {k.removeprefix(HEALTH) for k in json.loads(out)["data"] if k.startswith(HEALTH)}
    assert {"apps_Deployment", "batch_Job", "Pod"} <= native and len(native) == 28
    # a script in the YAML is a literal block, runnable as it stands
    assert f"{HEALTH}kubeflow.org_PyTorchJob: |" in wmap("export", "argocd", "pytorchjobs")[1]


def test_the_exported_script_runs_as_argocd_runs_it() -> None:
    rc, out, _ = wmap("export", "argocd", "pytorchjobs", "--argocd-namespace", "gitops")
    assert rc == 0
    cm = yaml.safe_load(out)
    assert cm["metadata"]["namespace"] == "gitops"
    script = cm["data"][HEALTH + "kubeflow.org_PyTorchJob"]
    obj = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "p"},
        "status": {
            "conditions": [{"type": "Created", "status": "True"}, {"type": "Failed", "status": "True"}]
        },
    }
    assert ArgoCDLua().health(script, obj) == {
        "status": "Degraded",
        "message": "Phase: Failed; Failed: pytorchjob rule: condition Failed is True",
    }


def test_without_open_libs_argocd_could_not_run_it() -> None:
    # Argo CD opens string and math for an argocd-cm check only with useOpenLibs: the reason every
    # script comes with its useOpenLibs key.
    script = health_check([compile_definition(_catalog("jobset.x-k8s.io/v1alpha2", "JobSet"))]).script
    obj = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "j"}}
    with pytest.raises(LuaScriptError):
        ArgoCDLua(open_libs=False).health(script, obj)
    assert ArgoCDLua().health(script, obj)["status"] in ARGO_HEALTH.values()


def test_helm_values_put_the_keys_under_configs_cm() -> None:
    rc, out, err = wmap("export", "argocd", "rayjobs", "--form", "helm-values")
    assert rc == 0, err
    values = yaml.safe_load(out)
    assert set(values) == {"configs"} and set(values["configs"]) == {"cm"}
    assert set(values["configs"]["cm"]) == {HEALTH + "ray.io_RayJob", OPEN_LIBS + "ray.io_RayJob"}


def test_out_dir_writes_argocds_resource_customizations_layout(tmp_path: Path) -> None:
    out_dir = tmp_path / "resource_customizations"
    rc, out, err = wmap("export", "argocd", "--all", "--include-native", "--out-dir", str(out_dir))
    assert rc == 0, err
    written = sorted(str(p.relative_to(out_dir)) for p in out_dir.rglob("*") if p.is_file())
    assert out.splitlines() == [str(out_dir / w) for w in sorted(written, key=lambda w: out.index(w))]
    assert "kubeflow.org/MPIJob/health.lua" in written and "Pod/health.lua" in written
    assert "serving.kserve.io/LLMInferenceService/health.lua" in written and len(written) == 28
    script = (out_dir / "kubeflow.org/MPIJob/health.lua").read_text()
    for version in ("v1", "v2beta1"):  # one script, both versions
        api_version = f"kubeflow.org/{version}"
        obj: dict[str, Any] = {"apiVersion": api_version, "kind": "MPIJob", "metadata": {"name": "m"}}
        cd = compile_definition(_catalog(api_version, "MPIJob"))
        assert ArgoCDLua().health(script, obj) == asdict(health(cd, obj))
    assert not list(out_dir.rglob(".health.*"))  # no temporary file left


def test_usage_errors_and_exit_codes(tmp_path: Path) -> None:
    assert wmap("export", "argocd")[0] == 2
    assert wmap("export", "argocd", "jobsets", "--all")[0] == 2
    rc, _, err = wmap("export", "argocd", "gizmos")
    assert rc == 4 and "gizmos" in err
    a_file = tmp_path / "file"
    a_file.write_text("keep me")
    rc, out, err = wmap("export", "argocd", "jobsets", "--out-dir", str(a_file))
    assert rc == 2 and out == "" and "--out-dir" in err and a_file.read_text() == "keep me"
    assert wmap("export", "argocd", "jobsets", "--form", "kustomize")[0] == 2


# --- hostile and untranslatable definitions ----------------------------------------------------


def test_a_definition_whose_rules_do_not_translate_is_left_out_and_named(tmp_path: Path) -> None:
    # recursion: a loop the input does not bound, refused by the Lua back end (Argo CD's sandbox
    # only has a one-second timeout)
    bomb = "def g(n): if n > 0 then g(n-1), g(n-1) else . end; [g(40)] | length > 0"
    path = _write(tmp_path, "gizmo.yaml", gizmo(bomb))
    rc, out, err = wmap("--definitions", path, "export", "argocd", "gizmos")
    assert rc == 1 and out == "" and "nothing could be exported" in err
    assert "warning: example.com/Gizmo: gizmos-example-com-v1 left out:" in err and "recursion" in err
    assert "statusMappings.initializing[0].byExpression.expression" in err
    rc, out, err = wmap("--definitions", path, "export", "argocd", "gizmos", "--strict")
    assert rc == 1 and out == "" and "error: example.com/Gizmo: gizmos-example-com-v1 left out" in err


def test_a_definition_without_status_rules_is_left_out() -> None:
    data = gizmo(".x")
    del data["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]
    check = health_check([compile_definition(Karta.model_validate(data))])
    assert check.versions == {} and "no statusDefinition" in check.omitted["gizmos-example-com-v1"][0]


def test_a_bounded_blow_up_ends_in_unknown_on_both_sides() -> None:
    # the Lua runtime caps strings at 10 MB as the engine's cost model does: Unknown, no hang
    cd = compile_definition(Karta.model_validate(gizmo('("a" * 1000000000 | length) > 0')))
    got = ArgoCDLua().health(health_check([cd]).script, _obj())
    want = health(cd, _obj())
    assert got["status"] == want.status == "Unknown"
    assert got["message"].startswith(ERROR_PREFIX) and want.message.startswith(ERROR_PREFIX)
    assert "string length exceeds" in got["message"]


def test_rule_words_from_the_definition_cannot_break_out_of_the_script() -> None:
    hostile = 'Ready"]] end os.exit(1) --\n\x1b[2J\\'
    cd = compile_definition(Karta.model_validate(gizmo(".status.x == 1", condition_type=hostile)))
    script = health_check([cd]).script
    obj = _obj(conditions=[{"type": hostile, "status": "False"}])
    got = ArgoCDLua().health(script, obj)
    assert got == asdict(health(cd, obj))
    assert got["status"] == ARGO_HEALTH[ResourceStatus.FAILED] and hostile in got["message"]


def test_many_conditions_stay_within_the_stack_and_agree() -> None:
    cd = compile_definition(Karta.model_validate(gizmo("(.status.conditions | length) > 5000")))
    obj = _obj(conditions=[{"type": f"T{i}", "status": "True"} for i in range(6000)])
    lua = ArgoCDLua()
    got = lua.health(health_check([cd]).script, obj)
    assert got == asdict(health(cd, obj))
    assert got["status"] == "Progressing" and lua.max_depth < 200


def _catalog(api_version: str, kind: str) -> Karta:
    karta = get_definition(api_version, kind)
    assert karta is not None
    return karta
