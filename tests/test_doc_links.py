"""Every relative link of the README, the changelog and docs/*.md points to a file of the repository, and
every anchor it names is a heading of that file."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT

DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def links(path: Path) -> list[str]:
    """The targets of the Markdown links of ``path``, outside code blocks and inline code."""
    text = FENCE.sub("", path.read_text())
    text = re.sub(r"`[^`\n]*`", "", text)
    return LINK.findall(text)


def anchors(path: Path) -> set[str]:
    """GitHub's anchors of the headings of ``path``: lower case, punctuation dropped, spaces to hyphens."""
    found = set()
    for line in FENCE.sub("", path.read_text()).splitlines():
        heading = re.match(r"#+\s+(.*)", line)
        if heading:
            text = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower())
            found.add(text.replace(" ", "-"))
    return found


def relative(target: str) -> bool:
    return not re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE)


CASES = [(path, target) for path in DOCS if path.exists() for target in links(path) if relative(target)]


def test_the_documents_exist_and_link_somewhere():
    assert all(path.exists() for path in DOCS[:2]), "README.md and CHANGELOG.md are at the root"
    assert len(CASES) > 20


@pytest.mark.parametrize("path, target", CASES, ids=[f"{p.relative_to(ROOT)}->{t}" for p, t in CASES])
def test_every_relative_link_resolves(path, target):
    file, _, anchor = target.partition("#")
    destination = (path.parent / file).resolve() if file else path
    assert destination.exists(), f"{path.relative_to(ROOT)}: {target} points to no file"
    assert ROOT in destination.parents or destination == ROOT, f"{path.relative_to(ROOT)}: {target} leaves the tree"
    if anchor and destination.suffix == ".md":
        assert anchor in anchors(destination), f"{path.relative_to(ROOT)}: no heading of {file or path.name} " \
                                               f"has the anchor #{anchor}"


def test_the_documentation_index_lists_every_document():
    index = ROOT / "docs" / "README.md"
    listed = {(index.parent / target.partition("#")[0]).resolve() for target in links(index) if relative(target)}
    missing = [p.name for p in sorted((ROOT / "docs").glob("*.md")) if p != index and p.resolve() not in listed]
    assert not missing, f"docs/README.md does not link: {missing}"
