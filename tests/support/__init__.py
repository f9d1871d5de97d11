"""Test infrastructure: the fork server, shared models, version shims."""
