"""gpulens: finds the Python code an NVIDIA GPU library would speed up.

The package carries the `gpulens` executable; `python -m gpulens ...` runs
it, and `find_gpulens_bin()` says where it is.
"""

from gpulens._find import find_gpulens_bin

__all__ = ["find_gpulens_bin"]
