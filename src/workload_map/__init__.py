"""Workload Map: one declarative Karta definition answers, for any Kubernetes workload type,
what its structure is, what phase it is in, and how its pod specs can be changed safely."""

__version__ = "0.1.0"
