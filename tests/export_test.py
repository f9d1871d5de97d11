"""estimator_lite.export: tf.estimator.export's public names."""

import estimator_lite as el


def test_public_names():
    for name in ("ServingInputReceiver", "build_raw_serving_input_receiver_fn",
                 "build_parsing_serving_input_receiver_fn", "ClassificationOutput",
                 "RegressionOutput", "PredictOutput"):
        assert hasattr(el.export, name)
