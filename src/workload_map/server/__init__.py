"""``wmap serve``: the Workload Map REST API (Starlette + uvicorn; installed with the ``server`` extra).

Import :func:`workload_map.server.app.create_app` to build the ASGI app; this package's
``__init__`` imports nothing heavy so ``wmap --help`` stays light.
"""
