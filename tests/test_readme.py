"""Every code block of README.md and docs/*.md runs or is accounted for.

Python blocks run as written, in order, one namespace per file, in a scratch directory (``>>>`` blocks as
doctests). C blocks are compiled with the flags the README gives and run. A shell block's every line must
match a rule of ``SHELL``: run here, or not run for a stated reason (what runs it instead). A block that
matches no rule fails the test, naming the file and line: give it a rule, or make it Python.
"""
from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT, compile_c

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@dataclass(frozen=True)
class Block:
    path: Path
    line: int          # 1-based line of the block's first code line
    lang: str          # the fence's language ("" for an indented block)
    code: str

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The fenced and indented code blocks of a Markdown file (indented ones only after a blank line)."""
    lines = path.read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        fence = re.match(r"^(```+)\s*(\S*)", lines[i])
        if fence:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith(fence.group(1)))
            found.append(Block(path, i + 2, fence.group(2).lower(), "\n".join(lines[i + 1:end])))
            i = end + 1
            continue
        in_list = i > 0 and re.match(r"^\s*([-*]|\d+\.)\s", lines[i - 1] or "")
        if lines[i].startswith("    ") and lines[i].strip() and (i == 0 or not lines[i - 1].strip()) and not in_list:
            end = i
            while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
                end += 1
            while not lines[end - 1].strip():
                end -= 1
            found.append(Block(path, i + 1, "", textwrap.dedent("\n".join(lines[i:end]))))
            i = end
            continue
        i += 1
    return found


ALL = [b for path in DOCS for b in blocks(path)]
TEXT = ("text", "console-output", "")  # diagrams, formulas, printed output: not code
RUN = "run"

# (pattern a shell line must match, RUN or why it is not run here). Lines are matched after comments are cut.
SHELL: list[tuple[str, str]] = [
    (r"pip install \. && openvx-nn demo$|pip install \.$"
     r"|pip install -e \"\.\[test\]\" && python -m pytest -q -n auto --dist loadfile$",
     "the README's two commands: tests/test_first_run.py runs them in a fresh virtual environment"),
    (r"pip install (-e )?\"?\.\[\w+\]\"?( && python benchmarks/\w+\.py)?$", "installs an optional extra"),
    (r"python -m openvx_nn (demo|info)$|openvx-nn (demo|info)( --limit \d+)?$", RUN),
    (r"(python -m openvx_nn\.config|openvx-nn config) --cflags --libs$", RUN),
    (r"cc app\.c \$\((python -m openvx_nn\.config|openvx-nn config) --cflags --libs\) -o app$", RUN),
    (r"\./app$", RUN),
    (r"export PKG_CONFIG_PATH=.*|cc app\.c \$\(pkg-config --cflags --libs openvx\) -o app$",
     "pkg-config: tests/test_config.py checks the .pc file and its flags"),
    (r"python benchmarks/alexnet\.py( --smoke)?$|python benchmarks/\w+\.py( --\w+( \d+)?)?$",
     "benchmarks: tests/test_benchmarks.py runs their smoke modes"),
    (r"sh conformance/run\.sh.*", "the C conformance suite: tests/test_conformance.py runs it"),
    (r"sh tests/fuzz/run\.sh.*", "the long fuzz run: tests/fuzz runs 3 seeds of 20,000 calls"),
    (r"openvx-nn run .*", "tests/distributed/test_run_command.py and tests/coreml, tests/nnapi run the command"),
    (r"openvx-nn coreml .*", "tests/coreml/test_cli.py runs the command"),
    (r"openvx-nn nnapi-demo.*", "tests/nnapi/test_nnapi_demo.py runs it"),
    (r"openvx-nn warm.*", "tests/test_warm.py runs it"),
    (r"dask (scheduler|worker).*|ssh .*", "a second machine: tests/distributed runs the same on a local cluster"),
    (r"OPENVX_NN_\w+=\S+ .*", "an environment setting for a command shown above"),
]


def _shell_lines(block: Block) -> list[str]:
    return [line.split(" #")[0].strip() for line in block.code.splitlines()
            if line.strip() and not line.strip().startswith("#")]


def _rule(line: str) -> str | None:
    return next((action for pattern, action in SHELL if re.fullmatch(pattern, line)), None)


def _is_python(block: Block) -> bool:
    return block.lang in ("python", "py", "pycon")


def _is_shell(block: Block) -> bool:
    return block.lang in ("sh", "bash", "shell", "console") or (block.lang == "" and bool(_shell_lines(block)) and
                                                                 all(_rule(line) for line in _shell_lines(block)))


@pytest.mark.parametrize("block", [b for b in ALL if not _is_python(b) and b.lang not in ("c", "make", "cmake")],
                         ids=str)
def test_every_other_block_is_a_shell_block_with_a_rule_or_plain_text(block):
    if not _is_shell(block):
        looks_like_code = re.search(r"^(import|from) \w|^\w+ = |\(\)$", block.code, re.MULTILINE)
        assert block.lang in TEXT and not looks_like_code, \
            f"{block}: a code block that is neither Python, C nor a shell block with a rule:\n{block.code}"
        return
    for line in _shell_lines(block):
        assert _rule(line) is not None, f"{block}: no rule says how {line!r} is run or why not (SHELL)"


@pytest.mark.parametrize("path", sorted({b.path for b in ALL if _is_python(b)}), ids=lambda p: p.name)
def test_the_python_blocks_of_each_file_run_as_written(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    try:
        for block in (b for b in ALL if b.path == path and _is_python(b)):
            if ">>>" in block.code:
                test = doctest.DocTestParser().get_doctest(block.code, namespace, str(block), str(path),
                                                           block.line - 1)
                runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
                runner.run(test, clear_globs=False)
                result = runner.summarize(verbose=False)
                assert result.failed == 0 and result.attempted == len(test.examples), f"{block} failed as a doctest"
            else:
                code = compile(block.code, str(block), "exec")
                exec(code, namespace)  # noqa: S102 - the documentation's own examples
    finally:
        # A function the examples define (a user kernel's) lives on in the library's registries and holds this
        # namespace as its globals: emptied, it no longer keeps the examples' models, and their context, alive
        namespace.clear()


def test_the_readme_shows_a_complete_pythonic_example():
    pythonic = [b for b in ALL if b.path.name == "README.md" and ">>>" in b.code]
    assert pythonic and sum(line.startswith(">>>") for line in pythonic[0].code.splitlines()) >= 8


C_BLOCKS = [b for b in ALL if b.lang == "c"]


@pytest.mark.parametrize("block", C_BLOCKS, ids=str)
def test_every_c_block_compiles_and_runs(block):
    if "int main" not in block.code:
        pytest.skip(f"{block}: a fragment, not a program")
    result = subprocess.run([str(compile_c(block.code, "doc"))], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{block}:\n{result.stdout}\n{result.stderr}"


def test_the_shell_lines_marked_run_work_as_written(tmp_path):
    """``cc app.c ...`` and ``./app`` with the quickstart's C program as app.c, config and info."""
    program = next(b for b in C_BLOCKS if "int main" in b.code)
    (tmp_path / "app.c").write_text(program.code)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    lines = sorted({line for b in ALL if _is_shell(b) for line in _shell_lines(b) if _rule(line) == RUN},
                   key=lambda line: (line == "./app", "demo" in line))  # build before ./app; the demo last
    assert any(line.startswith("cc app.c") for line in lines) and "./app" in lines
    for line in lines:
        if "demo" in line:
            line += " --limit 8" if "--limit" not in line else ""
        result = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True,
                                timeout=600)
        assert result.returncode == 0, f"{line}\n{result.stdout}\n{result.stderr}"


def test_the_layout_table_names_every_command():
    from openvx_nn.cli import parser
    commands = set(next(a for a in parser()._actions if a.dest == "command").choices)
    layout = ROOT / "docs" / "architecture.md"
    row = next(line for line in layout.read_text().splitlines() if line.startswith("| `openvx_nn/cli.py`"))
    missing = {c for c in commands if re.search(rf"\b{re.escape(c)}\b", row) is None}
    assert not missing, f"docs/architecture.md's row for the CLI does not name: {sorted(missing)}"

