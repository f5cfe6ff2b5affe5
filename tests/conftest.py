"""Shared pytest setup. Cluster fixtures (`cluster`, `kube`, `namespace`, `extra_crd_docs`) live in
tests/support/fixtures.py."""

pytest_plugins = ("tests.support.fixtures",)
