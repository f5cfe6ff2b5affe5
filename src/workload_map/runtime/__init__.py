"""The shared runtime of the long-running processes (operator, exporter, ``wmap serve``):
:class:`Informer` (list + watch into an in-memory store) and :class:`WorkQueue` (de-duplicating,
rate-limited work queue with worker threads), in the spirit of client-go's, on
:class:`workload_map.cluster.KubeClient`; :mod:`.leader` (Lease leader election) and :mod:`.http`
(the bounded HTTP server of the exporter and the webhooks). It never imports the processes.

Typical use::

    informer = Informer(client, "/apis/jobset.x-k8s.io/v1alpha2/jobsets", resource="jobsets")
    queue: WorkQueue[ObjectKey] = WorkQueue()
    informer.add_handler(EventHandler(
        on_add=lambda o: queue.add(object_key(o)),
        on_update=lambda old, new: queue.add(object_key(new)),
        on_delete=lambda o: queue.add(object_key(o)),
    ))
    informer.start()
    workers = run_workers(queue, reconcile, count=2)
    informer.wait_for_sync(30)
"""

from workload_map.runtime.informer import (
    EventHandler,
    Informer,
    InformerStats,
    ObjectKey,
    Store,
    object_key,
    strip_managed_fields,
)
from workload_map.runtime.workqueue import RateLimiter, WorkerPool, WorkQueue, run_workers

__all__ = [
    "EventHandler",
    "Informer",
    "InformerStats",
    "ObjectKey",
    "RateLimiter",
    "Store",
    "WorkQueue",
    "WorkerPool",
    "object_key",
    "run_workers",
    "strip_managed_fields",
]
