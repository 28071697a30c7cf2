"""The browser code as modules: every file of ours under 150 lines, every import naming a module that is
shipped and a name that module exports, no state passed through globals (``window.embedsearchMap`` apart,
the one object tests read), and pages that load our code only as modules through an import map."""

from __future__ import annotations

import re
from pathlib import Path

from embedsearch.web import FOLDER, shipped

OURS = sorted(p for folder in ("page", "map", "shared") for p in (FOLDER / folder).glob("*.js"))
IMPORT = re.compile(r'^import\s+(?:\{([^}]*)\}|([\w$]+))\s+from\s+"([^"]+)";', re.M)
DYNAMIC = re.compile(r'import\("([^"]+)"\)')


def exported(file: Path) -> set[str]:
    text = file.read_text()
    names = set(re.findall(r"^export\s+(?:async\s+)?(?:function|class)\s+([\w$]+)", text, re.M))
    for line in re.findall(r"^export\s+(?:const|let)\s+.*$", text, re.M):  # ``export const A = 1, B = 2``
        names |= set(re.findall(r"(?:^export\s+(?:const|let)\s+|,\s*)([\w$]+)\s*=(?!=)", line))
    for group in re.findall(r"export\s*\{([^}]*)\}", text):
        names |= {part.split(" as ")[-1].strip() for part in group.split(",") if part.strip()}
    return names


def test_the_page_and_the_map_are_modules_of_at_most_150_lines():
    assert len(OURS) >= 20
    long = {p.relative_to(FOLDER).as_posix(): n for p in OURS if (n := len(p.read_text().splitlines())) > 150}
    assert long == {}


def test_every_import_names_a_shipped_module_and_what_it_exports():
    files = shipped()
    problems = []
    for file in OURS:
        text = file.read_text()
        for names, default, source in IMPORT.findall(text):
            target = source.removeprefix("embedsearch/")
            if not source.startswith("embedsearch/") or target not in files:
                problems.append(f"{file.name}: {source} is not shipped")
                continue
            wanted = {n.split(" as ")[0].strip() for n in names.split(",") if n.strip()} | ({"default"} if default else set())
            missing = wanted - exported(FOLDER / target)
            problems += [f"{file.name}: {source} does not export {sorted(missing)}"] if missing else []
        for source in DYNAMIC.findall(text):
            problems += [] if source.removeprefix("embedsearch/") in files else [f"{file.name}: {source} is not shipped"]
    assert problems == []


def test_no_module_shares_state_through_globals():
    """Modules pass what they share by imports: no global is set but the page object tests read, none is
    probed for (``typeof x !== "undefined"``), and the only global read is plotly's (no module build)."""
    problems = []
    for file in OURS:
        text = file.read_text()
        problems += [f"{file.name}: sets window.{name}" for name in re.findall(r"window\.(\w+)\s*=[^=]", text)
                     if name != "embedsearchMap"]
        problems += [f"{file.name}: probes {name}" for name in re.findall(r"typeof\s+(\w+)\s*[!=]==\s*\"undefined\"", text)]
        problems += [f"{file.name}: reads globalThis.{name}" for name in re.findall(r"globalThis\.(\w+)", text)
                     if name != "Plotly"]
        assert not re.search(r"^\s*(?:var|let|const|function)\s", text, re.M) or "export" in text or \
            file.name in ("main.js", "over_time.js"), f"{file.name}: a script with top-level names and no exports"
    assert problems == []


def test_pages_load_our_code_as_modules_through_an_import_map():
    for page in ("page/index.html", "map/map_page.html"):
        html = (FOLDER / page).read_text()
        assert '<script type="importmap">' in html
        classic = re.findall(r'<script(?![^>]*type="(?:module|importmap|application/json)")[^>]*>', html)
        assert classic == [], f"{page}: {classic}"
        assert html.index('type="importmap"') < html.index('type="module"')
