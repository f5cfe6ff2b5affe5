"""workload_map.interpret: Karmada's resource interpreter answered from Karta definitions.

Every answer is computed once, in Python, from the resolver (:mod:`workload_map.resolve`), and
served two ways: the webhook (``ResourceInterpreterContext``, :func:`review`) and ``wmap interpret``
offline (:func:`interpret`). The operations and their rules:

* ``InterpretReplica`` / ``InterpretComponent``: :mod:`.requirements` (component requirements from
  :func:`workload_map.resolve.placement.instance_needs`, shared with ``requirements --fit``);
* ``ReviseReplica``: :mod:`.revise` (through :func:`workload_map.resolve.writeback.set_replica_fields`);
* ``Retain``: :mod:`.retain`;
* ``InterpretStatus``, ``AggregateStatus``, ``InterpretHealth``: :mod:`.status`;
* ``InterpretDependency``: :mod:`.dependencies`.

:mod:`.config` renders the ``ResourceInterpreterWebhookConfiguration``.

:mod:`.argocd` compiles the same status rules into Argo CD health checks (``wmap export argocd``).
"""

from __future__ import annotations

from .config import (
    CONFIGURATION_NAME,
    INTERPRET_PATH,
    KARMADA_NATIVE,
    WEBHOOK_NAME,
    Covered,
    DefinitionIndex,
    select,
    webhook_configuration,
)
from .context import API_VERSION, KIND, Lookup, parse_request, refuse, review
from .operations import OPERATIONS, Answer, Request, interpret
from .status import HEALTHY_PHASES

__all__ = [
    "API_VERSION",
    "CONFIGURATION_NAME",
    "HEALTHY_PHASES",
    "INTERPRET_PATH",
    "KARMADA_NATIVE",
    "KIND",
    "OPERATIONS",
    "WEBHOOK_NAME",
    "Answer",
    "Covered",
    "DefinitionIndex",
    "Lookup",
    "Request",
    "interpret",
    "parse_request",
    "refuse",
    "review",
    "select",
    "webhook_configuration",
]
