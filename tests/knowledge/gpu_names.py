"""List which GPU-side names of the knowledge base exist in the installed GPU libraries.

Run on a machine with the libraries installed (the device machine has CuPy):
    python3 tests/knowledge/gpu_names.py cupy cupyx > knowledge/validation/cupy-names.json
The JSON lists every `gpu` name under the given top-level modules with the
version checked and whether it resolves; the test suite compares the
knowledge base against the committed result.
"""
import importlib
import json
import pathlib
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def resolve(name):
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except Exception:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def main(prefixes):
    names = set()
    for path in sorted((ROOT / "knowledge" / "api").glob("*.toml")):
        data = tomllib.loads(path.read_text())
        for entry in data.get("api", []):
            gpu = entry.get("gpu")
            if gpu and gpu.split(".")[0] in prefixes:
                names.add(gpu)
    versions = {}
    for p in prefixes:
        try:
            versions[p] = getattr(importlib.import_module(p), "__version__", "unknown")
        except Exception as e:  # noqa: BLE001 - report, don't crash
            versions[p] = f"not importable: {e}"
    result = {"versions": versions, "names": {n: resolve(n) for n in sorted(names)}}
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main(sys.argv[1:] or ["cupy", "cupyx"])
