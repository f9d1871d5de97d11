"""The compatibility room: what tf.estimator's module paths serve, for unchanged code.

Programs, libraries and tf.estimator's own test suites import tf.estimator's module
paths (``tensorflow_estimator.python.estimator.training``, ``...head.head_utils``)
and reach private names there; those names are part of the spec.
`install_as_tf_estimator()` serves them; everything that exists only for that lives
here, so the working modules read as if those paths did not exist:

- `alias_table`: which tf.estimator module path resolves to which estimator_lite
  modules (working modules first, then the modules below), and the names served
  under another name (``gc._union`` is `export.garbage_collection.union`);
- `alias_modules`: the alias modules and import finders that `install` puts on
  `sys.meta_path`;
- the private names no working module needs, one module per tf.estimator module:
  `estimator_module` (``estimator._write_dict_to_summary``, ...),
  `training_module` (``training._StopAtSecsHook``), `head_utils` (the assertions
  tf.estimator's head tests share), `canned_head` (TF 1.x's private head factories).

docs/compatibility.md is the one table of every private name served, where from and
why (who reaches it), and of the seams that stay in working modules (module
attributes and call-time lookups that tests and users patch);
tests/_compat/compatibility_table_test.py checks it against what the paths serve.
Working modules never import from here (tests/repository/layering_test.py); only
`install` and `run` do.
"""
