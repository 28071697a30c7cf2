"""The locks in requirements/ pin every dependency pyproject.toml names, at a version its range allows, with
hashes; `make lock` regenerates them. Run alone as `python tests/project/test_lock.py` too."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s\\;]+)", re.MULTILINE)


def pins(lock: Path) -> dict[str, Version]:
    return {canonicalize_name(name): Version(version) for name, version in PIN.findall(lock.read_text())}


def requirements(*extras: str) -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    named = list(project["dependencies"])
    for extra in extras:
        named += project["optional-dependencies"][extra]
    return [Requirement(r) for r in named]


def problems(lock: str, *extras: str) -> list[str]:
    path = REPO / "requirements" / lock
    pinned, found = pins(path), []
    for requirement in requirements(*extras):
        version = pinned.get(canonicalize_name(requirement.name))
        if version is None:
            found.append(f"{path.name} lacks {requirement.name}, which pyproject.toml names: run `make lock`")
        elif not requirement.specifier.contains(version, prereleases=True):
            found.append(f"{path.name} pins {requirement.name}=={version} outside {requirement}: run `make lock`")
    unhashed = [name for name, _ in PIN.findall(path.read_text()) if not _hashed(path.read_text(), name)]
    found += [f"{path.name}: {name} has no --hash" for name in unhashed]
    return found


def _hashed(text: str, name: str) -> bool:
    block = text[text.index(f"\n{name}==") + 1:].split("\n\n", 1)[0].split("\n# ", 1)[0]
    return "--hash=sha256:" in block.split("# via")[0]


def test_the_test_lock_pins_every_dependency_of_the_project_and_its_test_extras():
    assert problems("test.lock", "serve", "test", "ray", "cluster") == []


def test_the_bench_lock_pins_those_and_the_comparison_libraries_at_the_same_versions():
    assert problems("bench.lock", "serve", "test", "ray", "cluster", "bench") == []
    test, bench = pins(REPO / "requirements" / "test.lock"), pins(REPO / "requirements" / "bench.lock")
    assert {name: bench.get(name) for name in test} == test


def test_torch_is_the_cpu_build():
    assert str(pins(REPO / "requirements" / "test.lock")["torch"]) == "2.13.0+cpu"


def test_a_dependency_the_lock_lacks_is_named(tmp_path, monkeypatch):
    lock = (REPO / "requirements" / "test.lock").read_text()
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "test.lock").write_text(lock.replace("\nfilelock==", "\nnot-filelock=="))
    (tmp_path / "pyproject.toml").write_text((REPO / "pyproject.toml").read_text())
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    assert any("lacks filelock" in p for p in problems("test.lock", "serve", "test", "ray", "cluster"))



def test_the_locked_pytest_keeps_xdist_groups_on_one_worker(tmp_path):
    """The Ray tests share one worker through ``xdist_group`` (one Ray, one ``serve-cluster``): with pytest
    9.2 and pytest-xdist 3.8 the groups are silently ignored, so a lock that pulls such a pair goes red here."""
    import subprocess

    (tmp_path / "test_grouped.py").write_text(
        "import os\nimport pytest\npytestmark = pytest.mark.xdist_group('g')\n"
        + "".join(f"def test_{n}():\n    print('worker', os.environ['PYTEST_XDIST_WORKER'])\n" for n in range(6)))
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", "-p",
                           "no:cacheprovider", "test_grouped.py"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    ran = re.findall(r"\[(gw\d+)\].*PASSED test_grouped.py::test_\d+(@g)?", done.stdout)
    assert len(ran) == 6 and len({worker for worker, _ in ran}) == 1 and all(group for _, group in ran), done.stdout


if __name__ == "__main__":
    found = problems("test.lock", "serve", "test", "ray", "cluster") + problems("bench.lock", "serve", "test", "ray", "cluster", "bench")
    print("\n".join(found) or "the locks pin every dependency pyproject.toml names")
    sys.exit(1 if found else 0)
