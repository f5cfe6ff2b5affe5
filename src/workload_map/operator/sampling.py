"""The ``WithinLimits`` condition: a valid Karta is evaluated on a few live workloads of its kind.

Validation cannot see cost: a definition whose expression explodes only on real objects passes it
and would then stall every consumer (each evaluation is bounded by the engine, but a thousand of
them are not). The operator therefore resolves up to :data:`SAMPLE_SIZE` live objects of the Karta's
kind and reports on the Karta's status whether they stayed within the expression limits; a
definition that keeps exceeding them is quarantined here as in the exporter and the server
(:class:`~workload_map.quarantine.Quarantine`) and sampled again after the quarantine period.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from workload_map.cluster.client import KubeClient, api_path
from workload_map.errors import DefinitionQuarantinedError, ForbiddenError, NotFoundError, WorkloadMapError
from workload_map.operator import texts
from workload_map.quarantine import Quarantine, exceeded_limits

__all__ = ["SAMPLE_SIZE", "Sample", "Sampler"]

#: Live objects resolved per sampling.
SAMPLE_SIZE = 5
#: A sample's result is reused this long for the same Karta generation.
SAMPLE_TTL = 60.0


@dataclass(frozen=True)
class Sample:
    """``ok``: True (within limits), False (exceeded or quarantined), None (could not sample)."""

    ok: bool | None
    reason: str
    message: str


class Sampler:
    """Samples Kartas' kinds; results cached per (uid, generation) for :data:`SAMPLE_TTL` seconds."""

    def __init__(
        self,
        client: KubeClient,
        resource: Callable[[str, str, str], tuple[str, bool] | None],
        *,
        quarantine: Quarantine | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self._resource = resource
        self.quarantine = quarantine or Quarantine()
        self._clock = clock
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, int], tuple[float, Sample]] = {}

    def sample(self, obj: Mapping[str, Any], gvk: tuple[str, str, str]) -> Sample:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or "")
        key = (str(meta.get("uid") or name), int(meta.get("generation") or 0))
        now = self._clock()
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and now - hit[0] < SAMPLE_TTL:
                return hit[1]
        result = self._sample(name, obj, gvk)
        if result.ok is None:
            return result  # not sampled (kind not served yet, forbidden...): try again next time
        with self._lock:
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[key] = (now, result)
        return result

    def _sample(self, name: str, obj: Mapping[str, Any], gvk: tuple[str, str, str]) -> Sample:
        from workload_map.model.loader import load_definitions_text
        from workload_map.resolve import compile_definition, resolve

        group, version, kind = gvk
        found = self._resource(group, version, kind)
        if found is None:
            return Sample(None, texts.REASON_NOT_SAMPLED, texts.not_sampled(f"{kind} is not served"))
        plural, _namespaced = found
        api_version = f"{group}/{version}" if group else version
        try:
            page = self.client.get(api_path(api_version, plural), {"limit": SAMPLE_SIZE})
        except ForbiddenError:
            return Sample(None, texts.REASON_NOT_SAMPLED, texts.sample_forbidden(plural, group))
        except (NotFoundError, WorkloadMapError) as exc:
            return Sample(None, texts.REASON_NOT_SAMPLED, texts.not_sampled(str(exc)))
        items = [i for i in page.get("items") or [] if isinstance(i, dict)][:SAMPLE_SIZE]
        loaded = load_definitions_text(orjson.dumps(dict(obj)).decode(), name=name).definitions
        if len(loaded) != 1:
            return Sample(None, texts.REASON_NOT_SAMPLED, texts.not_sampled("the definition does not load"))
        try:
            compiled = compile_definition(loaded[0].karta)
        except WorkloadMapError as exc:
            return Sample(False, texts.REASON_EXCEEDS_LIMITS, texts.not_sampled(str(exc)))
        quarantine_key = f"{name}@{(obj.get('metadata') or {}).get('generation') or 0}"
        for item in items:
            item.setdefault("apiVersion", api_version)
            item.setdefault("kind", kind)
            try:
                self.quarantine.run(quarantine_key, functools.partial(resolve, compiled, item))
            except DefinitionQuarantinedError as exc:
                return Sample(False, texts.REASON_QUARANTINED, str(exc))
            except WorkloadMapError as exc:
                if exceeded_limits(exc):
                    return Sample(False, texts.REASON_EXCEEDS_LIMITS, texts.exceeds_limits(str(exc)))
                # A workload that does not fit its definition is its own problem, not a cost one.
        return Sample(True, texts.REASON_WITHIN_LIMITS, texts.within_limits(len(items), kind))
