"""Issue 24: unknown fields are errors by default (``runing:`` under ``statusMappings`` used to pass
with a warning and drop the phase), with the did-you-mean; ``--validate=warn`` keeps the lenient
mode and ``--validate=ignore`` drops them, as kubectl's flag. Every reader of definition files
follows it: ``validate``, ``--definitions``, ``lint``, ``test``. The flag's values are compared
with kubectl's (kubectl-validate-parity.yaml, and the real kubectl when it is installed)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.helpers import wmap
from tests.support import hostile_inputs as h
from workload_map import catalog
from workload_map.cli import exit_codes

PARITY = yaml.safe_load((Path(__file__).parent / "kubectl-validate-parity.yaml").read_text())
DID_YOU_MEAN = (
    'unknown field "runing" at spec.structureDefinition.rootComponent.statusDefinition.statusMappings '
    '(did you mean "running"?)'
)


def typo_definition(tmp_path: Path) -> Path:
    karta = h.karta("typo", {"structureDefinition": {"rootComponent": h._root()}})
    mappings = karta["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]["statusMappings"]
    mappings["runing"] = mappings.pop("running")
    path = tmp_path / "typo.yaml"
    path.write_text(yaml.safe_dump(karta, sort_keys=False))
    return path


def test_validate_rejects_a_typo_by_default_and_keeps_the_lenient_modes(tmp_path: Path) -> None:
    path = typo_definition(tmp_path)
    rc, out, err = wmap("validate", str(path))
    assert rc == exit_codes.ERROR
    assert out.startswith("INVALID: typo\n") and DID_YOU_MEAN in out and "[KARTA101]" in out
    assert "--validate=warn reports them as warnings" in err
    rc, out, err = wmap("validate", "--validate=warn", str(path))
    assert rc == 0 and out.startswith("OK: typo ") and f"warning: {path}:" in err and DID_YOU_MEAN in err
    for lenient in ("ignore", "false"):
        rc, out, err = wmap("validate", f"--validate={lenient}", str(path))
        assert (rc, err) == (0, "") and out.startswith("OK: typo ")
    # --validate alone is strict, and the next word stays the file (kubectl's no-option default).
    rc, out, _ = wmap("validate", "--validate", str(path))
    assert rc == exit_codes.ERROR and DID_YOU_MEAN in out


@pytest.mark.parametrize("case", PARITY["cases"], ids=[repr(c["value"]) for c in PARITY["cases"]])
def test_validate_flag_values_as_kubectl(case: dict[str, Any], tmp_path: Path) -> None:
    path = typo_definition(tmp_path)
    rc, out, err = wmap("validate", f"--validate={case['value']}", str(path))
    if case.get("rejected"):
        assert rc == exit_codes.USAGE
        assert (
            f'error: invalid - validate option "{case["value"]}"; must be one of: strict (or true), warn, '
            "ignore (or false)"
        ) in err
        return
    expected = {"strict": exit_codes.ERROR, "warn": 0, "ignore": 0}[case["mode"]]
    assert rc == expected, (case, out, err)
    assert ("warning:" in err) == (case["mode"] == "warn")


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_the_parity_file_still_matches_the_installed_kubectl() -> None:
    for case in PARITY["cases"]:
        done = subprocess.run(
            ["kubectl", "apply", "-f", "/dev/null", f"--validate={case['value']}", "--dry-run=client"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        rejected = "invalid - validate option" in done.stderr
        assert rejected == bool(case.get("rejected")), (case, done.stderr)


def test_definitions_flag_reads_strictly_unless_told(tmp_path: Path) -> None:
    path = typo_definition(tmp_path)
    rc, _, err = wmap("--definitions", str(path), "definitions")
    assert rc == exit_codes.USAGE
    assert f"error: --definitions {path}: {path}:" in err and DID_YOU_MEAN in err
    assert "--validate=warn reports them as warnings" in err
    rc, out, err = wmap("--validate=warn", "--definitions", str(path), "definitions", "-o", "json")
    assert rc == 0, err
    assert "typo" in [i["metadata"]["name"] for i in json.loads(out)["items"]]
    rc, out, _ = wmap("definitions", "--validate=ignore", "--definitions", str(path), "-o", "json")
    assert rc == 0 and "typo" in [i["metadata"]["name"] for i in json.loads(out)["items"]]


def test_lint_and_test_read_definitions_strictly_unless_told(tmp_path: Path) -> None:
    path = typo_definition(tmp_path)
    rc, _, err = wmap("lint", str(path))
    assert rc == exit_codes.USAGE and DID_YOU_MEAN in err
    rc, _, err = wmap("lint", "--validate=warn", str(path))  # read: it fails later, for lack of a CRD
    assert rc == exit_codes.USAGE and DID_YOU_MEAN not in err
    assert "typo: no schema for example.com/v1 Widget in the CRDs given" in err
    case = tmp_path / "case.yaml"
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    # The phase the typo drops: read leniently, the definition matches nothing for a running Widget.
    widget["status"] = {"phase": "Running"}
    case.write_text(yaml.safe_dump({"object": widget, "expect": {"phases": ["Undefined"]}}))
    rc, _, err = wmap("test", str(path), str(case))
    assert rc == exit_codes.USAGE and DID_YOU_MEAN in err
    rc, out, err = wmap("test", "--validate=warn", str(path), str(case))
    assert rc == 0 and out.startswith("PASS"), err


def test_the_built_in_catalog_passes_strict_validation() -> None:
    """Unknown fields and repeated keys are errors by default, every warning too with --strict."""
    data = Path(catalog.__file__).parent / "data"
    rc, out, err = wmap("validate", "--strict", str(data))
    assert rc == 0 and err == "", err
    assert out.count("OK: ") == len(list(data.glob("*.yaml")))
