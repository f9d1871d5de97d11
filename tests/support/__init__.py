"""What tests share, one module per concept (not test files): the fork server every
started program goes through (zygote.py), small models and inputs (models.py),
stand-ins (fakes.py), comparisons with the oracle's results (compare.py), TF-version
shims (tf_versions.py), tf.estimator's name lists (public_names.py), aliasing for a
test's length (installed.py) and the stale tensorflow-estimator wheel
(stale_estimator.py)."""
