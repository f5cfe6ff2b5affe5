"""``wmap`` root behaviour and ``wmap validate``: output, streams, exit codes, lazy imports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from tests.model.conftest import ENGINE, base, children, root
from workload_map.cli import exit_codes
from workload_map.cli.main import cli, run
from workload_map.model import _jq

DATA = Path(__file__).parents[1] / "model" / "data"


@pytest.fixture(autouse=True)
def _engine_stand_in(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    if not ENGINE:
        monkeypatch.setattr(_jq, "check", lambda source: None)
        monkeypatch.setattr(_jq, "assignable", lambda source: None)
    yield


def invoke(*args: str, input: str | None = None) -> tuple[int, str, str]:
    """Run through ``run`` (the real top-level handler) with captured streams."""
    runner = CliRunner()
    holder: dict[str, int] = {}

    def entry() -> None:
        holder["rc"] = run(list(args))

    import click

    cmd = click.Command("wrap", callback=entry)
    result: Result = runner.invoke(cmd, [], input=input, catch_exceptions=False)
    return holder["rc"], result.stdout, result.stderr


def write(tmp_path: Path, name: str, data: object) -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(data, sort_keys=False) if not isinstance(data, str) else data)
    return p


# --- root ---------------------------------------------------------------------------------


def test_version_prints_only_the_version() -> None:
    rc, out, err = invoke("--version")
    assert (rc, out, err) == (0, "0.1.0\n", "")


def test_no_arguments_prints_help() -> None:
    rc, out, _ = invoke()
    assert rc == 0 and "Usage: wmap" in out and "validate" in out


def test_unknown_command_suggests() -> None:
    rc, out, err = invoke("validat", "x")
    assert rc == exit_codes.USAGE and out == ""
    assert 'error: unknown command "validat" for "wmap"' in err
    assert "Did you mean this?\n\tvalidate" in err


def test_unknown_flag_is_usage_error() -> None:
    rc, _, err = invoke("validate", "--nope", "x")
    assert rc == 2 and "error: No such option '--nope'" in err


def test_internal_error_without_and_with_debug(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import workload_map.cli.commands.validate as v

    def boom(*_a: object, **_k: object) -> None:
        raise RuntimeError("kaput")

    monkeypatch.setattr(v, "load_definitions", boom)
    p = write(tmp_path, "x.yaml", base())
    rc, _, err = invoke("validate", str(p))
    assert rc == 1
    assert err == "error: internal error: RuntimeError: kaput (rerun with --debug to see the traceback)\n"
    rc, _, err = invoke("--debug", "validate", str(p))
    assert rc == 1 and "Traceback (most recent call last)" in err


def test_help_does_not_import_heavy_modules() -> None:
    code = (
        "import sys\n"
        "from workload_map.cli.main import run\n"
        "rc = run(['--help'])\n"
        "rc2 = run(['--version'])\n"
        "names = ('pydantic', 'yaml', 'httpx', 'orjson', 'workload_map.expr', 'workload_map.model')\n"
        "heavy = [m for m in names if m in sys.modules]\n"
        "print(rc, rc2, heavy, file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stderr.strip() == "0 0 []"


def test_help_via_module_and_importtime() -> None:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "workload_map.cli.main", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "validate" in proc.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    for heavy in ("pydantic", "yaml", "httpx", "workload_map.expr", "workload_map.model"):
        assert heavy not in imported


# --- validate -------------------------------------------------------------------------------


def test_valid_file() -> None:
    rc, out, err = invoke("validate", str(DATA / "valid" / "jobset.yaml"))
    assert rc == 0, err
    assert out == (
        "OK: jobset-x-k8s-io-jobset-v1alpha2 is a valid Karta definition "
        "(GVK: jobset.x-k8s.io/v1alpha2, Kind=JobSet)\n"
    )
    assert err == ""


def test_core_group_gvk_format() -> None:
    rc, out, _ = invoke("validate", str(DATA / "valid" / "pod.yaml"))
    assert rc == 0 and out == "OK: pod is a valid Karta definition (GVK: /v1, Kind=Pod)\n"


def test_invalid_file_lists_findings_with_locations() -> None:
    p = DATA / "invalid" / "broken.yaml"
    unknown = (
        f'{p}:15:7: unknown field "ownerName" at spec.structureDefinition.childComponents[0] '
        '(did you mean "ownerRef"?) [KARTA101]'
    )
    rc, out, err = invoke("validate", "--validate=warn", str(p))
    assert rc == exit_codes.ERROR
    lines = out.splitlines()
    assert lines[0] == "INVALID: broken"
    assert lines[1] == f"  {p}:10:7: root component cannot have owner ref [KARTA004]"
    assert lines[2] == f"  {p}:14:7: child component 'worker' has no owner ref [KARTA006]"
    assert lines[3] == f"  {p}:16:7: component 'worker' has multiple pod spec definitions [KARTA009]"
    err_lines = err.splitlines()
    assert err_lines[0] == f"warning: {unknown}"
    assert err_lines[-1] == "error: 3 finding(s) in broken"
    # By default (strict) the unknown field is one of the errors, listed in document order.
    rc, out, err = invoke("validate", str(p))
    assert rc == exit_codes.ERROR and out.splitlines()[1] == f"  {unknown}"
    assert "error: 4 finding(s) in broken" in err and "--validate=warn" in err


def test_strict_turns_warnings_into_errors(tmp_path: Path) -> None:
    d = base()
    children(d)[0]["ownerName"] = "root"
    p = write(tmp_path, "w.yaml", d)
    rc, out, err = invoke("validate", "--validate=warn", str(p))
    assert rc == 0 and out.startswith("OK: t ") and "warning:" in err
    rc, out, err = invoke("validate", "--validate=warn", "--strict", str(p))
    assert rc == 1 and out.startswith("INVALID: t\n") and "[KARTA101]" in out
    assert err.strip().endswith("error: 1 finding(s) in t")


def test_quiet(tmp_path: Path) -> None:
    d = base()
    children(d)[0]["ownerName"] = "root"
    p = write(tmp_path, "w.yaml", d)
    assert invoke("validate", "-q", "--validate=warn", str(p)) == (0, "", "")


def test_directory_mixed(tmp_path: Path) -> None:
    shutil.copy(DATA / "valid" / "pod.yaml", tmp_path / "a.yaml")
    shutil.copy(DATA / "invalid" / "broken.yaml", tmp_path / "b.yaml")
    rc, out, _ = invoke("validate", str(tmp_path))
    assert rc == 1
    assert out.splitlines()[0].startswith("OK: pod ")
    assert out.splitlines()[1] == "INVALID: broken"


def test_type_errors_are_invalid_with_locations() -> None:
    p = DATA / "invalid" / "types.yaml"
    rc, out, err = invoke("validate", str(p))
    assert rc == 1
    assert out.splitlines()[0] == "INVALID: types"
    assert "replicasPath: expected a string, got number 5 [KARTA102]" in out
    assert "error: 1 finding(s) in types" in err


def test_not_a_definition_exits_2() -> None:
    p = DATA / "invalid" / "deployment.yaml"
    rc, out, err = invoke("validate", str(p))
    assert rc == exit_codes.USAGE and out == ""
    assert err == (
        f"error: {p}: document 1 (line 1) is not a Karta definition: "
        "it is a Deployment (apps/v1) [KARTA104]\n"
    )


def test_malformed_yaml_exits_2(tmp_path: Path) -> None:
    p = write(tmp_path, "bad.yaml", "spec:\n  a: [1, 2\n  b: c\n")
    rc, out, err = invoke("validate", str(p))
    assert rc == 2 and out == ""
    assert err.startswith(f"error: {p}:3:") and "invalid YAML" in err


def test_missing_file_and_empty_file(tmp_path: Path) -> None:
    rc, _, err = invoke("validate", str(tmp_path / "nope.yaml"))
    assert rc == 2 and "cannot read" in err and "No such file or directory" in err
    p = write(tmp_path, "empty.yaml", "")
    rc, _, err = invoke("validate", str(p))
    assert rc == 2 and err == f"error: {p}: contains no Karta definition\n"


def test_stdin() -> None:
    text = yaml.safe_dump(base()["spec"])
    rc, out, _ = invoke("validate", "-", input=text)
    assert rc == 0 and out == "OK: stdin is a valid Karta definition (GVK: example.com/v1, Kind=Job)\n"


def test_output_flag_rejected() -> None:
    rc, out, err = invoke("validate", "-o", "json", str(DATA / "valid" / "pod.yaml"))
    assert rc == 2 and out == ""
    assert "error: --output is not supported by wmap validate" in err
    rc, out, err = invoke("-o", "yaml", "validate", str(DATA / "valid" / "pod.yaml"))
    assert rc == 2 and out == ""
    assert "error: --output is not supported by wmap validate" in err


def test_configured_output_does_not_affect_validate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WMAP_OUTPUT", "json")
    rc, out, _ = invoke("validate", str(DATA / "valid" / "pod.yaml"))
    assert rc == 0 and out.startswith("OK: pod ")


def test_exactly_one_argument() -> None:
    assert invoke("validate")[0] == 2
    rc, _, err = invoke("validate", "a.yaml", "b.yaml")
    assert rc == 2 and "unexpected extra argument" in err


def test_upstream_messages_verbatim(tmp_path: Path) -> None:
    d = base()
    del root(d)["statusDefinition"]
    children(d).append({"name": "x", "ownerRef": "ghost"})
    p = write(tmp_path, "u.yaml", d)
    rc, out, _ = invoke("validate", str(p))
    assert rc == 1
    body = [line.split(": ", 1)[1] for line in out.splitlines()[1:]]
    assert body == [
        "root component must have status definition [KARTA005]",
        "child component 'x' has owner ref to non-existing component 'ghost' [KARTA007]",
    ]


def test_json_file(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text(json.dumps(base()))
    rc, out, _ = invoke("validate", str(p))
    assert rc == 0 and out.startswith("OK: t ")


def test_cli_runner_direct() -> None:
    result = CliRunner().invoke(cli, ["validate", str(DATA / "valid" / "lws.yaml")])
    assert result.exit_code == 0
    assert result.stdout.startswith("OK: leaderworkerset-x-k8s-io-leaderworkerset-v1 ")


def test_installed_wmap_subprocess(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "wmap"
    if not exe.exists():
        pytest.skip("wmap console script not installed")
    if not ENGINE:
        pytest.skip("jq engine workload_map.expr not available yet")
    ok = subprocess.run([str(exe), "validate", str(DATA / "valid")], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.count("OK: ") == 4
    assert "KARTA105" in ok.stderr  # the legacy ResourceInterface warning
    bad = subprocess.run(
        [str(exe), "validate", str(DATA / "invalid" / "broken.yaml")],
        capture_output=True,
        text=True,
        env={**os.environ, "WMAP_DEBUG": ""},
    )
    assert bad.returncode == 1 and bad.stdout.startswith("INVALID: broken\n")
    assert "Traceback" not in bad.stderr


def test_duplicate_keys_shown_as_warning_and_strict_error(tmp_path: Path) -> None:
    text = yaml.safe_dump(base(), sort_keys=False).replace(
        "        replicasPath: .spec.replicas\n", "        replicasPath: .a\n        replicasPath: .b\n"
    )
    p = write(tmp_path, "dup.yaml", text)
    rc, out, err = invoke("validate", "--validate=warn", str(p))
    assert rc == 0 and out.startswith("OK: t ")
    assert "warning: " in err and 'duplicate key "replicasPath" (the last value wins) [KARTA107]' in err
    rc, out, _ = invoke("validate", "--validate=warn", "--strict", str(p))
    assert rc == 1 and "[KARTA107]" in out
    rc, out, _ = invoke("validate", str(p))  # strict field validation, the default
    assert rc == 1 and "[KARTA107]" in out
