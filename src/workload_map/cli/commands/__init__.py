"""One module per subcommand, each exposing ``command`` (a click command). Register new ones in
``workload_map.cli.main.COMMANDS``."""
