"""Whole programs compared across stacks: tf.estimator 2.15 (the oracle), TF 1.15, and
programs written for tf.estimator running unchanged on estimator_lite."""
