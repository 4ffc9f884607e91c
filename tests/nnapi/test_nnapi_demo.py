"""``openvx-nn nnapi-demo`` prints one timed row per operation and the result."""
from nnapi_harness import collect_garbage  # noqa: F401 - an autouse fixture

from openvx_nn.cli import main


def test_nnapi_demo_prints_timings_and_result(capsys):
    assert main(["nnapi-demo", "--runs", "2"]) == 0
    text = capsys.readouterr().out
    for op in ("CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"):
        assert op in text
    assert text.count(" us\n") == 6
    assert "-> class" in text


def test_the_example_of_docs_nnapi_md_runs_and_is_right():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "nnapi.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.DOTALL).group(1)
    scope: dict = {}
    exec(compile(code, "docs/nnapi.md", "exec"), scope)  # noqa: S102 - the documented example itself
    # 2x2 windows of 0..8 at scale 0.5, filter taps (132 - 128) * 0.25 = 1, bias 8 * 0.125 = 1
    assert scope["out"].reshape(-1).tolist() == [5, 7, 11, 13]
