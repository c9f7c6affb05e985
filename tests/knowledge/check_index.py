"""Check every install line gpulens shows against the package index.

A renamed, withdrawn or re-packaged library must fail CI, not a user who runs
the `uv add` line a hint gave. This script reads knowledge/libraries.toml and
every `uv add` line in knowledge/reference/*.md, then asks the package index
(the one pip is configured with; read-only, through the JSON form of the
simple repository API) about each package they name:

- the project exists and has a release, not yanked and not a pre-release,
  that satisfies the line's version bound;
- that release ships wheels (a project that only holds a placeholder is an
  error), except for libraries marked `pypi_placeholder = true`, whose PyPI
  release must still be a placeholder (if real wheels appear, the advice to
  use another index is stale);
- the extras the line asks for (`numba-cuda[cu12]`) are declared by that
  release's metadata;
- a library's CUDA 12 and CUDA 13 lines name different packages or extras,
  each for its own CUDA major (`-cu12`/`-cu13`, `cuda12x`/`cuda13x`,
  `[cu12]`/`[cu13]`);
- each `[[library.requires]]` fact holds: the newest and the oldest release of
  the package in the stated range declare that dependency, with every clause
  of that bound, in their metadata (Requires-Dist). This is how "cuDF 26.08 and later need
  pandas 3" or "cuxfilter pins cuDF 26.06" stay true.

Metadata is read from one wheel of the release with HTTP range requests (the
zip's directory and its METADATA member only): nothing is installed.

Usage: python check_index.py [REPO_ROOT]
       python check_index.py --self-test   (plants one wrong fact of each kind
                                             and fails unless all are found)
Exit status: 0 all true, 1 a fact is wrong, 2 the index could not be reached
or the knowledge base could not be read.
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import sys
import tomllib
import urllib.error
import urllib.request
import zipfile
from email.parser import Parser
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

TIMEOUT = 60


class IndexError_(Exception):
    """The index could not be reached (not a wrong fact)."""


def index_url() -> str:
    """The simple index pip would use: PIP_INDEX_URL, pip's configuration, else pip's default."""
    url = os.environ.get("PIP_INDEX_URL")
    if not url:
        try:
            from pip._internal.configuration import Configuration

            config = Configuration(isolated=False)
            config.load()
            for key in ("global.index-url", ":env:.index-url", "install.index-url"):
                try:
                    url = config.get_value(key)
                    break
                except Exception:
                    continue
        except Exception:
            url = None
    if not url:
        from pip._internal.models.index import PyPI

        url = PyPI.simple_url
    return url.rstrip("/")


def fetch(url: str, headers: dict[str, str] | None = None) -> bytes:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return response.read()
    except urllib.error.HTTPError as e:
        if e.code == 404:
            raise FileNotFoundError(url) from e
        raise IndexError_(f"{url}: HTTP {e.code}") from e
    except (urllib.error.URLError, TimeoutError, OSError) as e:
        raise IndexError_(f"{url}: {e}") from e


class Project:
    """A project's page on the index: its files, grouped by release."""

    def __init__(self, index: str, name: str):
        self.name = canonicalize_name(name)
        try:
            data = json.loads(
                fetch(f"{index}/{self.name}/", {"Accept": "application/vnd.pypi.simple.v1+json"})
            )
        except FileNotFoundError:
            self.files: dict[Version, list[dict]] = {}
            self.exists = False
            return
        self.exists = True
        self.files = {}
        for f in data.get("files", []):
            if f.get("yanked"):
                continue
            version = file_version(f["filename"])
            if version is not None:
                self.files.setdefault(version, []).append(f)

    def releases(self, specifier: SpecifierSet) -> list[Version]:
        """Final releases within the bound, oldest first."""
        return sorted(v for v in self.files if not v.is_prerelease and v in specifier)

    def wheels(self, version: Version) -> list[dict]:
        return [f for f in self.files.get(version, []) if f["filename"].endswith(".whl")]


def file_version(filename: str) -> Version | None:
    if filename.endswith(".whl"):
        parts = filename[: -len(".whl")].split("-")
        text = parts[1] if len(parts) >= 5 else None
    else:
        m = re.match(r"^(.+?)-(\d[^-]*?)\.(tar\.gz|zip|tar\.bz2)$", filename)
        text = m.group(2) if m else None
    if text is None:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


class RangeFile(io.RawIOBase):
    """A remote file read with HTTP range requests, for zipfile."""

    def __init__(self, url: str, size: int):
        self.url, self.size, self.pos = url, size, 0

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = {0: offset, 1: self.pos + offset, 2: self.size + offset}[whence]
        return self.pos

    def read(self, n: int = -1) -> bytes:
        end = self.size if n is None or n < 0 else min(self.size, self.pos + n)
        if end <= self.pos:
            return b""
        data = fetch(self.url, {"Range": f"bytes={self.pos}-{end - 1}"})
        if len(data) == self.size and end - self.pos != self.size:
            data = data[self.pos : end]  # the server ignored the range
        self.pos += len(data)
        return data

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def wheel_metadata(wheel: dict):
    """The METADATA of a wheel, read from its zip directory and that one member."""
    size = wheel.get("size")
    if not size:
        size = len(fetch(wheel["url"]))
    raw = io.BufferedReader(RangeFile(wheel["url"], size), buffer_size=1 << 16)
    with zipfile.ZipFile(raw) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        return Parser().parsestr(z.read(name).decode("utf-8"))


def smallest_wheel(wheels: list[dict]) -> dict:
    return min(wheels, key=lambda f: f.get("size") or 1 << 62)


TOKEN = re.compile(r"""\s+("[^"\n]*"|'[^'\n]*'|--[^\s`]+|[A-Za-z0-9_.\-\[\],<>=!~*]+(?:@\s*\S+)?)""")


def uv_add_lines(text: str) -> list[str]:
    """Every `uv add ...` command in a text (code spans, code blocks, prose):
    its options and requirements, up to the first word that is neither."""
    out = []
    for m in re.finditer(r"\buv add\b", text):
        words, at = [], m.end()
        while (t := TOKEN.match(text, at)) and "\n" not in text[at : t.start(1)]:
            words.append(t.group(1))
            at = t.end()
        if words:
            out.append("uv add " + " ".join(words))
    return out


def requirements_of(line: str) -> list[Requirement]:
    """The requirements a `uv add` line names; URLs and placeholders are skipped."""
    try:
        words = shlex.split(line)[2:]
    except ValueError:
        words = line.split()[2:]
    out = []
    skip_next = False
    for w in words:
        if skip_next:
            skip_next = False
            continue
        if w.startswith("-"):
            skip_next = "=" not in w and w in {"--index", "--extra-index-url", "--index-url", "--default-index"}
            continue
        if "://" in w or "<" in w and ">" in w and "/" in w:
            continue  # a direct URL (a wheel on a release page)
        try:
            out.append(Requirement(w))
        except InvalidRequirement:
            raise ValueError(f"`{line}`: {w!r} is not a requirement")
    return out


CUDA_MARKS = {
    "cu12": (re.compile(r"(-cu12$|cuda12x$)"), "[cu12]"),
    "cu13": (re.compile(r"(-cu13$|cuda13x$)"), "[cu13]"),
}


def cuda_major_of(req: Requirement) -> str | None:
    for major, (pattern, extra) in CUDA_MARKS.items():
        if pattern.search(str(canonicalize_name(req.name))) or extra.strip("[]") in req.extras:
            return major
    return None


def main(argv: list[str]) -> int:
    if argv[1:2] == ["--self-test"]:
        return self_test()
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[2]
    try:
        libraries = tomllib.loads((root / "knowledge/libraries.toml").read_text())["library"]
    except (OSError, tomllib.TOMLDecodeError, KeyError) as e:
        print(f"check_index: cannot read knowledge/libraries.toml: {e}", file=sys.stderr)
        return 2
    errors, summary = check(root, libraries)
    for e in errors:
        print(f"check_index: {e}")
    print(f"check_index: {summary}; {len(errors)} wrong")
    return 1 if errors else 0


# A knowledge base with one wrong fact of each kind the check exists to catch.
WRONG = """
[[library]]
id = "cudf"
install = { cu12 = "uv add gpulens-no-such-package-cu12", cu13 = "uv add gpulens-no-such-package-cu12" }
install_note = "A pandas-2 project pins `uv add \\"cudf-cu12>=99\\"`."
[[library.requires]]
package = "cudf-cu12"
release = ">=26.8"
needs = "pandas>=4.0"

[[library]]
id = "numba"
install = { cu12 = "uv add \\"numba-cuda[cu99]\\"", cu13 = "uv add \\"numba-cuda[cu13]\\"" }

[[library]]
id = "cugraph"
pypi_placeholder = true
install = { cu12 = "uv add nx-cugraph-cu12" }

[[library]]
id = "cuspatial"
install = { cu12 = "uv add cuspatial-cu12" }
"""


def self_test() -> int:
    """The check finds each wrong fact of WRONG (so a green run means something)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "knowledge/reference").mkdir(parents=True)
        (root / "knowledge/libraries.toml").write_text(WRONG)
        errors, _ = check(root, tomllib.loads(WRONG)["library"])
    expected = [
        "no project 'gpulens-no-such-package-cu12'",
        "the CUDA 12 and CUDA 13 install lines are the same",
        "no release of cudf-cu12 satisfies >=99",
        "requires pandas<",  # cuDF declares pandas 3, not pandas>=4
        "declares no extra [cu99]",
        "now ships real wheels on PyPI",
        "cuspatial-cu12 25.4.0 has no wheels",
    ]
    missing = [e for e in expected if not any(e in err for err in errors)]
    for m in missing:
        print(f"check_index --self-test: a wrong fact went unnoticed: expected an error containing {m!r}")
    if missing:
        print("check_index --self-test: the errors it did report:\n  " + "\n  ".join(errors))
        return 1
    print(f"check_index --self-test: all {len(expected)} planted errors found")
    return 0


def check(root: Path, libraries: list[dict]) -> tuple[list[str], str]:
    index = index_url()
    errors: list[str] = []
    projects: dict[str, Project] = {}
    checked_lines = 0

    def project(name: str) -> Project:
        key = str(canonicalize_name(name))
        if key not in projects:
            projects[key] = Project(index, key)
        return projects[key]

    def check_line(line: str, where: str, placeholder: bool) -> list[Requirement]:
        nonlocal checked_lines
        checked_lines += 1
        try:
            reqs = requirements_of(line)
        except ValueError as e:
            errors.append(f"{where}: {e}")
            return []
        for req in reqs:
            p = project(req.name)
            if not p.exists:
                errors.append(f"{where}: `{line}`: no project {req.name!r} on the index")
                continue
            releases = p.releases(req.specifier)
            if not releases:
                errors.append(f"{where}: `{line}`: no release of {req.name} satisfies {req.specifier or 'any version'}")
                continue
            newest = releases[-1]
            wheels = p.wheels(newest)
            if placeholder:
                real = [w for w in wheels if (w.get("size") or 0) > 100_000]
                if real:
                    errors.append(
                        f"{where}: `{line}`: {req.name} {newest} now ships real wheels on PyPI, but the knowledge "
                        f"base says PyPI holds only a placeholder (pypi_placeholder = true)"
                    )
                continue
            if not wheels:
                errors.append(f"{where}: `{line}`: {req.name} {newest} has no wheels on the index (a placeholder?)")
                continue
            if req.extras:
                meta = wheel_metadata(smallest_wheel(wheels))
                declared = {canonicalize_name(e) for e in meta.get_all("Provides-Extra") or []}
                for extra in req.extras:
                    if canonicalize_name(extra) not in declared:
                        errors.append(f"{where}: `{line}`: {req.name} {newest} declares no extra [{extra}]")
        return reqs

    for lib in libraries:
        lib_id = lib["id"]
        placeholder = bool(lib.get("pypi_placeholder"))
        lines = {}
        for major, line in lib.get("install", {}).items():
            lines[major] = check_line(line, f"libraries.toml [{lib_id}] install.{major}", placeholder)
        legacy = lib.get("legacy")
        if legacy:
            for major, line in legacy.get("install", {}).items():
                check_line(line, f"libraries.toml [{lib_id}] legacy.install.{major}", False)
        for line in uv_add_lines(lib.get("install_note", "") or ""):
            check_line(line, f"libraries.toml [{lib_id}] install_note", placeholder)
        # CUDA 12 and 13 lines are each for their own CUDA major.
        if "cu12" in lines and "cu13" in lines:
            marks = {major: {cuda_major_of(r) for r in reqs} for major, reqs in lines.items()}
            same = [str(r) for r in lines["cu12"]] == [str(r) for r in lines["cu13"]]
            if same:
                errors.append(f"libraries.toml [{lib_id}]: the CUDA 12 and CUDA 13 install lines are the same")
            for major, found in marks.items():
                other = "cu13" if major == "cu12" else "cu12"
                if other in found:
                    errors.append(f"libraries.toml [{lib_id}] install.{major} names a {other} package")
        for fact in lib.get("requires", []):
            where = f"libraries.toml [{lib_id}] requires {fact.get('package')} {fact.get('release')}: {fact.get('needs')}"
            try:
                needs = Requirement(fact["needs"])
                release = SpecifierSet(fact["release"])
            except (KeyError, InvalidRequirement, ValueError) as e:
                errors.append(f"{where}: malformed fact ({e})")
                continue
            p = project(fact["package"])
            releases = [v for v in p.releases(release) if p.wheels(v)]
            if not releases:
                errors.append(f"{where}: no release of {fact['package']} with wheels in {release}")
                continue
            for version in sorted({releases[0], releases[-1]}):
                meta = wheel_metadata(smallest_wheel(p.wheels(version)))
                declared = []
                for text in meta.get_all("Requires-Dist") or []:
                    try:
                        r = Requirement(text)
                    except InvalidRequirement:
                        continue
                    if canonicalize_name(r.name) == canonicalize_name(needs.name) and not (r.marker and "extra" in str(r.marker)):
                        declared.append(r)
                # Each clause of the stated bound must be one the package declares
                # (`pandas>=3.0.0` holds for `pandas<3.1.0,>=3.0.0`).
                if not any(set(needs.specifier) <= set(r.specifier) for r in declared):
                    got = ", ".join(str(r) for r in declared) or "nothing"
                    errors.append(f"{where}: {fact['package']} {version} requires {got}")

    for page in sorted((root / "knowledge/reference").glob("*.md")):
        lib = next((l for l in libraries if l["id"] == page.stem), {})
        for line in uv_add_lines(page.read_text()):
            check_line(line, f"reference/{page.name}", bool(lib.get("pypi_placeholder")))

    summary = (
        f"{checked_lines} install lines, {len(projects)} projects, "
        f"{sum(len(l.get('requires', [])) for l in libraries)} dependency facts checked"
    )
    return errors, summary


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except IndexError_ as e:
        print(f"check_index: the package index could not be read: {e}", file=sys.stderr)
        sys.exit(2)
