"""The ``wmap`` command line (also installed as ``kubectl-wmap``).

Subcommands live in ``workload_map.cli.commands.<name>`` and are imported only when they run, so
``wmap --help`` and ``wmap --version`` stay fast (no pydantic, yaml, httpx or jq engine).
"""
