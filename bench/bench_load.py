"""Load + validate timings for definition directories, and the YAML strategy behind the loader.

Run: ``.venv/bin/python bench/bench_load.py [DIR]`` (default: the catalog if it has files, else
the test definitions replicated to 35 files). Prints the best of 15 runs in milliseconds
(other jobs share the machine).

Strategies compared for the parse step (same text):

* ``safe_load_all``: CSafeLoader data only (no locations): the floor.
* ``compose+construct``: libyaml composes each document, PyYAML's constructor builds the data
  from that node tree, and the tree is kept for lazy ``SourceMap`` lookups.
* ``load+compose``: two passes (data, then nodes) for comparison.
* ``compose+own builder``: what the loader does: nodes composed once, data built by a small
  Python walk instead of PyYAML's constructor (the fastest; the nodes are kept for locations).
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from workload_map.expr import compile_expression
from workload_map.model.loader import load_definitions
from workload_map.model.validator import expression_fields, validate_definition

ROOT = Path(__file__).resolve().parents[1]
Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def best_ms(fn: Callable[[], object], repeat: int = 15) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return min(times)  # the least disturbed run: other jobs share this machine


def compose_construct(text: str) -> list[Any]:
    loader = Loader(text)
    out = []
    try:
        while loader.check_node():
            node = loader.get_node()
            out.append((node, loader.construct_document(node)))
    finally:
        loader.dispose()
    return out


def build(node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return {build(k): build(v) for k, v in node.value}
    if isinstance(node, yaml.SequenceNode):
        return [build(v) for v in node.value]
    return _scalar(node)


_resolver = yaml.resolver.Resolver()
_constructor = yaml.constructor.SafeConstructor()


def _scalar(node: yaml.Node) -> Any:
    if node.tag == "tag:yaml.org,2002:str":
        return node.value
    return _constructor.construct_object(node, deep=True)


def compose_own(text: str) -> list[Any]:
    return [(n, build(n)) for n in yaml.compose_all(text, Loader=Loader)]


def load_then_compose(text: str) -> list[Any]:
    data = list(yaml.load_all(text, Loader=Loader))
    nodes = list(yaml.compose_all(text, Loader=Loader))
    return list(zip(nodes, data, strict=True))


def sample_dir() -> tuple[Path, bool]:
    catalog = ROOT / "src/workload_map/catalog/data"
    if catalog.is_dir() and any(catalog.glob("*.yaml")):
        return catalog, False
    src = sorted((ROOT / "tests/model/data/valid").iterdir())
    tmp = Path(tempfile.mkdtemp(prefix="wmap-bench-"))
    for i in range(35):
        f = src[i % len(src)]
        shutil.copy(f, tmp / f"{i:02d}-{f.name}")
    return tmp, True


def main() -> None:
    directory, temporary = (Path(sys.argv[1]), False) if len(sys.argv) > 1 else sample_dir()
    files = sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml"))
    text = "\n---\n".join(p.read_text() for p in files)
    print(f"{directory}: {len(files)} YAML files, {len(text) / 1024:.0f} KiB")
    print(f"  parse safe_load_all        {best_ms(lambda: list(yaml.load_all(text, Loader=Loader))):7.2f} ms")
    print(f"  parse compose+construct    {best_ms(lambda: compose_construct(text)):7.2f} ms")
    print(f"  parse load+compose         {best_ms(lambda: load_then_compose(text)):7.2f} ms")
    print(f"  parse compose+own builder  {best_ms(lambda: compose_own(text)):7.2f} ms  (loader)")

    result = load_definitions(directory)
    print(
        f"  load_definitions           {best_ms(lambda: load_definitions(directory)):7.2f} ms"
        f"  ({len(result.definitions)} definitions)"
    )
    kartas = [d.karta for d in result.definitions]
    exprs = {e for k in kartas for _, e in expression_fields(k)}
    start = time.perf_counter()
    for e in exprs:
        with contextlib.suppress(Exception):  # invalid ones are the validator's business
            compile_expression(e)
    print(
        f"  compile {len(exprs)} distinct expressions (cold) {(time.perf_counter() - start) * 1000:7.2f} ms"
    )
    print(f"  validate all (warm)        {best_ms(lambda: [validate_definition(k) for k in kartas]):7.2f} ms")
    print(
        f"  load + validate (warm)     "
        f"{best_ms(lambda: [d.validate() for d in load_definitions(directory).definitions]):7.2f} ms"
    )
    if temporary:
        shutil.rmtree(directory)


if __name__ == "__main__":
    main()
