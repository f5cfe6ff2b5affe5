"""Shared pytest setup. Cluster fixtures (`cluster`, `kube`, `namespace`, `extra_crd_docs`,
`karta_crd`, `no_karta_crd`) live in tests/support/fixtures.py; the separate Karta cluster of the
operator, CRD and deploy tests (`kcluster`, `kkube`) in tests/operator/karta_cluster.py."""

pytest_plugins = ("tests.support.fixtures", "tests.operator.karta_cluster")
