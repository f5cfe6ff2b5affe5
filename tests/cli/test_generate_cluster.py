"""``wmap generate TYPE`` reads the served CRD from the test API server: the draft has the same
components, paths and status rules as the one drafted from the corpus file."""

from __future__ import annotations

import pytest
import yaml

from tests.cli.helpers import wmap
from tests.support.apiserver_binary import shared_dir

pytestmark = [pytest.mark.cluster, pytest.mark.corpus]


def test_generate_from_the_cluster_equals_the_file(kc: str) -> None:
    crd = shared_dir() / "crds" / "jobset" / "jobset.x-k8s.io_jobsets.yaml"
    rc, from_file, err = wmap("generate", "--crd", str(crd))
    assert rc == 0, err
    rc, from_cluster, err = wmap("generate", "jobsets", "--kubeconfig", kc)
    assert rc == 0, err
    assert yaml.safe_load(from_cluster) == yaml.safe_load(from_file)
    assert "the cluster's CRD jobsets.jobset.x-k8s.io" in from_cluster.splitlines()[0]
    rc, _, err = wmap("generate", "deployments", "--kubeconfig", kc)
    assert rc == 2 and "built-in kind" in err
    rc, _, err = wmap("generate", "nosuchthings", "--kubeconfig", kc)
    assert rc != 0 and "nosuchthings" in err
