// SPDX-License-Identifier: MIT

#include "tflite_models.hpp"

#include "../reference.hpp"
#include "tflite_builder.hpp"

#include <vector>

namespace edgetensor::test::tfl
{
namespace
{

std::string add(const std::string& path)
{
    Builder b;
    const int x = b.tensor("x", tflite::TensorType_FLOAT32, {1, 8, 8, 3});
    const int c = b.constant("c", tflite::TensorType_FLOAT32, {3},
                             std::vector<float>(kAddConstant.begin(), kAddConstant.end()));
    const int y = b.tensor("y", tflite::TensorType_FLOAT32, {1, 8, 8, 3});
    b.op(tflite::BuiltinOperator_ADD, {x, c}, {y}, tflite::AddOptionsT{});
    b.io({x}, {y});
    return b.write(path);
}

std::string mean_of(const std::string& path, int32_t height, int32_t width)
{
    Builder b;
    const int image = b.tensor("image", tflite::TensorType_UINT8, {1, height, width, 3});
    const int xf = b.tensor("xf", tflite::TensorType_FLOAT32, {1, height, width, 3});
    const int axes = b.constant("axes", tflite::TensorType_INT32, {2}, std::vector<int32_t>{1, 2});
    const int m = b.tensor("mean", tflite::TensorType_FLOAT32, {1, 3});
    const int k = b.constant("k", tflite::TensorType_FLOAT32, {1}, std::vector<float>{1.0f / 255});
    const int scores = b.tensor("scores", tflite::TensorType_FLOAT32, {1, 3});
    tflite::CastOptionsT cast;
    cast.in_data_type = tflite::TensorType_UINT8;
    cast.out_data_type = tflite::TensorType_FLOAT32;
    b.op(tflite::BuiltinOperator_CAST, {image}, {xf}, cast);
    tflite::ReducerOptionsT reduce;
    reduce.keep_dims = false;
    b.op(tflite::BuiltinOperator_MEAN, {xf, axes}, {m}, reduce);
    b.op(tflite::BuiltinOperator_MUL, {m, k}, {scores}, tflite::MulOptionsT{});
    b.io({image}, {m, scores});
    return b.write(path);
}

std::string mean(const std::string& path)
{
    return mean_of(path, 8, 8);
}

std::string conv(const std::string& path, bool dynamic)
{
    Builder b;
    const std::vector<int32_t> in_sig =
        dynamic ? std::vector<int32_t>{-1, 8, 8, 3} : std::vector<int32_t>{};
    const std::vector<int32_t> out_sig =
        dynamic ? std::vector<int32_t>{-1, 8, 8, 2} : std::vector<int32_t>{};
    const int x = b.tensor("x", tflite::TensorType_FLOAT32, {1, 8, 8, 3}, in_sig);
    std::vector<float> w;
    for (int o = 0; o < 2; ++o)
        for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx)
                for (int i = 0; i < 3; ++i)
                    w.push_back(conv_weight(o, i, ky, kx));
    const int wt = b.constant("w", tflite::TensorType_FLOAT32, {2, 3, 3, 3}, w);
    const int bias = b.constant("b", tflite::TensorType_FLOAT32, {2},
                                std::vector<float>(kConvBias.begin(), kConvBias.end()));
    const int y = b.tensor("y", tflite::TensorType_FLOAT32, {1, 8, 8, 2}, out_sig);
    tflite::Conv2DOptionsT c;
    c.padding = tflite::Padding_SAME;
    c.stride_w = 1;
    c.stride_h = 1;
    c.fused_activation_function = tflite::ActivationFunctionType_RELU;
    b.op(tflite::BuiltinOperator_CONV_2D, {x, wt, bias}, {y}, c);
    b.io({x}, {y});
    return b.write(path);
}

std::string quant(const std::string& path)
{
    Builder b;
    const int q = b.tensor("q", tflite::TensorType_UINT8, {1, 4});
    b.quantize(q, kQuantScale, kQuantZeroPoint);
    const int real = b.tensor("real", tflite::TensorType_FLOAT32, {1, 4});
    b.op(tflite::BuiltinOperator_DEQUANTIZE, {q}, {real}, tflite::DequantizeOptionsT{});
    b.io({q}, {real});
    return b.write(path);
}

std::string boolean(const std::string& path)
{
    Builder b;
    const int x = b.tensor("flags", tflite::TensorType_BOOL, {2});
    const int y = b.tensor("inverted", tflite::TensorType_BOOL, {2});
    b.op(tflite::BuiltinOperator_LOGICAL_NOT, {x}, {y}, tflite::LogicalNotOptionsT{});
    b.io({x}, {y});
    return b.write(path);
}

} // namespace

std::string write_mean(const std::string& path, int32_t height, int32_t width)
{
    return mean_of(path, height, width);
}

std::string write_all(const std::string& dir)
{
    for (auto r : {add(dir + "/add.tflite"), mean(dir + "/mean.tflite"),
                   conv(dir + "/conv.tflite", false), conv(dir + "/conv_batch.tflite", true),
                   quant(dir + "/quant.tflite"), boolean(dir + "/bool.tflite")})
        if (!r.empty())
            return r;
    return {};
}

} // namespace edgetensor::test::tfl
