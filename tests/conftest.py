"""Pytest setup: no TF_CONFIG leaks in from the environment running the tests."""

import pytest


@pytest.fixture(autouse=True)
def _no_tf_config(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
