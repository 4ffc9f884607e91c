/* api/nn_layers.c: the eight NN extension layer constructors.  Each lists its
 * arguments in kernel parameter order; the descriptions in
 * openvx_nn/operations/nn_*.py say what they mean.  A struct pointer travels
 * with the size the application gave, which verification checks. */
#include "../runtime_internal.h"

VX_API_ENTRY vx_node VX_API_CALL vxConvolutionLayer(vx_graph graph, vx_tensor inputs, vx_tensor weights, vx_tensor biases, const vx_nn_convolution_params_t *convolution_params, vx_size size_of_convolution_params, vx_tensor outputs)
{
    vxnn_arg args[] = {ARG_REF(inputs), ARG_REF(weights), ARG_REF(biases),
                       ARG_STRUCT(convolution_params, size_of_convolution_params), ARG_REF(outputs)};
    VXNN_START_OR_RETURN(NULL);
    return VXNN_NODE(graph, VX_KERNEL_CONVOLUTION_LAYER, args);
}

VX_API_ENTRY vx_node VX_API_CALL vxDeconvolutionLayer(vx_graph graph, vx_tensor inputs, vx_tensor weights, vx_tensor biases, const vx_nn_deconvolution_params_t *deconvolution_params, vx_size size_of_deconv_params, vx_tensor outputs)
{
    vxnn_arg args[] = {ARG_REF(inputs), ARG_REF(weights), ARG_REF(biases),
                       ARG_STRUCT(deconvolution_params, size_of_deconv_params), ARG_REF(outputs)};
    VXNN_START_OR_RETURN(NULL);
    return VXNN_NODE(graph, VX_KERNEL_DECONVOLUTION_LAYER, args);
}

VX_API_ENTRY vx_node VX_API_CALL vxFullyConnectedLayer(vx_graph graph, vx_tensor inputs, vx_tensor weights, vx_tensor biases, vx_enum overflow_policy, vx_enum rounding_policy, vx_tensor outputs)
{
    vxnn_arg args[] = {ARG_REF(inputs), ARG_REF(weights), ARG_REF(biases), ARG_ENUM(overflow_policy),
                       ARG_ENUM(rounding_policy), ARG_REF(outputs)};
    VXNN_START_OR_RETURN(NULL);
    return VXNN_NODE(graph, VX_KERNEL_FULLY_CONNECTED_LAYER, args);
}

VX_API_ENTRY vx_node VX_API_CALL vxPoolingLayer(vx_graph graph, vx_tensor inputs, vx_enum pooling_type, vx_size pooling_size_x, vx_size pooling_size_y, vx_size pooling_padding_x, vx_size pooling_padding_y, vx_enum rounding, vx_tensor outputs)
{
    vxnn_arg args[] = {ARG_REF(inputs), ARG_ENUM(pooling_type), ARG_SIZE(pooling_size_x), ARG_SIZE(pooling_size_y),
                       ARG_SIZE(pooling_padding_x), ARG_SIZE(pooling_padding_y), ARG_ENUM(rounding), ARG_REF(outputs)};
    VXNN_START_OR_RETURN(NULL);
    return VXNN_NODE(graph, VX_KERNEL_POOLING_LAYER, args);
}

VX_API_ENTRY vx_node VX_API_CALL vxSoftmaxLayer(vx_graph graph, vx_tensor inputs, vx_tensor outputs)
{
    vxnn_arg args[] = {ARG_REF(inputs), ARG_REF(outputs)};
    VXNN_START_OR_RETURN(NULL);
    return VXNN_NODE(graph, VX_KERNEL_SOFTMAX_LAYER, args);
}

VX_API_ENTRY vx_node VX_API_CALL vxLocalResponseNormalizationLayer(vx_graph graph, vx_tensor inputs, vx_enum type, vx_size normalization_size, vx_float32 alpha, vx_float32 beta, vx_float32 bias, vx_tensor outputs)
{
    vxnn_arg args[] = {ARG_REF(inputs), ARG_ENUM(type), ARG_SIZE(normalization_size), ARG_FLOAT32(alpha),
                       ARG_FLOAT32(beta), ARG_FLOAT32(bias), ARG_REF(outputs)};
    VXNN_START_OR_RETURN(NULL);
    return VXNN_NODE(graph, VX_KERNEL_LOCAL_RESPONSE_NORMALIZATION_LAYER, args);
}

VX_API_ENTRY vx_node VX_API_CALL vxActivationLayer(vx_graph graph, vx_tensor inputs, vx_enum function, vx_float32 a, vx_float32 b, vx_tensor outputs)
{
    vxnn_arg args[] = {ARG_REF(inputs), ARG_ENUM(function), ARG_FLOAT32(a), ARG_FLOAT32(b), ARG_REF(outputs)};
    VXNN_START_OR_RETURN(NULL);
    return VXNN_NODE(graph, VX_KERNEL_ACTIVATION_LAYER, args);
}

VX_API_ENTRY vx_node VX_API_CALL vxROIPoolingLayer(vx_graph graph, vx_tensor input_data, vx_tensor input_rois, const vx_nn_roi_pool_params_t *roi_pool_params, vx_size size_of_roi_params, vx_tensor output_arr)
{
    vxnn_arg args[] = {ARG_REF(input_data), ARG_REF(input_rois), ARG_STRUCT(roi_pool_params, size_of_roi_params),
                       ARG_REF(output_arr)};
    VXNN_START_OR_RETURN(NULL);
    return VXNN_NODE(graph, VX_KERNEL_ROI_POOLING_LAYER, args);
}
