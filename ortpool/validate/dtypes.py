"""The element types' names, codes and numpy dtypes: :mod:`ortpool.dtypes` (below the model
layer, where input resolution needs them), under the name the validator and fix import."""

from __future__ import annotations

from ortpool.dtypes import CODE, FLOATS, NAME_OF_CODE, NUMPY, name_of, name_of_code

__all__ = ["CODE", "FLOATS", "NAME_OF_CODE", "NUMPY", "name_of", "name_of_code"]
