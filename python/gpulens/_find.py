"""Where the `gpulens` executable this package installed lives."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig


def _scripts_dirs() -> list[str]:
    """The folders a wheel's scripts can have been installed into, most likely first."""
    found: list[str] = []

    def add(path: str | None) -> None:
        if path and path not in found:
            found.append(path)

    # This interpreter's own scheme (a venv, `uv tool`, pipx, the system).
    add(sysconfig.get_path("scripts"))
    # `pip install --user`.
    user_scheme = {"nt": "nt_user", "posix": "posix_user"}.get(os.name)
    if user_scheme and user_scheme in sysconfig.get_scheme_names():
        add(sysconfig.get_path("scripts", scheme=user_scheme))
    # `pip install --target DIR` / `--prefix DIR`: the scripts sit beside the package.
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    add(os.path.join(package_root, "bin"))
    add(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(package_root))), "bin"))
    return found


def find_gpulens_bin() -> str:
    """The path of the `gpulens` executable installed with this package.

    Raises FileNotFoundError when there is none (the package was copied
    without its scripts); a `gpulens` on PATH is the last resort."""
    name = "gpulens" + (sysconfig.get_config_var("EXE") or "")
    for folder in _scripts_dirs():
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    on_path = shutil.which(name)
    if on_path:
        return on_path
    raise FileNotFoundError(
        f"the gpulens executable was not found (looked in {', '.join(_scripts_dirs())} and on PATH); "
        "reinstall the package: uv tool install gpulens"
    )


if __name__ == "__main__":  # pragma: no cover
    print(find_gpulens_bin(), file=sys.stdout)
