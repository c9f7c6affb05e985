"""Check that every CPU-side name in the knowledge base exists in the real library.

Every `[[api]]` entry of knowledge/api/*.toml has a `cpu` field, a fully
qualified Python name such as `numpy.fft.fft` or `pandas.DataFrame.groupby`.
For each name whose top-level module is one of CHECKED, this script imports the
longest importable module prefix (`numpy.fft`, `pandas`) and looks the rest up
with getattr (`fft`; `DataFrame`, then `groupby`). Names of other top-level
modules (faiss, cv2, geopandas, ...) are skipped and counted as skipped: those
libraries are not installed by tests/knowledge/requirements.txt.

Usage: python check_cpu_names.py [KNOWLEDGE_API_DIR]
       (default: knowledge/api at the repository root)

Exit status: 0 when every checked name exists, 1 when any is missing (or its
module fails to import), 2 on a usage or knowledge-base error.

Run it through tests/knowledge/run, which installs the pinned versions of
tests/knowledge/requirements.txt into a virtual environment first.
"""

from __future__ import annotations

import importlib
import sys
import tomllib
import warnings
from collections import Counter
from pathlib import Path

# Top-level module -> distribution that provides it (for the version report).
CHECKED = {
    "numpy": "numpy",
    "scipy": "scipy",
    "pandas": "pandas",
    "sklearn": "scikit-learn",
    "networkx": "networkx",
    "skimage": "scikit-image",
}

# Top-level modules whose libraries are not installed here: skipped on purpose.
SKIPPED = {
    "faiss", "cv2", "geopandas", "trimesh", "numba", "umap", "hdbscan",
    "holoviews", "datashader", "annoy", "hnswlib", "pynndescent", "shapely",
}

_MISSING = object()


class Resolution:
    """The outcome of looking up one name."""

    def __init__(self, ok: bool, detail: str = "", deprecation: str = ""):
        self.ok = ok
        self.detail = detail
        self.deprecation = deprecation


def _import_longest_prefix(parts: list[str]):
    """Import the longest importable prefix of `parts`.

    Returns (module, number of parts consumed). A ModuleNotFoundError for the
    prefix being tried (or one of its parents) means "not a module, try a
    shorter prefix"; any other import failure is a real error and propagates.
    """
    for n in range(len(parts), 0, -1):
        dotted = ".".join(parts[:n])
        try:
            return importlib.import_module(dotted), n
        except ModuleNotFoundError as exc:
            missing = exc.name or ""
            if missing == dotted or dotted.startswith(missing + "."):
                continue
            raise
    raise ModuleNotFoundError(f"no module named {parts[0]!r}", name=parts[0])


def resolve(name: str) -> Resolution:
    parts = name.split(".")
    if not all(p.isidentifier() for p in parts):
        return Resolution(False, "not a dotted Python name")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            obj, n = _import_longest_prefix(parts)
        except ModuleNotFoundError as exc:
            return Resolution(False, f"top-level module not importable: {exc}")
        except Exception as exc:  # a real module that fails to import
            return Resolution(False, f"import failed: {type(exc).__name__}: {exc}")
        path = ".".join(parts[:n])
        for attr in parts[n:]:
            try:
                nxt = getattr(obj, attr, _MISSING)
            except Exception as exc:  # a lazy loader or __getattr__ that raises
                return Resolution(False, f"{path}.{attr} raised {type(exc).__name__}: {exc}")
            if nxt is _MISSING:
                return Resolution(False, f"{path} has no attribute {attr!r}")
            obj = nxt
            path = f"{path}.{attr}"
    deprecations = [
        str(w.message).splitlines()[0]
        for w in caught
        if issubclass(w.category, (DeprecationWarning, FutureWarning, PendingDeprecationWarning))
    ]
    return Resolution(True, deprecation=deprecations[0] if deprecations else "")


def load_entries(api_dir: Path) -> list[tuple[str, str]]:
    """(file name, cpu name) for every [[api]] entry, in file order."""
    files = sorted(api_dir.glob("*.toml"))
    if not files:
        print(f"check_cpu_names: no *.toml files in {api_dir}", file=sys.stderr)
        sys.exit(2)
    entries = []
    for path in files:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            print(f"check_cpu_names: cannot read {path}: {exc}", file=sys.stderr)
            sys.exit(2)
        for i, api in enumerate(data.get("api", [])):
            cpu = api.get("cpu")
            if not isinstance(cpu, str) or not cpu:
                print(f"check_cpu_names: {path.name}: [[api]] entry {i + 1} has no `cpu` string",
                      file=sys.stderr)
                sys.exit(2)
            entries.append((path.name, cpu))
    return entries


def versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for dist in CHECKED.values():
        try:
            out.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            out.append(f"{dist} (not installed)")
    return ", ".join(out)


def main(argv: list[str]) -> int:
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    root = Path(__file__).resolve().parents[2]
    api_dir = Path(argv[1]) if len(argv) == 2 else root / "knowledge" / "api"

    entries = load_entries(api_dir)
    print(f"check_cpu_names: {len(entries)} cpu names in {api_dir}")
    print(f"check_cpu_names: libraries: {versions()} (Python {sys.version.split()[0]})")

    checked = 0
    skipped: Counter[str] = Counter()
    missing: list[tuple[str, str, str]] = []
    deprecated: list[tuple[str, str, str]] = []
    for file, name in entries:
        top = name.split(".", 1)[0]
        if top not in CHECKED:
            skipped[top] += 1
            continue
        checked += 1
        res = resolve(name)
        if not res.ok:
            missing.append((file, name, res.detail))
        elif res.deprecation:
            deprecated.append((file, name, res.deprecation))

    if deprecated:
        print(f"\nDeprecated ({len(deprecated)}; they exist, but warn when looked up):")
        for file, name, why in deprecated:
            print(f"  {file}: {name}: {why}")
    if missing:
        print(f"\nMissing ({len(missing)}):")
        for file, name, why in missing:
            print(f"  {file}: {name}: {why}")

    unknown = sorted(set(skipped) - SKIPPED)
    print()
    print(f"checked {checked} names of {', '.join(CHECKED)}; "
          f"{checked - len(missing)} exist, {len(missing)} missing")
    if skipped:
        detail = ", ".join(f"{top} {n}" for top, n in sorted(skipped.items()))
        print(f"skipped {sum(skipped.values())} names of libraries not installed here ({detail})")
    if unknown:
        print(f"note: skipped top-level modules not in the known skip list: {', '.join(unknown)}")
    print(f"knowledge: {checked - len(missing)} passed, {len(missing)} failed, "
          f"{sum(skipped.values())} skipped")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
