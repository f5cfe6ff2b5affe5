"""``wmap test DEFINITION CASE...``: the catalog's own lifecycle fixtures and upstream's
recordings of real operators pass through it with the bundled definitions; a definition that
gets a case wrong fails with a readable difference; bad input gets its own exit code."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from tests.cli.helpers import wmap
from tests.support.apiserver_binary import shared_dir
from workload_map.catalog.registry import DATA_DIR
from workload_map.cli import exit_codes

LIFECYCLES = Path(__file__).resolve().parents[1] / "catalog" / "lifecycles"
SLUGS = sorted(p.name for p in LIFECYCLES.iterdir() if p.is_dir())
RECORDINGS = shared_dir() / "upstream-recordings"

pytestmark = pytest.mark.usefixtures("bundled_catalog")


@pytest.mark.parametrize("slug", SLUGS)
def test_every_lifecycle_fixture_passes(slug: str) -> None:
    rc, out, err = wmap("test", slug, str(LIFECYCLES / slug))
    assert rc == 0, out + err
    cases = len(list((LIFECYCLES / slug).glob("*.yaml")))
    assert out.splitlines()[-1].startswith(f"{slug}: {cases} cases, 0 failed")


def _recording_dirs() -> list[Path]:
    return sorted({p.parent for p in RECORDINGS.glob("*/*/*/*.yaml")}) if RECORDINGS.is_dir() else []


@pytest.mark.corpus
@pytest.mark.parametrize("folder", _recording_dirs(), ids=lambda p: "/".join(p.parts[-3:]))
def test_every_upstream_recording_replays(folder: Path) -> None:
    """The catalog's rule (the default): the phases are the recorded state or an accepted
    stand-in; upstream's looser rule passes too; ``exact`` fails exactly on the deviations
    docs/catalog.md lists (tests/catalog/test_recordings.py counts them)."""
    from workload_map.cases import deviation

    rc, out, err = wmap("test", folder.name, str(folder), "-o", "json")
    assert rc == 0, out + err
    doc = json.loads(out)
    assert doc["failed"] == 0 and doc["passed"] == len(doc["results"]) > 0
    rc, out, err = wmap("test", folder.name, str(folder), "--match", "contains")
    assert rc == 0 or "Undefined" in out, out + err  # upstream's rule has no stand-ins
    rc, out, _ = wmap("test", folder.name, str(folder), "--match", "exact", "-o", "json")
    exact = json.loads(out)
    deviations = 0
    for path in sorted(folder.glob("*.yaml")):
        for event in yaml.safe_load(path.read_text())["events"]:
            if event["kind"] == "STATE":
                from workload_map import resolve
                from workload_map.catalog import get_definition

                obj = event["object"]
                phases = {
                    p.value
                    for p in resolve(get_definition(obj["apiVersion"], obj["kind"]), obj).status.phases
                }
                deviations += deviation(event["state"], phases) is not None
    assert exact["failed"] == deviations and (rc == 0) == (deviations == 0)


def test_a_wrong_definition_fails_with_the_difference(tmp_path: Path) -> None:
    karta = yaml.safe_load((DATA_DIR / "jobset-x-k8s-io-jobset-v1alpha2.yaml").read_text())
    broken = copy.deepcopy(karta)
    broken["metadata"]["name"] = "jobset-broken"
    rjob = next(
        c for c in broken["spec"]["structureDefinition"]["childComponents"] if c["name"] == "replicatedjob"
    )
    rjob["scaleDefinition"]["replicasPath"] = f"({rjob['scaleDefinition']['replicasPath']}) * 2"
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(broken))
    case = LIFECYCLES / "jobset-x-k8s-io-jobset-v1alpha2" / "running.yaml"
    rc, out, err = wmap("test", str(path), str(case))
    assert rc == exit_codes.ERROR, out + err
    lines = out.splitlines()
    assert lines[0] == f"FAIL  {case}"
    assert "      components.replicatedjob.workers: expected 4, got 8" in lines, out
    assert lines[-1].startswith("jobset-broken (") and "1 cases, 1 failed" in lines[-1]
    rc, out, _ = wmap("test", str(path), str(case), "-o", "json")
    doc = json.loads(out)
    assert doc["failed"] == 1 and {d["got"] for d in doc["results"][0]["differences"]} >= {8}


def test_pods_claimed_per_component(tmp_path: Path) -> None:
    case = yaml.safe_load((LIFECYCLES / "jobset-x-k8s-io-jobset-v1alpha2" / "running.yaml").read_text())
    pod = case["expect"]["gangs"][0]["pod"]
    leader = copy.deepcopy(pod)
    leader["metadata"]["name"] = "train-llama-leader-0-0-abcde"
    leader["metadata"]["labels"]["jobset.sigs.k8s.io/replicatedjob-name"] = "leader"
    case["pods"] = [pod, leader]
    case["expect"] = {"pods": {"replicatedjob": 2}}
    path = tmp_path / "pods.yaml"
    path.write_text(yaml.safe_dump(case))
    rc, out, err = wmap("test", "jobset", str(path))
    assert rc == 0, out + err
    case["expect"] = {"pods": {"replicatedjob": 3}}
    path.write_text(yaml.safe_dump(case))
    rc, out, _ = wmap("test", "jobset", str(path))
    assert rc == 1 and "pods.replicatedjob: expected 3, got 2" in out


def test_bad_input_exit_codes(tmp_path: Path) -> None:
    neither = tmp_path / "neither.yaml"
    neither.write_text("just: a mapping\n")
    rc, _, err = wmap("test", "jobset", str(neither))
    assert rc == exit_codes.USAGE and "neither a case" in err and str(neither) in err
    broken = tmp_path / "broken.yaml"
    broken.write_text("object: [unclosed\n")
    rc, _, err = wmap("test", "jobset", str(broken))
    assert rc == exit_codes.USAGE and str(broken) in err
    rc, _, err = wmap("test", "jobset", str(tmp_path / "missing.yaml"))
    assert rc == exit_codes.USAGE and "no such file" in err
    rc, _, err = wmap("test", "no-such-type", str(neither))
    assert rc == exit_codes.NO_DEFINITION
    pods_without_list = tmp_path / "pods.yaml"
    pods_without_list.write_text(
        yaml.safe_dump({"object": {"apiVersion": "v1", "kind": "Pod"}, "expect": {"pods": {"pod": 1}}})
    )
    rc, _, err = wmap("test", "pod", str(pods_without_list))
    assert rc == exit_codes.USAGE and "expect.pods needs" in err


def test_endless_input_files_end_in_a_message() -> None:
    """A path that never ends (/dev/zero) is refused by its type before it is opened."""
    device = "cannot read {}: it is a character device, not a regular file"
    rc, _, err = wmap("describe", "-f", "/dev/zero")
    assert rc == exit_codes.USAGE and device.format("/dev/zero") in err
    rc, _, err = wmap("get", "jobsets", "-o", "custom-columns-file=/dev/zero")
    assert rc == exit_codes.USAGE and device.format("/dev/zero") in err
    rc, _, err = wmap("generate", "--crd", "/dev/zero")
    assert rc == exit_codes.USAGE and device.format("CRD file /dev/zero") in err
