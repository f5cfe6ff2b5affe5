"""One view model of a resolved workload (:mod:`.model`) and its renderers: ``get`` tables
(:mod:`.table`), the ``describe`` tree (:mod:`.tree`) and JSON/YAML (:mod:`.machine`). Every
output is a projection of the same view objects."""
