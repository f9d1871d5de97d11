"""The export tests' fixture: a fresh default graph."""

import pytest

from estimator_lite._tf import tf


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g
