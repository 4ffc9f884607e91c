"""The README's Pythonic example runs as written (a doctest of its section)."""
from __future__ import annotations

import doctest

from conftest import ROOT

SECTION = "## From Python, the Pythonic way"


def readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index(title)
    end = text.find("\n## ", start + len(title))
    section = text[start:end if end >= 0 else len(text)]
    # A code fence ends an example's expected output, as a blank line would.
    return "\n".join("" if line.startswith("```") else line for line in section.splitlines())


def test_the_pythonic_example_of_the_readme_runs_as_a_doctest():
    section = readme_section(SECTION)
    test = doctest.DocTestParser().get_doctest(section, {}, "README.md", str(ROOT / "README.md"), 0)
    assert len(test.examples) >= 8, "the section should hold the whole example as >>> lines"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted == len(test.examples)
