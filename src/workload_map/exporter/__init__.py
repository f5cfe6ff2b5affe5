"""The Prometheus metrics exporter: workloads' phases, pods and requests, and pod-to-workload
attribution, fed by informers (see docs/metrics.md)."""

from workload_map.exporter.collector import Exporter, WatchedKind
from workload_map.exporter.server import MetricsServer

__all__ = ["Exporter", "MetricsServer", "WatchedKind"]
