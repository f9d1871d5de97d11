"""Training techniques tf.estimator lacked, built on public TF graph APIs.

- `towers`: in-graph data parallelism over several devices (`replicate_model_fn`,
  `TowerOptimizer`).
- `gradient_accumulation`: the mean gradient of N micro-batches, applied once.
- `model_average`: local copies per worker averaged into the global model.
- `lr_plateau`: cut the learning rate when validation stops improving.
- `multi_task`: several task losses in one train op, with per-task metrics.
- `export_listener`: export SavedModels periodically during training.
- `fresh_start`: remove a previous run's files from a model_dir, and only those.
- `optimizer_wrapper`: the shared base of the wrapping optimizers.

Techniques build on the public model_fn/export API and the engine; they never
import `estimator` or `training`.
"""
