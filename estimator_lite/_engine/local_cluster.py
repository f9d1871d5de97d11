"""Local clusters on 127.0.0.1: free ports, cluster specs and TF_CONFIG per role."""

import json
import socket

from estimator_lite._engine import roles

__all__ = ["pick_free_ports", "local_cluster_spec", "tf_config"]


def pick_free_ports(count):
    """Returns `count` distinct TCP ports that are free on 127.0.0.1 right now.

    All sockets stay open until every port is chosen, so the ports are distinct;
    another process may still take one before it is used (tests retry on that).
    """
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def local_cluster_spec(num_ps=1, num_workers=1, chief=True, evaluator=False):
    """Builds a cluster dict {job: ['127.0.0.1:port', ...]} on free ports.

    Args:
      num_ps: number of ps tasks.
      num_workers: number of worker tasks besides the chief.
      chief: whether the cluster has a chief task.
      evaluator: whether the cluster lists an evaluator task (as
        MultiWorkerMirroredStrategy's constructor needs in an evaluator).

    Returns:
      The cluster dict, as it goes into TF_CONFIG's 'cluster'.

    Raises:
      ValueError: a count is negative.
    """
    if num_ps < 0 or num_workers < 0:
        raise ValueError(f"num_ps and num_workers must be >= 0, got num_ps={num_ps}, "
                         f"num_workers={num_workers}")
    sizes = {roles.CHIEF: int(bool(chief)), roles.WORKER: num_workers, roles.PS: num_ps,
             roles.EVALUATOR: int(bool(evaluator))}
    ports = iter(pick_free_ports(sum(sizes.values())))
    return {job: [f"127.0.0.1:{next(ports)}" for _ in range(n)]
            for job, n in sizes.items() if n}


def tf_config(cluster, task_type, task_index, **extra):
    """Returns the TF_CONFIG JSON string for one task of `cluster`."""
    config = {"cluster": cluster, "task": {"type": task_type, "index": task_index}}
    config.update(extra)
    return json.dumps(config)
