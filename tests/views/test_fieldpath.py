"""Field paths of --sort-by (views/fieldpath.py)."""

from __future__ import annotations

import pytest

from workload_map.views.fieldpath import FieldPathError, lookup, parse, sort_key

DATA = {
    "name": "a",
    "resources": {"gpus": 4},
    "components": [{"desired": 2}],
    "labels": {"app.kubernetes.io/name": "x"},
}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (".name", "a"),
        ("{.resources.gpus}", 4),
        (".components[0].desired", 2),
        (".labels['app.kubernetes.io/name']", "x"),
        (".components[3].desired", None),
        (".missing.deeper", None),
    ],
)
def test_lookup(path: str, value: object) -> None:
    assert lookup(DATA, parse(path)) == value


@pytest.mark.parametrize("bad", ["name", ".a[*]", ".a[?(@.x)]", "{.a}{.b}", "." + "a" * 300])
def test_refused(bad: str) -> None:
    with pytest.raises(FieldPathError):
        parse(bad)


def test_sort_key_orders_like_kubectl() -> None:
    values = ["b", 10, None, 2, "a", 2.5]
    assert sorted(values, key=sort_key) == [None, 2, 2.5, 10, "a", "b"]
