"""``python -m workload_map.crd [--write]``: print (or rewrite) the generated CRD."""

from __future__ import annotations

import sys

from workload_map.crd.generate import CRD_FILE, render_crd, write_crd


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "--write" in args:
        changed = write_crd()
        print(f"{CRD_FILE}: {'updated' if changed else 'unchanged'}")
        return 0
    sys.stdout.write(render_crd())
    return 0


if __name__ == "__main__":
    sys.exit(main())
