"""TFLite's flatbuffer schema as our reader needs it. Written by ``tools/make_tflite_tables.py`` from
the schema module LiteRT ships; do not edit by hand."""

TABLES = {
    # table: ((field, vtable slot, type, default), ...); type: a struct format for a scalar, "s" a string,
    # "t:Name" a table, "u" the options union's value; a leading "[" makes it a vector
    'Model': (
        ('version', 0, 'I', 0), ('operatorCodes', 1, '[t:OperatorCode', None),
        ('subgraphs', 2, '[t:SubGraph', None), ('description', 3, 's', None), ('buffers', 4, '[t:Buffer', None),
        ('metadataBuffer', 5, '[i', None), ('metadata', 6, '[t:Metadata', None),
        ('signatureDefs', 7, '[t:SignatureDef', None), ('externalBufferGroups', 8, '[t:ExternalBufferGroup', None),
        ('externalBuffers', 9, '[t:ExternalBuffer', None),
    ),
    'SubGraph': (
        ('tensors', 0, '[t:Tensor', None), ('inputs', 1, '[i', None), ('outputs', 2, '[i', None),
        ('operators', 3, '[t:Operator', None), ('name', 4, 's', None), ('debugMetadataIndex', 5, 'i', -1),
    ),
    'Tensor': (
        ('shape', 0, '[i', None), ('type', 1, 'b', 0), ('buffer', 2, 'I', 0), ('name', 3, 's', None),
        ('quantization', 4, 't:QuantizationParameters', None), ('isVariable', 5, '?', False),
        ('sparsity', 6, 't:SparsityParameters', None), ('shapeSignature', 7, '[i', None),
        ('hasRank', 8, '?', False), ('variantTensors', 9, '[t:VariantSubType', None),
        ('externalBuffer', 10, 'I', 0),
    ),
    'QuantizationParameters': (
        ('min', 0, '[f', None), ('max', 1, '[f', None), ('scale', 2, '[f', None), ('zeroPoint', 3, '[q', None),
        ('detailsType', 4, 'B', 0), ('details', 5, 'u', None), ('quantizedDimension', 6, 'i', 0),
    ),
    'Operator': (
        ('opcodeIndex', 0, 'I', 0), ('inputs', 1, '[i', None), ('outputs', 2, '[i', None),
        ('builtinOptionsType', 3, 'B', 0), ('builtinOptions', 4, 'u', None), ('customOptions', 5, '[B', None),
        ('customOptionsFormat', 6, 'b', 0), ('mutatingVariableInputs', 7, '[?', None),
        ('intermediates', 8, '[i', None), ('largeCustomOptionsOffset', 9, 'Q', 0),
        ('largeCustomOptionsSize', 10, 'Q', 0), ('builtinOptions2Type', 11, 'B', 0),
        ('builtinOptions2', 12, 'u', None), ('debugMetadataIndex', 13, 'i', -1),
    ),
    'OperatorCode': (
        ('deprecatedBuiltinCode', 0, 'b', 0), ('customCode', 1, 's', None), ('version', 2, 'i', 1),
        ('builtinCode', 3, 'i', 0),
    ),
    'Buffer': (
        ('data', 0, '[B', None), ('offset', 1, 'Q', 0), ('size', 2, 'Q', 0),
    ),
    'Conv2DOptions': (
        ('padding', 0, 'b', 0), ('strideW', 1, 'i', 0), ('strideH', 2, 'i', 0),
        ('fusedActivationFunction', 3, 'b', 0), ('dilationWFactor', 4, 'i', 1), ('dilationHFactor', 5, 'i', 1),
        ('quantizedBiasType', 6, 'b', 0),
    ),
    'DepthwiseConv2DOptions': (
        ('padding', 0, 'b', 0), ('strideW', 1, 'i', 0), ('strideH', 2, 'i', 0), ('depthMultiplier', 3, 'i', 0),
        ('fusedActivationFunction', 4, 'b', 0), ('dilationWFactor', 5, 'i', 1), ('dilationHFactor', 6, 'i', 1),
    ),
    'ConcatEmbeddingsOptions': (
        ('numChannels', 0, 'i', 0), ('numColumnsPerChannel', 1, '[i', None),
        ('embeddingDimPerChannel', 2, '[i', None),
    ),
    'LSHProjectionOptions': (
        ('type', 0, 'b', 0),
    ),
    'Pool2DOptions': (
        ('padding', 0, 'b', 0), ('strideW', 1, 'i', 0), ('strideH', 2, 'i', 0), ('filterWidth', 3, 'i', 0),
        ('filterHeight', 4, 'i', 0), ('fusedActivationFunction', 5, 'b', 0),
    ),
    'SVDFOptions': (
        ('rank', 0, 'i', 0), ('fusedActivationFunction', 1, 'b', 0), ('asymmetricQuantizeInputs', 2, '?', False),
    ),
    'RNNOptions': (
        ('fusedActivationFunction', 0, 'b', 0), ('asymmetricQuantizeInputs', 1, '?', False),
    ),
    'FullyConnectedOptions': (
        ('fusedActivationFunction', 0, 'b', 0), ('weightsFormat', 1, 'b', 0), ('keepNumDims', 2, '?', False),
        ('asymmetricQuantizeInputs', 3, '?', False), ('quantizedBiasType', 4, 'b', 0), ('quantSpec', 5, '[B', None),
    ),
    'SoftmaxOptions': (
        ('beta', 0, 'f', 0.0),
    ),
    'ConcatenationOptions': (
        ('axis', 0, 'i', 0), ('fusedActivationFunction', 1, 'b', 0),
    ),
    'AddOptions': (
        ('fusedActivationFunction', 0, 'b', 0), ('potScaleInt16', 1, '?', True),
    ),
    'L2NormOptions': (
        ('fusedActivationFunction', 0, 'b', 0),
    ),
    'LocalResponseNormalizationOptions': (
        ('radius', 0, 'i', 0), ('bias', 1, 'f', 0.0), ('alpha', 2, 'f', 0.0), ('beta', 3, 'f', 0.0),
    ),
    'LSTMOptions': (
        ('fusedActivationFunction', 0, 'b', 0), ('cellClip', 1, 'f', 0.0), ('projClip', 2, 'f', 0.0),
        ('kernelType', 3, 'b', 0), ('asymmetricQuantizeInputs', 4, '?', False),
    ),
    'ResizeBilinearOptions': (
        ('alignCorners', 2, '?', False), ('halfPixelCenters', 3, '?', False),
    ),
    'CallOptions': (
        ('subgraph', 0, 'I', 0),
    ),
    'ReshapeOptions': (
        ('newShape', 0, '[i', None),
    ),
    'SkipGramOptions': (
        ('ngramSize', 0, 'i', 0), ('maxSkipSize', 1, 'i', 0), ('includeAllNgrams', 2, '?', False),
    ),
    'SpaceToDepthOptions': (
        ('blockSize', 0, 'i', 0),
    ),
    'EmbeddingLookupSparseOptions': (
        ('combiner', 0, 'b', 0),
    ),
    'MulOptions': (
        ('fusedActivationFunction', 0, 'b', 0),
    ),
    'PadOptions': (
    ),
    'GatherOptions': (
        ('axis', 0, 'i', 0), ('batchDims', 1, 'i', 0),
    ),
    'BatchToSpaceNDOptions': (
    ),
    'SpaceToBatchNDOptions': (
    ),
    'TransposeOptions': (
    ),
    'ReducerOptions': (
        ('keepDims', 0, '?', False),
    ),
    'SubOptions': (
        ('fusedActivationFunction', 0, 'b', 0), ('potScaleInt16', 1, '?', True),
    ),
    'DivOptions': (
        ('fusedActivationFunction', 0, 'b', 0),
    ),
    'SqueezeOptions': (
        ('squeezeDims', 0, '[i', None),
    ),
    'SequenceRNNOptions': (
        ('timeMajor', 0, '?', False), ('fusedActivationFunction', 1, 'b', 0),
        ('asymmetricQuantizeInputs', 2, '?', False),
    ),
    'StridedSliceOptions': (
        ('beginMask', 0, 'i', 0), ('endMask', 1, 'i', 0), ('ellipsisMask', 2, 'i', 0), ('newAxisMask', 3, 'i', 0),
        ('shrinkAxisMask', 4, 'i', 0), ('offset', 5, '?', False),
    ),
    'ExpOptions': (
    ),
    'TopKV2Options': (
    ),
    'SplitOptions': (
        ('numSplits', 0, 'i', 0),
    ),
    'LogSoftmaxOptions': (
    ),
    'CastOptions': (
        ('inDataType', 0, 'b', 0), ('outDataType', 1, 'b', 0),
    ),
    'DequantizeOptions': (
    ),
    'MaximumMinimumOptions': (
    ),
    'ArgMaxOptions': (
        ('outputType', 0, 'b', 0),
    ),
    'LessOptions': (
    ),
    'NegOptions': (
    ),
    'PadV2Options': (
    ),
    'GreaterOptions': (
    ),
    'GreaterEqualOptions': (
    ),
    'LessEqualOptions': (
    ),
    'SelectOptions': (
    ),
    'SliceOptions': (
    ),
    'TransposeConvOptions': (
        ('padding', 0, 'b', 0), ('strideW', 1, 'i', 0), ('strideH', 2, 'i', 0),
        ('fusedActivationFunction', 3, 'b', 0), ('quantizedBiasType', 4, 'b', 0),
    ),
    'SparseToDenseOptions': (
        ('validateIndices', 0, '?', False),
    ),
    'TileOptions': (
    ),
    'ExpandDimsOptions': (
    ),
    'EqualOptions': (
    ),
    'NotEqualOptions': (
    ),
    'ShapeOptions': (
        ('outType', 0, 'b', 0),
    ),
    'PowOptions': (
    ),
    'ArgMinOptions': (
        ('outputType', 0, 'b', 0),
    ),
    'FakeQuantOptions': (
        ('min', 0, 'f', 0.0), ('max', 1, 'f', 0.0), ('numBits', 2, 'i', 0), ('narrowRange', 3, '?', False),
    ),
    'PackOptions': (
        ('valuesCount', 0, 'i', 0), ('axis', 1, 'i', 0),
    ),
    'LogicalOrOptions': (
    ),
    'OneHotOptions': (
        ('axis', 0, 'i', 0),
    ),
    'LogicalAndOptions': (
    ),
    'LogicalNotOptions': (
    ),
    'UnpackOptions': (
        ('num', 0, 'i', 0), ('axis', 1, 'i', 0),
    ),
    'FloorDivOptions': (
    ),
    'SquareOptions': (
    ),
    'ZerosLikeOptions': (
    ),
    'FillOptions': (
    ),
    'BidirectionalSequenceLSTMOptions': (
        ('fusedActivationFunction', 0, 'b', 0), ('cellClip', 1, 'f', 0.0), ('projClip', 2, 'f', 0.0),
        ('mergeOutputs', 3, '?', False), ('timeMajor', 4, '?', True), ('asymmetricQuantizeInputs', 5, '?', False),
    ),
    'BidirectionalSequenceRNNOptions': (
        ('timeMajor', 0, '?', False), ('fusedActivationFunction', 1, 'b', 0), ('mergeOutputs', 2, '?', False),
        ('asymmetricQuantizeInputs', 3, '?', False),
    ),
    'UnidirectionalSequenceLSTMOptions': (
        ('fusedActivationFunction', 0, 'b', 0), ('cellClip', 1, 'f', 0.0), ('projClip', 2, 'f', 0.0),
        ('timeMajor', 3, '?', False), ('asymmetricQuantizeInputs', 4, '?', False),
        ('diagonalRecurrentTensors', 5, '?', False),
    ),
    'FloorModOptions': (
    ),
    'RangeOptions': (
    ),
    'ResizeNearestNeighborOptions': (
        ('alignCorners', 0, '?', False), ('halfPixelCenters', 1, '?', False),
    ),
    'LeakyReluOptions': (
        ('alpha', 0, 'f', 0.0),
    ),
    'SquaredDifferenceOptions': (
    ),
    'MirrorPadOptions': (
        ('mode', 0, 'b', 0),
    ),
    'AbsOptions': (
    ),
    'SplitVOptions': (
        ('numSplits', 0, 'i', 0),
    ),
    'UniqueOptions': (
        ('idxOutType', 0, 'b', 2),
    ),
    'ReverseV2Options': (
    ),
    'AddNOptions': (
    ),
    'GatherNdOptions': (
    ),
    'CosOptions': (
    ),
    'WhereOptions': (
    ),
    'RankOptions': (
    ),
    'ReverseSequenceOptions': (
        ('seqDim', 0, 'i', 0), ('batchDim', 1, 'i', 0),
    ),
    'MatrixDiagOptions': (
    ),
    'QuantizeOptions': (
    ),
    'MatrixSetDiagOptions': (
    ),
    'HardSwishOptions': (
    ),
    'IfOptions': (
        ('thenSubgraphIndex', 0, 'i', 0), ('elseSubgraphIndex', 1, 'i', 0),
    ),
    'WhileOptions': (
        ('condSubgraphIndex', 0, 'i', 0), ('bodySubgraphIndex', 1, 'i', 0),
    ),
    'DepthToSpaceOptions': (
        ('blockSize', 0, 'i', 0),
    ),
    'NonMaxSuppressionV4Options': (
    ),
    'NonMaxSuppressionV5Options': (
    ),
    'ScatterNdOptions': (
    ),
    'SelectV2Options': (
    ),
    'DensifyOptions': (
    ),
    'SegmentSumOptions': (
    ),
    'BatchMatMulOptions': (
        ('adjX', 0, '?', False), ('adjY', 1, '?', False), ('asymmetricQuantizeInputs', 2, '?', False),
    ),
    'CumsumOptions': (
        ('exclusive', 0, '?', False), ('reverse', 1, '?', False),
    ),
    'CallOnceOptions': (
        ('initSubgraphIndex', 0, 'i', 0),
    ),
    'BroadcastToOptions': (
    ),
    'Rfft2dOptions': (
    ),
    'Conv3DOptions': (
        ('padding', 0, 'b', 0), ('strideD', 1, 'i', 0), ('strideW', 2, 'i', 0), ('strideH', 3, 'i', 0),
        ('fusedActivationFunction', 4, 'b', 0), ('dilationDFactor', 5, 'i', 1), ('dilationWFactor', 6, 'i', 1),
        ('dilationHFactor', 7, 'i', 1),
    ),
    'HashtableOptions': (
        ('tableId', 0, 'i', 0), ('keyDtype', 1, 'b', 0), ('valueDtype', 2, 'b', 0),
    ),
    'HashtableFindOptions': (
    ),
    'HashtableImportOptions': (
    ),
    'HashtableSizeOptions': (
    ),
    'VarHandleOptions': (
        ('container', 0, 's', None), ('sharedName', 1, 's', None),
    ),
    'ReadVariableOptions': (
    ),
    'AssignVariableOptions': (
    ),
    'RandomOptions': (
        ('seed', 0, 'q', 0), ('seed2', 1, 'q', 0),
    ),
    'BucketizeOptions': (
        ('boundaries', 0, '[f', None),
    ),
    'GeluOptions': (
        ('approximate', 0, '?', False),
    ),
    'DynamicUpdateSliceOptions': (
    ),
    'UnsortedSegmentProdOptions': (
    ),
    'UnsortedSegmentMaxOptions': (
    ),
    'UnsortedSegmentMinOptions': (
    ),
    'UnsortedSegmentSumOptions': (
    ),
    'ATan2Options': (
    ),
    'SignOptions': (
    ),
    'BitcastOptions': (
    ),
    'BitwiseXorOptions': (
    ),
    'RightShiftOptions': (
    ),
}

BUILTIN_OPTIONS = {
    1: 'Conv2DOptions',
    2: 'DepthwiseConv2DOptions',
    3: 'ConcatEmbeddingsOptions',
    4: 'LSHProjectionOptions',
    5: 'Pool2DOptions',
    6: 'SVDFOptions',
    7: 'RNNOptions',
    8: 'FullyConnectedOptions',
    9: 'SoftmaxOptions',
    10: 'ConcatenationOptions',
    11: 'AddOptions',
    12: 'L2NormOptions',
    13: 'LocalResponseNormalizationOptions',
    14: 'LSTMOptions',
    15: 'ResizeBilinearOptions',
    16: 'CallOptions',
    17: 'ReshapeOptions',
    18: 'SkipGramOptions',
    19: 'SpaceToDepthOptions',
    20: 'EmbeddingLookupSparseOptions',
    21: 'MulOptions',
    22: 'PadOptions',
    23: 'GatherOptions',
    24: 'BatchToSpaceNDOptions',
    25: 'SpaceToBatchNDOptions',
    26: 'TransposeOptions',
    27: 'ReducerOptions',
    28: 'SubOptions',
    29: 'DivOptions',
    30: 'SqueezeOptions',
    31: 'SequenceRNNOptions',
    32: 'StridedSliceOptions',
    33: 'ExpOptions',
    34: 'TopKV2Options',
    35: 'SplitOptions',
    36: 'LogSoftmaxOptions',
    37: 'CastOptions',
    38: 'DequantizeOptions',
    39: 'MaximumMinimumOptions',
    40: 'ArgMaxOptions',
    41: 'LessOptions',
    42: 'NegOptions',
    43: 'PadV2Options',
    44: 'GreaterOptions',
    45: 'GreaterEqualOptions',
    46: 'LessEqualOptions',
    47: 'SelectOptions',
    48: 'SliceOptions',
    49: 'TransposeConvOptions',
    50: 'SparseToDenseOptions',
    51: 'TileOptions',
    52: 'ExpandDimsOptions',
    53: 'EqualOptions',
    54: 'NotEqualOptions',
    55: 'ShapeOptions',
    56: 'PowOptions',
    57: 'ArgMinOptions',
    58: 'FakeQuantOptions',
    59: 'PackOptions',
    60: 'LogicalOrOptions',
    61: 'OneHotOptions',
    62: 'LogicalAndOptions',
    63: 'LogicalNotOptions',
    64: 'UnpackOptions',
    65: 'FloorDivOptions',
    66: 'SquareOptions',
    67: 'ZerosLikeOptions',
    68: 'FillOptions',
    69: 'BidirectionalSequenceLSTMOptions',
    70: 'BidirectionalSequenceRNNOptions',
    71: 'UnidirectionalSequenceLSTMOptions',
    72: 'FloorModOptions',
    73: 'RangeOptions',
    74: 'ResizeNearestNeighborOptions',
    75: 'LeakyReluOptions',
    76: 'SquaredDifferenceOptions',
    77: 'MirrorPadOptions',
    78: 'AbsOptions',
    79: 'SplitVOptions',
    80: 'UniqueOptions',
    81: 'ReverseV2Options',
    82: 'AddNOptions',
    83: 'GatherNdOptions',
    84: 'CosOptions',
    85: 'WhereOptions',
    86: 'RankOptions',
    87: 'ReverseSequenceOptions',
    88: 'MatrixDiagOptions',
    89: 'QuantizeOptions',
    90: 'MatrixSetDiagOptions',
    91: 'HardSwishOptions',
    92: 'IfOptions',
    93: 'WhileOptions',
    94: 'DepthToSpaceOptions',
    95: 'NonMaxSuppressionV4Options',
    96: 'NonMaxSuppressionV5Options',
    97: 'ScatterNdOptions',
    98: 'SelectV2Options',
    99: 'DensifyOptions',
    100: 'SegmentSumOptions',
    101: 'BatchMatMulOptions',
    102: 'CumsumOptions',
    103: 'CallOnceOptions',
    104: 'BroadcastToOptions',
    105: 'Rfft2dOptions',
    106: 'Conv3DOptions',
    107: 'HashtableOptions',
    108: 'HashtableFindOptions',
    109: 'HashtableImportOptions',
    110: 'HashtableSizeOptions',
    111: 'VarHandleOptions',
    112: 'ReadVariableOptions',
    113: 'AssignVariableOptions',
    114: 'RandomOptions',
    115: 'BucketizeOptions',
    116: 'GeluOptions',
    117: 'DynamicUpdateSliceOptions',
    118: 'UnsortedSegmentProdOptions',
    119: 'UnsortedSegmentMaxOptions',
    120: 'UnsortedSegmentMinOptions',
    121: 'UnsortedSegmentSumOptions',
    122: 'ATan2Options',
    123: 'SignOptions',
    124: 'BitcastOptions',
    125: 'BitwiseXorOptions',
    126: 'RightShiftOptions',
}
"""The options union's members by their type code."""

BUILTIN_OPERATORS = {
    0: 'ADD',
    1: 'AVERAGE_POOL_2D',
    2: 'CONCATENATION',
    3: 'CONV_2D',
    4: 'DEPTHWISE_CONV_2D',
    5: 'DEPTH_TO_SPACE',
    6: 'DEQUANTIZE',
    7: 'EMBEDDING_LOOKUP',
    8: 'FLOOR',
    9: 'FULLY_CONNECTED',
    10: 'HASHTABLE_LOOKUP',
    11: 'L2_NORMALIZATION',
    12: 'L2_POOL_2D',
    13: 'LOCAL_RESPONSE_NORMALIZATION',
    14: 'LOGISTIC',
    15: 'LSH_PROJECTION',
    16: 'LSTM',
    17: 'MAX_POOL_2D',
    18: 'MUL',
    19: 'RELU',
    20: 'RELU_N1_TO_1',
    21: 'RELU6',
    22: 'RESHAPE',
    23: 'RESIZE_BILINEAR',
    24: 'RNN',
    25: 'SOFTMAX',
    26: 'SPACE_TO_DEPTH',
    27: 'SVDF',
    28: 'TANH',
    29: 'CONCAT_EMBEDDINGS',
    30: 'SKIP_GRAM',
    31: 'CALL',
    32: 'CUSTOM',
    33: 'EMBEDDING_LOOKUP_SPARSE',
    34: 'PAD',
    35: 'UNIDIRECTIONAL_SEQUENCE_RNN',
    36: 'GATHER',
    37: 'BATCH_TO_SPACE_ND',
    38: 'SPACE_TO_BATCH_ND',
    39: 'TRANSPOSE',
    40: 'MEAN',
    41: 'SUB',
    42: 'DIV',
    43: 'SQUEEZE',
    44: 'UNIDIRECTIONAL_SEQUENCE_LSTM',
    45: 'STRIDED_SLICE',
    46: 'BIDIRECTIONAL_SEQUENCE_RNN',
    47: 'EXP',
    48: 'TOPK_V2',
    49: 'SPLIT',
    50: 'LOG_SOFTMAX',
    51: 'DELEGATE',
    52: 'BIDIRECTIONAL_SEQUENCE_LSTM',
    53: 'CAST',
    54: 'PRELU',
    55: 'MAXIMUM',
    56: 'ARG_MAX',
    57: 'MINIMUM',
    58: 'LESS',
    59: 'NEG',
    60: 'PADV2',
    61: 'GREATER',
    62: 'GREATER_EQUAL',
    63: 'LESS_EQUAL',
    64: 'SELECT',
    65: 'SLICE',
    66: 'SIN',
    67: 'TRANSPOSE_CONV',
    68: 'SPARSE_TO_DENSE',
    69: 'TILE',
    70: 'EXPAND_DIMS',
    71: 'EQUAL',
    72: 'NOT_EQUAL',
    73: 'LOG',
    74: 'SUM',
    75: 'SQRT',
    76: 'RSQRT',
    77: 'SHAPE',
    78: 'POW',
    79: 'ARG_MIN',
    80: 'FAKE_QUANT',
    81: 'REDUCE_PROD',
    82: 'REDUCE_MAX',
    83: 'PACK',
    84: 'LOGICAL_OR',
    85: 'ONE_HOT',
    86: 'LOGICAL_AND',
    87: 'LOGICAL_NOT',
    88: 'UNPACK',
    89: 'REDUCE_MIN',
    90: 'FLOOR_DIV',
    91: 'REDUCE_ANY',
    92: 'SQUARE',
    93: 'ZEROS_LIKE',
    94: 'FILL',
    95: 'FLOOR_MOD',
    96: 'RANGE',
    97: 'RESIZE_NEAREST_NEIGHBOR',
    98: 'LEAKY_RELU',
    99: 'SQUARED_DIFFERENCE',
    100: 'MIRROR_PAD',
    101: 'ABS',
    102: 'SPLIT_V',
    103: 'UNIQUE',
    104: 'CEIL',
    105: 'REVERSE_V2',
    106: 'ADD_N',
    107: 'GATHER_ND',
    108: 'COS',
    109: 'WHERE',
    110: 'RANK',
    111: 'ELU',
    112: 'REVERSE_SEQUENCE',
    113: 'MATRIX_DIAG',
    114: 'QUANTIZE',
    115: 'MATRIX_SET_DIAG',
    116: 'ROUND',
    117: 'HARD_SWISH',
    118: 'IF',
    119: 'WHILE',
    120: 'NON_MAX_SUPPRESSION_V4',
    121: 'NON_MAX_SUPPRESSION_V5',
    122: 'SCATTER_ND',
    123: 'SELECT_V2',
    124: 'DENSIFY',
    125: 'SEGMENT_SUM',
    126: 'BATCH_MATMUL',
    127: 'PLACEHOLDER_FOR_GREATER_OP_CODES',
    128: 'CUMSUM',
    129: 'CALL_ONCE',
    130: 'BROADCAST_TO',
    131: 'RFFT2D',
    132: 'CONV_3D',
    133: 'IMAG',
    134: 'REAL',
    135: 'COMPLEX_ABS',
    136: 'HASHTABLE',
    137: 'HASHTABLE_FIND',
    138: 'HASHTABLE_IMPORT',
    139: 'HASHTABLE_SIZE',
    140: 'REDUCE_ALL',
    141: 'CONV_3D_TRANSPOSE',
    142: 'VAR_HANDLE',
    143: 'READ_VARIABLE',
    144: 'ASSIGN_VARIABLE',
    145: 'BROADCAST_ARGS',
    146: 'RANDOM_STANDARD_NORMAL',
    147: 'BUCKETIZE',
    148: 'RANDOM_UNIFORM',
    149: 'MULTINOMIAL',
    150: 'GELU',
    151: 'DYNAMIC_UPDATE_SLICE',
    152: 'RELU_0_TO_1',
    153: 'UNSORTED_SEGMENT_PROD',
    154: 'UNSORTED_SEGMENT_MAX',
    155: 'UNSORTED_SEGMENT_SUM',
    156: 'ATAN2',
    157: 'UNSORTED_SEGMENT_MIN',
    158: 'SIGN',
    159: 'BITCAST',
    160: 'BITWISE_XOR',
    161: 'RIGHT_SHIFT',
    162: 'STABLEHLO_LOGISTIC',
    163: 'STABLEHLO_ADD',
    164: 'STABLEHLO_DIVIDE',
    165: 'STABLEHLO_MULTIPLY',
    166: 'STABLEHLO_MAXIMUM',
    167: 'STABLEHLO_RESHAPE',
    168: 'STABLEHLO_CLAMP',
    169: 'STABLEHLO_CONCATENATE',
    170: 'STABLEHLO_BROADCAST_IN_DIM',
    171: 'STABLEHLO_CONVOLUTION',
    172: 'STABLEHLO_SLICE',
    173: 'STABLEHLO_CUSTOM_CALL',
    174: 'STABLEHLO_REDUCE',
    175: 'STABLEHLO_ABS',
    176: 'STABLEHLO_AND',
    177: 'STABLEHLO_COSINE',
    178: 'STABLEHLO_EXPONENTIAL',
    179: 'STABLEHLO_FLOOR',
    180: 'STABLEHLO_LOG',
    181: 'STABLEHLO_MINIMUM',
    182: 'STABLEHLO_NEGATE',
    183: 'STABLEHLO_OR',
    184: 'STABLEHLO_POWER',
    185: 'STABLEHLO_REMAINDER',
    186: 'STABLEHLO_RSQRT',
    187: 'STABLEHLO_SELECT',
    188: 'STABLEHLO_SUBTRACT',
    189: 'STABLEHLO_TANH',
    190: 'STABLEHLO_SCATTER',
    191: 'STABLEHLO_COMPARE',
    192: 'STABLEHLO_CONVERT',
    193: 'STABLEHLO_DYNAMIC_SLICE',
    194: 'STABLEHLO_DYNAMIC_UPDATE_SLICE',
    195: 'STABLEHLO_PAD',
    196: 'STABLEHLO_IOTA',
    197: 'STABLEHLO_DOT_GENERAL',
    198: 'STABLEHLO_REDUCE_WINDOW',
    199: 'STABLEHLO_SORT',
    200: 'STABLEHLO_WHILE',
    201: 'STABLEHLO_GATHER',
    202: 'STABLEHLO_TRANSPOSE',
    203: 'DILATE',
    204: 'STABLEHLO_RNG_BIT_GENERATOR',
    205: 'REDUCE_WINDOW',
    206: 'STABLEHLO_COMPOSITE',
    207: 'STABLEHLO_SHIFT_LEFT',
    208: 'STABLEHLO_CBRT',
    209: 'STABLEHLO_CASE',
}

TENSOR_TYPES = {
    0: 'FLOAT32',
    1: 'FLOAT16',
    2: 'INT32',
    3: 'UINT8',
    4: 'INT64',
    5: 'STRING',
    6: 'BOOL',
    7: 'INT16',
    8: 'COMPLEX64',
    9: 'INT8',
    10: 'FLOAT64',
    11: 'COMPLEX128',
    12: 'UINT64',
    13: 'RESOURCE',
    14: 'VARIANT',
    15: 'UINT32',
    16: 'UINT16',
    17: 'INT4',
    18: 'BFLOAT16',
    19: 'INT2',
    20: 'UINT4',
    21: 'FLOAT8_E4M3FN',
    22: 'FLOAT8_E5M2',
}
