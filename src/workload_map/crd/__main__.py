"""``python -m workload_map.crd [--write]``: print (or rewrite) the generated CRD."""

from __future__ import annotations

import sys
from pathlib import Path

from workload_map.crd.generate import CRD_FILE, render_crd, write_crd

#: The kustomize base's copy, when running from a source checkout (src/workload_map/crd/...).
DEPLOY_COPY = CRD_FILE.parents[3] / "deploy" / "base" / "crd.yaml"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "--write" in args:
        targets: list[Path] = [CRD_FILE] + ([DEPLOY_COPY] if DEPLOY_COPY.is_file() else [])
        for target in targets:
            changed = write_crd(target)
            print(f"{target}: {'updated' if changed else 'unchanged'}")
        return 0
    sys.stdout.write(render_crd())
    return 0


if __name__ == "__main__":
    sys.exit(main())
