"""Kubernetes object vocabulary and ownership, without I/O (the API client is
:mod:`workload_map.cluster`): :mod:`.objects` reads objects, :mod:`.owners` walks owner
references. Shared by the resolver, the CLI, the server, the exporter and the operator."""
