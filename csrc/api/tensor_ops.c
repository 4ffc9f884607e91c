/* api/tensor_ops.c: the seven OpenVX 1.2 tensor operations, node and vxu forms.
 * Each node constructor only lists its arguments; the kernel description in
 * openvx_nn/operations/openvx/tensor_ops.py says what they mean. */
#include "../runtime_internal.h"

VX_API_ENTRY vx_node VX_API_CALL vxTensorMultiplyNode(vx_graph graph, vx_tensor input1, vx_tensor input2, vx_scalar scale, vx_enum overflow_policy, vx_enum rounding_policy, vx_tensor output)
{
    vxnn_arg args[] = {ARG_REF(input1), ARG_REF(input2), ARG_REF(scale), ARG_ENUM(overflow_policy),
                       ARG_ENUM(rounding_policy), ARG_REF(output)};
    VXNN_START_OR_RETURN(NULL);
    return VXNN_NODE(graph, VX_KERNEL_TENSOR_MULTIPLY, args);
}

VX_API_ENTRY vx_node VX_API_CALL vxTensorAddNode(vx_graph graph, vx_tensor input1, vx_tensor input2, vx_enum policy, vx_tensor output)
{
    vxnn_arg args[] = {ARG_REF(input1), ARG_REF(input2), ARG_ENUM(policy), ARG_REF(output)};
    VXNN_START_OR_RETURN(NULL);
    return VXNN_NODE(graph, VX_KERNEL_TENSOR_ADD, args);
}

VX_API_ENTRY vx_node VX_API_CALL vxTensorSubtractNode(vx_graph graph, vx_tensor input1, vx_tensor input2, vx_enum policy, vx_tensor output)
{
    vxnn_arg args[] = {ARG_REF(input1), ARG_REF(input2), ARG_ENUM(policy), ARG_REF(output)};
    VXNN_START_OR_RETURN(NULL);
    return VXNN_NODE(graph, VX_KERNEL_TENSOR_SUBTRACT, args);
}

VX_API_ENTRY vx_node VX_API_CALL vxTensorTableLookupNode(vx_graph graph, vx_tensor input1, vx_lut lut, vx_tensor output)
{
    vxnn_arg args[] = {ARG_REF(input1), ARG_REF(lut), ARG_REF(output)};
    VXNN_START_OR_RETURN(NULL);
    return VXNN_NODE(graph, VX_KERNEL_TENSOR_TABLE_LOOKUP, args);
}

VX_API_ENTRY vx_node VX_API_CALL vxTensorTransposeNode(vx_graph graph, vx_tensor input, vx_tensor output, vx_size dimension1, vx_size dimension2)
{
    vxnn_arg args[] = {ARG_REF(input), ARG_REF(output), ARG_SIZE(dimension1), ARG_SIZE(dimension2)};
    VXNN_START_OR_RETURN(NULL);
    return VXNN_NODE(graph, VX_KERNEL_TENSOR_TRANSPOSE, args);
}

VX_API_ENTRY vx_node VX_API_CALL vxTensorConvertDepthNode(vx_graph graph, vx_tensor input, vx_enum policy, vx_scalar norm, vx_scalar offset, vx_tensor output)
{
    vxnn_arg args[] = {ARG_REF(input), ARG_ENUM(policy), ARG_REF(norm), ARG_REF(offset), ARG_REF(output)};
    VXNN_START_OR_RETURN(NULL);
    return VXNN_NODE(graph, VX_KERNEL_TENSOR_CONVERT_DEPTH, args);
}

VX_API_ENTRY vx_node VX_API_CALL vxTensorMatrixMultiplyNode(vx_graph graph, vx_tensor input1, vx_tensor input2, vx_tensor input3, const vx_tensor_matrix_multiply_params_t *matrix_multiply_params, vx_tensor output)
{
    vxnn_arg args[] = {ARG_REF(input1), ARG_REF(input2), ARG_REF(input3),
                       ARG_STRUCT(matrix_multiply_params, sizeof(vx_tensor_matrix_multiply_params_t)),
                       ARG_REF(output)};
    VXNN_START_OR_RETURN(NULL);
    return VXNN_NODE(graph, VX_KERNEL_TENSOR_MATRIX_MULTIPLY, args);
}

VX_API_ENTRY vx_status VX_API_CALL vxuTensorMultiply(vx_context context, vx_tensor input1, vx_tensor input2, vx_scalar scale, vx_enum overflow_policy, vx_enum rounding_policy, vx_tensor output)
{
    VXNN_IMMEDIATE(context, vxTensorMultiplyNode(graph, input1, input2, scale, overflow_policy, rounding_policy, output));
}

VX_API_ENTRY vx_status VX_API_CALL vxuTensorAdd(vx_context context, vx_tensor input1, vx_tensor input2, vx_enum policy, vx_tensor output)
{
    VXNN_IMMEDIATE(context, vxTensorAddNode(graph, input1, input2, policy, output));
}

VX_API_ENTRY vx_status VX_API_CALL vxuTensorSubtract(vx_context context, vx_tensor input1, vx_tensor input2, vx_enum policy, vx_tensor output)
{
    VXNN_IMMEDIATE(context, vxTensorSubtractNode(graph, input1, input2, policy, output));
}

VX_API_ENTRY vx_status VX_API_CALL vxuTensorTableLookup(vx_context context, vx_tensor input1, vx_lut lut, vx_tensor output)
{
    VXNN_IMMEDIATE(context, vxTensorTableLookupNode(graph, input1, lut, output));
}

VX_API_ENTRY vx_status VX_API_CALL vxuTensorTranspose(vx_context context, vx_tensor input, vx_tensor output, vx_size dimension1, vx_size dimension2)
{
    VXNN_IMMEDIATE(context, vxTensorTransposeNode(graph, input, output, dimension1, dimension2));
}

VX_API_ENTRY vx_status VX_API_CALL vxuTensorConvertDepth(vx_context context, vx_tensor input, vx_enum policy, vx_scalar norm, vx_scalar offset, vx_tensor output)
{
    VXNN_IMMEDIATE(context, vxTensorConvertDepthNode(graph, input, policy, norm, offset, output));
}

VX_API_ENTRY vx_status VX_API_CALL vxuTensorMatrixMultiply(vx_context context, vx_tensor input1, vx_tensor input2, vx_tensor input3, const vx_tensor_matrix_multiply_params_t *matrix_multiply_params, vx_tensor output)
{
    VXNN_IMMEDIATE(context, vxTensorMatrixMultiplyNode(graph, input1, input2, input3, matrix_multiply_params, output));
}
