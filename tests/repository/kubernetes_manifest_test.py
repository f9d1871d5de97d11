"""examples/kubernetes/tfjob.yaml starts the roles estimator_lite.launch would start.

The manifest is parsed with PyYAML (a Kubernetes manifest is YAML; the stdlib has no
YAML parser). The TF_CONFIG each pod gets is rebuilt the way the Kubeflow Training
Operator builds it (replica type lower-cased as the task type; every replica type
except Evaluator in the cluster; hosts ``<job>-<type>-<index>.<namespace>.svc:<port>``)
and given to `el.RunConfig`, which must see the same roles.
"""

import collections
import json
import os
import shlex

import pytest
import yaml

import estimator_lite as el
from estimator_lite import launch
from estimator_lite._engine import cluster_info
from estimator_lite._engine import local_cluster as cluster_lib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MANIFEST = os.path.join(ROOT, "examples", "kubernetes", "tfjob.yaml")
README = os.path.join(ROOT, "examples", "kubernetes", "README.md")
REPLICA_TYPES = {"Chief", "Worker", "PS", "Evaluator"}
DEFAULT_NAMESPACE = "default"
TF_PORT = 2222


def _documents():
    with open(MANIFEST) as f:
        return {doc["kind"]: doc for doc in yaml.safe_load_all(f)}


def _tfjob():
    return _documents()["TFJob"]


def _replicas():
    return _tfjob()["spec"]["tfReplicaSpecs"]


def _container(spec):
    containers = spec["template"]["spec"]["containers"]
    # The operator adds TF_CONFIG to the container named `tensorflow` only.
    (container,) = [c for c in containers if c["name"] == "tensorflow"]
    return container


def _flag(command, name):
    return command[command.index(name) + 1]


def _operator_tf_config(job, replicas, replica_type, index):
    """TF_CONFIG as the Training Operator writes it for one pod."""
    namespace = job["metadata"].get("namespace", DEFAULT_NAMESPACE)
    cluster = {}
    for rtype, spec in replicas.items():
        if rtype == "Evaluator":  # not part of the training cluster
            continue
        task = rtype.lower()
        cluster[task] = [f"{job['metadata']['name']}-{task}-{i}.{namespace}.svc:{TF_PORT}"
                         for i in range(spec["replicas"])]
    return json.dumps({"cluster": cluster,
                       "task": {"type": replica_type.lower(), "index": index},
                       "environment": "cloud"})


def test_manifest_has_the_tfjob_and_a_read_write_many_claim():
    documents = _documents()
    assert set(documents) == {"TFJob", "PersistentVolumeClaim", "NetworkPolicy"}
    assert documents["TFJob"]["apiVersion"] == "kubeflow.org/v1"
    assert documents["PersistentVolumeClaim"]["spec"]["accessModes"] == ["ReadWriteMany"]
    assert set(_replicas()) == REPLICA_TYPES


def test_replicas_are_the_roles_the_launcher_starts():
    replicas = _replicas()
    num_ps, num_workers = replicas["PS"]["replicas"], replicas["Worker"]["replicas"]
    assert replicas["Chief"]["replicas"] == replicas["Evaluator"]["replicas"] == 1
    planned = collections.Counter((r.task_type, r.index)
                                  for r in launch.plan_roles(num_ps, num_workers, True))
    from_manifest = collections.Counter(
        (rtype.lower(), i) for rtype, spec in replicas.items()
        for i in range(spec["replicas"]))
    assert from_manifest == planned
    local = cluster_lib.local_cluster_spec(num_ps=num_ps, num_workers=num_workers)
    operator = json.loads(_operator_tf_config(_tfjob(), replicas, "Chief", 0))["cluster"]
    assert {k: len(v) for k, v in operator.items()} == {k: len(v)
                                                         for k, v in local.items()}


@pytest.mark.parametrize("replica_type", sorted(REPLICA_TYPES))
def test_run_config_reads_the_operators_tf_config(replica_type, monkeypatch):
    job, replicas = _tfjob(), _replicas()
    for index in range(replicas[replica_type]["replicas"]):
        monkeypatch.setenv("TF_CONFIG",
                           _operator_tf_config(job, replicas, replica_type, index))
        config = el.RunConfig(model_dir="/tmp/unused")
        assert config.task_type == replica_type.lower()
        assert config.task_id == index
        assert config.is_chief == (replica_type == "Chief")
        if replica_type == "Evaluator":
            assert config.cluster_spec is None or not config.cluster_spec.as_dict()
        else:
            assert config.num_ps_replicas == replicas["PS"]["replicas"]
            assert config.num_worker_replicas == 1 + replicas["Worker"]["replicas"]


def test_every_role_runs_the_example_on_the_shared_model_dir():
    replicas = _replicas()
    commands = {rtype: _container(spec)["command"] for rtype, spec in replicas.items()}
    command = commands["Chief"]
    assert all(c == command for c in commands.values()), commands
    assert command[:2] == ["python", "examples/distributed_digits.py"]
    workdir = _container(replicas["Chief"])["workingDir"]
    assert os.path.exists(os.path.join(ROOT, command[1]))  # the image holds the repo
    model_dir = _flag(command, "--model-dir")
    assert int(_flag(command, "--max-steps")) > 0  # lets the evaluator stop by itself
    claim = _documents()["PersistentVolumeClaim"]["metadata"]["name"]
    for rtype, spec in replicas.items():
        container = _container(spec)
        assert container["workingDir"] == workdir
        assert container["image"] == _container(replicas["Chief"])["image"]
        volumes = {v["name"]: v for v in spec["template"]["spec"]["volumes"]}
        mounts = [m for m in container["volumeMounts"]
                  if model_dir.startswith(m["mountPath"].rstrip("/") + "/")]
        assert len(mounts) == 1, rtype
        volume = volumes[mounts[0]["name"]]
        assert volume["persistentVolumeClaim"]["claimName"] == claim, rtype
        if rtype != "Evaluator":  # in the cluster: needs the port the operator names
            assert {"name": "tfjob-port", "containerPort": TF_PORT} in container["ports"]


def test_restart_and_run_policies_match_the_fault_behaviour():
    replicas = _replicas()
    policies = {rtype: spec["restartPolicy"] for rtype, spec in replicas.items()}
    # Chief/worker: restart on kills (preemption, OOM), not on a Python error.
    # ps/evaluator: restart on any failure; they exit 0 by themselves, so never Always.
    assert policies == {"Chief": "ExitCode", "Worker": "ExitCode", "PS": "OnFailure",
                        "Evaluator": "OnFailure"}
    run_policy = _tfjob()["spec"]["runPolicy"]
    assert run_policy["cleanPodPolicy"] == "None"  # let the evaluator finish
    assert run_policy["backoffLimit"] > 0


def test_readme_shows_how_to_run_it():
    with open(README) as f:
        text = f.read()
    assert "kubectl apply -f examples/kubernetes/tfjob.yaml" in text
    command = shlex.join(_container(_replicas()["Chief"])["command"])
    assert command in text


COLLECTIVE_MANIFEST = os.path.join(ROOT, "examples", "kubernetes", "tfjob-collective.yaml")


def _collective_documents():
    with open(COLLECTIVE_MANIFEST) as f:
        return {doc["kind"]: doc for doc in yaml.safe_load_all(f)}


def test_collective_manifest_is_the_launchers_worker_only_job_restarting_on_failure():
    documents = _collective_documents()
    job = documents["TFJob"]
    replicas = job["spec"]["tfReplicaSpecs"]
    assert set(replicas) == {"Worker"}
    # What `launch --ps 0 --workers 2 --no-chief` starts.
    planned = collections.Counter((r.task_type, r.index) for r in launch.plan_roles(
        0, replicas["Worker"]["replicas"], False, chief=False))
    assert planned == collections.Counter(
        (rtype.lower(), i) for rtype, spec in replicas.items()
        for i in range(spec["replicas"]))
    # A worker that loses a peer exits 1 by itself: only OnFailure restarts it
    # (ExitCode takes 1 as permanent); the operator's backoffLimit bounds the
    # restarts, as the launcher's --max-restarts does (a group restart is one
    # restart per worker there).
    assert replicas["Worker"]["restartPolicy"] == "OnFailure"
    assert job["spec"]["runPolicy"]["backoffLimit"] >= replicas["Worker"]["replicas"]
    claim = documents["PersistentVolumeClaim"]
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    for rtype, spec in replicas.items():
        command = _container(spec)["command"]
        assert command[:2] == ["python", "examples/distributed_digits.py"]
        assert _flag(command, "--strategy") == "multi_worker_mirrored"
        volume = spec["template"]["spec"]["volumes"][0]
        assert volume["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]
        for index in range(spec["replicas"]):
            # What RunConfig(train_distribute=MultiWorkerMirroredStrategy()) reads
            # (building the strategy here would configure this process's runtime).
            config = cluster_info.parse_tf_config(
                _operator_tf_config(job, replicas, rtype, index), workers_only_ok=True)
            assert config.task_type == rtype.lower() and config.task_id == index
            assert config.is_chief == (rtype == "Worker" and index == 0)
            if rtype == "Worker":
                assert config.num_ps_replicas == 0
                assert config.num_worker_replicas == replicas["Worker"]["replicas"]


# The label the Training Operator puts on every pod of a job, valued the job's name.
JOB_NAME_LABEL = "training.kubeflow.org/job-name"


def test_network_policy_admits_only_the_jobs_own_pods():
    # TensorFlow's gRPC server is unauthenticated: the trust boundary is the network.
    policy = _documents()["NetworkPolicy"]
    assert policy["apiVersion"] == "networking.k8s.io/v1"
    own_pods = {"matchLabels": {JOB_NAME_LABEL: _tfjob()["metadata"]["name"]}}
    spec = policy["spec"]
    assert spec["podSelector"] == own_pods  # every replica type of this job
    # Ingress only: the roles still reach a gs:// model_dir and DNS.
    assert spec["policyTypes"] == ["Ingress"]
    (rule,) = spec["ingress"]
    # From the job's own pods alone: no namespaceSelector, no ipBlock.
    assert rule["from"] == [{"podSelector": own_pods}]
    ports = {port["containerPort"] for spec in _replicas().values()
             for port in _container(spec).get("ports", [])}
    assert ports == {TF_PORT}
    assert rule["ports"] == [{"protocol": "TCP", "port": TF_PORT}]
