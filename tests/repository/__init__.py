"""Checks of the repository itself: lint, layering, types, BUILD, docs, pinned names,
README's commands, the benchmarks, examples and manifests still running."""
