"""``openvx-nn nnapi-demo`` prints one timed row per operation and the result."""
from openvx_nn.cli import main


def test_nnapi_demo_prints_timings_and_result(capsys):
    assert main(["nnapi-demo", "--runs", "2"]) == 0
    text = capsys.readouterr().out
    for op in ("CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"):
        assert op in text
    assert text.count(" us\n") == 6
    assert "-> class" in text
