"""The bundled models, installed as ``ortpool/models/`` (the package ``ortpool.models``).

Data only: ``*.onnx`` here and in ``fix/``, made by ``scripts/make_models.py``. The package exists
so that ``importlib.resources`` finds the folder in the wheel and in the editable installation
alike (pyproject.toml maps it from the repository's top-level ``models/``).
"""
