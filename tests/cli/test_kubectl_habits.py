"""kubectl habits of ``wmap get``, compared with the real kubectl on the test API server:
``-o name`` prints what ``kubectl get -o name`` prints for the same objects (``kind.group/name``,
``kind/name`` for the core group), ``--no-headers`` drops the header row as kubectl does."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli.helpers import kubectl_out, wmap
from tests.support.kube import KubeTestClient
from tests.support.seed import create_deployment_tree, create_jobset_tree, create_statefulset_tree

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed"),
]


@pytest.fixture
def seeded(kube: KubeTestClient, namespace: str) -> str:
    for name in ("alpha", "beta"):
        create_jobset_tree(kube, name, namespace, (("leader", 1),))
    create_deployment_tree(kube, "web", namespace, replicas=1)
    create_statefulset_tree(kube, "db", namespace, replicas=1)
    return namespace


@pytest.mark.usefixtures("bundled_catalog")
@pytest.mark.parametrize("word", ["jobsets", "deploy", "sts"])
def test_output_name_askubectl_out(word: str, seeded: str, kc: str) -> None:
    expected = kubectl_out(kc, "get", word, "-n", seeded, "-o", "name").split()
    rc, out, err = wmap("get", word, "-n", seeded, "-o", "name", "--kubeconfig", kc)
    assert rc == 0, err
    assert sorted(out.split()) == sorted(expected) and expected  # ours is newest first, kubectl by name
    one = expected[0].split("/", 1)[1]
    rc, out, _ = wmap("get", word, one, "-n", seeded, "-o", "name", "--kubeconfig", kc)
    assert out.split() == kubectl_out(kc, "get", word, one, "-n", seeded, "-o", "name").split()


@pytest.mark.usefixtures("bundled_catalog")
def test_no_headers(seeded: str, kc: str) -> None:
    rc, out, err = wmap("get", "jobsets", "-n", seeded, "--kubeconfig", kc)
    assert rc == 0, err
    with_header = out.splitlines()
    rc, out, err = wmap("get", "jobsets", "-n", seeded, "--no-headers", "--kubeconfig", kc)
    assert rc == 0, err
    rows = out.splitlines()
    assert with_header[0].startswith("NAME") and not rows[0].startswith("NAME")
    assert [r.split()[0] for r in rows] == [r.split()[0] for r in with_header[1:]]
    kubectl_rows = kubectl_out(kc, "get", "jobsets", "-n", seeded, "--no-headers").splitlines()
    assert len(rows) == len(kubectl_rows) == 2


LIFECYCLES = Path(__file__).resolve().parents[1] / "catalog" / "lifecycles"


@pytest.mark.usefixtures("bundled_catalog")
@pytest.mark.parametrize(
    "slug", sorted(p.name for p in LIFECYCLES.iterdir() if (p / "running.yaml").exists())
)
def test_describe_file_shows_the_manifests_phase(slug: str, tmp_path: Path) -> None:
    """``describe -f`` says the phase the library resolves for the same manifest (its own status),
    for every catalog type's running fixture."""
    import yaml

    from workload_map import resolve
    from workload_map.catalog import get_by_name

    obj = yaml.safe_load((LIFECYCLES / slug / "running.yaml").read_text())["object"]
    path = tmp_path / "obj.yaml"
    path.write_text(yaml.safe_dump(obj))
    definition = get_by_name(slug)
    assert definition is not None
    phases = ",".join(p.value for p in resolve(definition, obj).status.phases)
    rc, out, err = wmap("describe", "-f", str(path))
    assert rc == 0, err
    assert out.splitlines()[1] == f"Phase: {phases} (from the manifest's status; file mode: no pods)"


@pytest.mark.usefixtures("bundled_catalog")
@pytest.mark.parametrize("word", ["jobsets", "deploy"])
def test_namespace_column_only_across_namespaces(word: str, seeded: str, kc: str) -> None:
    """kubectl prints NAMESPACE, as the first column, only with -A."""
    for extra in ([], ["-A"]):
        args = extra if extra else ["-n", seeded]
        theirs = kubectl_out(kc, "get", word, *args).splitlines()[0].split()
        rc, out, err = wmap("get", word, *args, "--kubeconfig", kc)
        assert rc == 0, err
        ours = out.splitlines()[0].split()
        assert (ours[0], "NAMESPACE" in ours) == (theirs[0], "NAMESPACE" in theirs), (extra, ours, theirs)


@pytest.mark.usefixtures("bundled_catalog")
def test_label_columns_and_show_labels_askubectl_out(kube: KubeTestClient, namespace: str, kc: str) -> None:
    """-L adds one column per key, named by the key's last segment in capitals, empty where the
    label is missing; --show-labels adds LABELS, sorted k=v or <none>: as kubectl prints them."""
    from tests.support.seed import deployment_chain

    deployment_chain(
        kube,
        "web",
        namespace,
        {"app": "web", "team.example.com/owner": "ml", "tier": "a"},
        replicas=1,
        gpus=0,
    )
    deployment_chain(kube, "db", namespace, {"app": "db"}, replicas=1, gpus=0)

    def table(out: str, keep: int) -> dict[str, list[str]]:
        """name -> the last ``keep`` cells, split on runs of 2+ spaces (empty cells kept)."""
        import re

        lines = out.splitlines()
        starts = [m.start() for m in re.finditer(r"(?:(?<=  )|^)\S", lines[0])]
        rows = {}
        for line in lines[1:]:
            cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]
            rows[cells[0]] = cells[-keep:]
        rows["HEADER"] = [lines[0][a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)][
            -keep:
        ]
        return rows

    for args, keep in (
        (["-L", "app,team.example.com/owner"], 2),
        (["-L", "app", "-L", "tier"], 2),
        (["--show-labels"], 1),
    ):
        theirs = table(kubectl_out(kc, "get", "deploy", "-n", namespace, *args), keep)
        rc, out, err = wmap("get", "deploy", "-n", namespace, *args, "--kubeconfig", kc)
        assert rc == 0, err
        assert table(out, keep) == theirs, args


@pytest.mark.usefixtures("bundled_catalog")
@pytest.mark.parametrize(
    "fields", ["metadata.name=alpha", "metadata.name!=alpha", "metadata.namespace!=default"]
)
def test_field_selector_selects_askubectl_out(fields: str, seeded: str, kc: str) -> None:
    theirs = kubectl_out(kc, "get", "jobsets", "-n", seeded, "--field-selector", fields, "-o", "name").split()
    rc, out, err = wmap(
        "get", "jobsets", "-n", seeded, "--field-selector", fields, "-o", "name", "--kubeconfig", kc
    )
    assert rc == 0, err
    assert sorted(out.split()) == sorted(theirs)


@pytest.mark.usefixtures("bundled_catalog")
def test_field_selector_the_server_refuses(seeded: str, kc: str) -> None:
    rc, out, err = wmap("get", "jobsets", "-n", seeded, "--field-selector", "spec.nope=1", "--kubeconfig", kc)
    assert rc == 1 and out == ""
    assert "error: field label not supported: spec.nope" in err.splitlines()


@pytest.mark.usefixtures("bundled_catalog")
def test_sort_by_orders_askubectl_out(kube: KubeTestClient, namespace: str, kc: str) -> None:
    """--sort-by takes a path into the view model; sorted by the same field, the order is
    kubectl's (names: .name here, .metadata.name there; numbers numerically)."""
    from tests.support.seed import deployment_chain

    for name, replicas in (("web", 3), ("api", 1), ("db", 2), ("cache", 10)):
        deployment_chain(kube, name, namespace, {"app": name}, replicas=replicas, gpus=0)
    for ours_path, theirs_path in (
        (".name", ".metadata.name"),
        ("{.components[0].desired}", ".spec.replicas"),
    ):
        theirs = kubectl_out(
            kc, "get", "deploy", "-n", namespace, "--sort-by", theirs_path, "-o", "name"
        ).split()
        rc, out, err = wmap(
            "get", "deploy", "-n", namespace, "--sort-by", ours_path, "-o", "name", "--kubeconfig", kc
        )
        assert rc == 0, err
        assert out.split() == theirs, ours_path
    rc, _, err = wmap("get", "deploy", "-n", namespace, "--sort-by", "metadata.name", "--kubeconfig", kc)
    assert rc == 2 and 'must start with "."' in err


@pytest.mark.usefixtures("bundled_catalog")
def test_custom_columns_askubectl_out(kube: KubeTestClient, namespace: str, kc: str, tmp_path: Path) -> None:
    """-o custom-columns over the view model: the same cells as kubectl's custom columns over the
    same fields (name, replicas, a label, a missing field as <none>), inline and from a file."""
    from tests.support.seed import deployment_chain

    for name, replicas in (("web", 3), ("api", 1)):
        deployment_chain(kube, name, namespace, {"app": name}, replicas=replicas, gpus=0)
    theirs = kubectl_out(
        kc, "get", "deploy", "-n", namespace, "--sort-by", ".metadata.name",
        "-o", "custom-columns=N:.metadata.name,R:.spec.replicas,A:.metadata.labels.app,X:.spec.nope",
    )  # fmt: skip
    spec = "custom-columns=N:.name,R:.components[0].desired,A:.labels.app,X:.nope"
    rc, out, err = wmap(
        "get", "deploy", "-n", namespace, "--sort-by", ".name", "-o", spec, "--kubeconfig", kc
    )
    assert rc == 0, err
    assert [ln.split() for ln in out.splitlines()] == [ln.split() for ln in theirs.splitlines()]
    assert out.splitlines()[1].split()[-1] == "<none>"
    columns_file = tmp_path / "cols.txt"
    columns_file.write_text("N R\n.name .components[0].desired\n")
    rc, out, err = wmap(
        "get", "deploy", "-n", namespace, "--sort-by", ".name", "-o", f"custom-columns-file={columns_file}",
        "--no-headers", "--kubeconfig", kc,
    )  # fmt: skip
    assert rc == 0, err
    assert [ln.split() for ln in out.splitlines()] == [["api", "1"], ["web", "3"]]
    for bad, message in (
        ("custom-columns=N", "unexpected custom-columns spec: N, expected <header>:<json-path-expr>"),
        ("custom-columns=N:name", 'must start with "."'),
        (f"custom-columns-file={tmp_path / 'missing'}", "missing"),
    ):
        rc, _, err = wmap("get", "deploy", "-n", namespace, "-o", bad, "--kubeconfig", kc)
        assert rc == 2 and message in err, (bad, err)
