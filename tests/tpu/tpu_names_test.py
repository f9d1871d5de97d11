"""estimator_lite.tpu has tf.compat.v1.estimator.tpu's names (2.15), minus a pinned few."""

import os

from estimator_lite import tpu

NAMES_FILE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data",
                          "tf_estimator_tpu_2_15_public_names.txt")
# Left out on purpose (docs/scaling.md, "TPUEstimator code on CPU/GPU"): TPU embedding
# tables have no CPU/GPU meaning.
LEFT_OUT = {"experimental", "experimental.EmbeddingConfigSpec"}


def _oracle_names():
    with open(NAMES_FILE) as f:
        return {line.strip() for line in f if line.strip() and not line.startswith("#")}


def test_names_are_the_oracles_minus_the_left_out():
    oracle = _oracle_names()
    assert oracle >= LEFT_OUT
    assert sorted(tpu.__all__) == sorted(oracle - LEFT_OUT)
    assert all(hasattr(tpu, name) for name in tpu.__all__)


def test_input_pipeline_config_values_match_tf_estimator():
    assert (tpu.InputPipelineConfig.PER_SHARD_V1, tpu.InputPipelineConfig.PER_HOST_V1,
            tpu.InputPipelineConfig.PER_HOST_V2, tpu.InputPipelineConfig.BROADCAST,
            tpu.InputPipelineConfig.SLICED) == (1, 2, 3, 4, 5)


def test_export_saved_model_api_version_is_tf_estimators_enum():
    # tf.estimator 2.15: tpu_estimator.ExportSavedModelApiVersion(enum.Enum), V1 = 1,
    # V2 = 2, the default of TPUEstimator(export_saved_model_api_version=...).
    import enum  # noqa: PLC0415
    import inspect  # noqa: PLC0415

    from estimator_lite.tpu import tpu_estimator  # noqa: PLC0415
    version = tpu_estimator.ExportSavedModelApiVersion
    assert issubclass(version, enum.Enum)
    assert [(m.name, m.value) for m in version] == [("V1", 1), ("V2", 2)]
    default = inspect.signature(tpu_estimator.TPUEstimator).parameters[
        "export_saved_model_api_version"].default
    assert default is version.V1
