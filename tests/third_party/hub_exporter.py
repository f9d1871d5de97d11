"""tensorflow_hub 0.15 under the runner: its package import reaches the v1 API.

`tensorflow_hub/__init__.py` imports `tensorflow_hub.estimator`, which does
`from tensorflow.compat.v1 import estimator as tf_estimator` and defines
`LatestModuleExporter(tf_estimator.Exporter)`. Prints `RESULT {json}`: whether the
exporter class derives from `tf.compat.v1.estimator.Exporter`, or, where the v1 API
is absent, the error using it gives.
"""

import json

import tensorflow as tf
import tensorflow_hub as hub

from estimator_lite.install import NotProvidedError


def main():
    exporter = hub.LatestModuleExporter
    result = {"hub_version": hub.__version__, "exporter_module": exporter.__module__,
              "base": exporter.__mro__[1].__name__, "error": None}
    try:
        base = tf.compat.v1.estimator.Exporter
        result["subclasses_v1_exporter"] = isinstance(base, type) and issubclass(
            exporter, base)
        exporter("hub", lambda: None)
    except NotProvidedError as error:
        result["error"] = str(error)
    print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    main()
