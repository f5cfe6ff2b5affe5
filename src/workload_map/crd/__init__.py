"""The ``kartas.run.ai`` CRD, generated from the definition model (see :mod:`.generate`)."""

from workload_map.crd.generate import CRD_FILE, CRD_NAME, build_crd, render_crd, shipped_crd, shipped_crd_text

__all__ = ["CRD_FILE", "CRD_NAME", "build_crd", "render_crd", "shipped_crd", "shipped_crd_text"]
