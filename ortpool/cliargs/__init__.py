"""Argument groups shared by every subcommand that runs a model (Polygraphy's ``tools/args``).

Each group declares its options once, reads them into one value of a lower layer, and is used by
``validate``, ``fix``, ``conformance`` and ``bench`` alike instead of being declared per command:

- :mod:`ortpool.cliargs.inputs`: ``--shape``, ``--inputs``, ``--seed`` -> how a model's input
  shapes and values are resolved;
- :mod:`ortpool.cliargs.runtime`: ``--providers``, the optimization level, threads -> the runtime
  description in :mod:`ortpool.ort`;
- :mod:`ortpool.cliargs.accuracy`: ruling 17's thresholds (with ``--atol``/``--rtol`` where a
  command takes them) -> an accuracy rule;
- :mod:`ortpool.cliargs.files`: ``IN.onnx OUT.onnx``, ``--ops``, ``--nodes``, ``--exclude``,
  ``--skip-invalid``, ``--json REPORT``, ``--link-data``, ``-q``/``-v`` of the commands that
  write a model (``rewrite``, ``restore``, ``fix``);
- :mod:`ortpool.cliargs.reports`: ``--json FILE``, ``--no-progress`` and ``--markdown`` of the
  commands that report (``validate``, ``conformance``, ``bench``, ``ops``).

A group adds its options to the command's own parser where the command's help has always shown
them, so sharing a declaration changes no ``--help`` text.

The per-command modules (``*/cli.py``) are the command-line layer, so they may import these.
"""

__all__ = ["accuracy", "files", "inputs", "reports", "runtime"]
