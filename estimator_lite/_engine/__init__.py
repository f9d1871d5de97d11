"""How estimator_lite runs: the layer under the public tf.estimator-style API.

Modules here own one concept each (the train session and its periodic actions,
the eval and predict loops, the SessionRunHook run protocol, the timer, the
TF_CONFIG roles, every on-disk name in a model_dir, event files, completion
markers, argument checks). Nothing in `_engine` imports a public module of the
package; public modules build on it.
"""
