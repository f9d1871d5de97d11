"""A fault cluster whose roles reach each other only through the fault proxy.

`ProxiedCluster` is `cluster.Cluster` (same roles, logs, model_dir readers)
with one `proxy.Link` per ordered pair of cluster tasks: role A's ``TF_CONFIG``
names, for every other task B, the port of link ``A->B`` (which forwards to B's
real port), and its own real address (where its server listens). So every
connection A opens to B crosses ``A->B``, and a test can slow, reset or
black-hole exactly the links it means: `links_of` a role (both directions),
or the links between two roles. No root needed: everything is on 127.0.0.1.
"""

import copy

from tests.faults.cluster import Cluster
from tests.faults.proxy import FaultProxy

__all__ = ["ProxiedCluster"]


def _label(task_type, index):
    return f"{task_type}{index}"


class ProxiedCluster(Cluster):
    """Cluster + a FaultProxy; `close` stops both."""

    def __init__(self, work_dir, job_args=(), **kwargs):
        """As `Cluster`; also starts the proxy and one link per ordered pair."""
        super().__init__(work_dir, job_args, **kwargs)
        self.proxy = FaultProxy()
        self.links = {}  # (source label, target label) -> Link
        tasks = {_label(task_type, i): address
                 for task_type, addresses in self.spec.items()
                 for i, address in enumerate(addresses)}
        try:
            for source in tasks:
                for target, address in tasks.items():
                    if target != source:
                        port = int(address.rsplit(":", 1)[1])
                        self.links[source, target] = self.proxy.add_link(
                            f"{source}->{target}", port)
        except BaseException:
            self.proxy.close()
            raise

    def spec_for(self, label):
        """Role `label`'s cluster spec: its own real address, the links' ports for
        every peer (a role outside the cluster, the evaluator, gets the real one)."""
        spec = copy.deepcopy(self.spec)
        for task_type, addresses in spec.items():
            for i in range(len(addresses)):
                link = self.links.get((label, _label(task_type, i)))
                if link is not None:
                    addresses[i] = f"127.0.0.1:{link.port}"
        return spec

    def links_of(self, *labels):
        """Every link to or from any of `labels`."""
        return [link for (source, target), link in self.links.items()
                if source in labels or target in labels]

    def links_between(self, first, second):
        """The two links between two roles."""
        return [self.links[first, second], self.links[second, first]]

    def close(self):
        """SIGKILLs every process still running, then closes the proxy."""
        try:
            self.stop_all()
        finally:
            self.proxy.close()
