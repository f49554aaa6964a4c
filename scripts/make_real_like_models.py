#!/usr/bin/env python
"""Generate tests/support/models/real/: small models made like eight real third-party models
(issue 28's experiment) and a Conv -> MaxPool -> Relu model with symbolic dims, for
``scripts/real_models_experiment.py`` and tests/fix/test_real_like.py. The builders and each
model's real input size are ``tests.support.cnn_builders.REAL_LIKE``; deterministic (seeded
weights: the same bytes every run), a few KB to 30 KB each, stamped IR version 10.

Run: ``python scripts/make_real_like_models.py [OUT_DIR]`` (default tests/support/models/real/).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.cnn_builders import REAL_LIKE  # noqa: E402  (the repository on the path first)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path,
                        default=ROOT / "tests" / "support" / "models" / "real",
                        help="the folder to write (default: tests/support/models/real/)")
    out = parser.parse_args(argv).out
    out.mkdir(parents=True, exist_ok=True)
    for name, (build, _sizes) in REAL_LIKE.items():
        (out / f"{name}.onnx").write_bytes(build().SerializeToString(deterministic=True))
    print(f"wrote {len(REAL_LIKE)} models to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
