"""Argument groups shared by every subcommand that runs a model (Polygraphy's ``tools/args``).

Each group declares its options once, reads them into one value of a lower layer, and is used by
``validate``, ``fix``, ``conformance`` and ``bench`` alike instead of being declared per command:

- :mod:`ortpool.cliargs.inputs`: ``--shape``, ``--inputs``, ``--seed`` -> how a model's input
  shapes and values are resolved;
- :mod:`ortpool.cliargs.runtime`: ``--providers``, the optimization level, threads -> the runtime
  description in :mod:`ortpool.ort`.

The per-command modules (``*/cli.py``) are the command-line layer, so they may import these.
"""
