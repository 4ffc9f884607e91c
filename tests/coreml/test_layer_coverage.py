"""Which layer types of the NeuralNetwork specification ``openvx_nn.coreml`` lowers: every type of the ``layer``
oneof has a lowering except the ones listed here as not run yet (docs/coreml.md names the same), so a new
lowering or a lost one shows as a failure until this list and the docs say so."""
from __future__ import annotations

from coremltools.proto import NeuralNetwork_pb2

from openvx_nn.coreml.lowering import LOWERINGS

NOT_RUN = {
    "custom", "rangeDynamic", "reshapeDynamic",
    "sliceDynamic", "fillDynamic", "broadcastToDynamic", "whereNonZero", "NonMaximumSuppression",
    "randomNormalDynamic", "randomUniformDynamic", "randomBernoulliDynamic",
}


def test_every_layer_type_but_the_listed_ones_has_a_lowering():
    kinds = {f.name for f in NeuralNetwork_pb2.NeuralNetworkLayer.DESCRIPTOR.oneofs_by_name["layer"].fields}
    assert len(kinds) == 158  # the seed's 157 *LayerParams and activation (ActivationParams)
    assert set(LOWERINGS) <= kinds, sorted(set(LOWERINGS) - kinds)
    assert kinds - set(LOWERINGS) == NOT_RUN
