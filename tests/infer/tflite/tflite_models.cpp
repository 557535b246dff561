// SPDX-License-Identifier: MIT

#include "tflite_models.hpp"

#include "../reference.hpp"

#include <tensorflow/lite/schema/schema_generated.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

namespace edgetensor::test::tfl
{
namespace
{

/// One subgraph model under construction.
class Builder
{
public:
    Builder()
    {
        model_.version = 3;
        model_.description = "edgetensor test model";
        model_.buffers.push_back(std::make_unique<tflite::BufferT>()); // 0: the empty sentinel
        model_.subgraphs.push_back(std::make_unique<tflite::SubGraphT>());
    }

    int tensor(const std::string& name, tflite::TensorType type, std::vector<int32_t> shape,
               std::vector<int32_t> signature = {})
    {
        auto t = std::make_unique<tflite::TensorT>();
        t->name = name;
        t->type = type;
        t->shape = std::move(shape);
        t->shape_signature = std::move(signature);
        t->buffer = 0;
        sg().tensors.push_back(std::move(t));
        return int(sg().tensors.size() - 1);
    }
    template <typename T>
    int constant(const std::string& name, tflite::TensorType type, std::vector<int32_t> shape,
                 const std::vector<T>& values)
    {
        const int index = tensor(name, type, std::move(shape));
        auto b = std::make_unique<tflite::BufferT>();
        b->data.resize(values.size() * sizeof(T));
        std::memcpy(b->data.data(), values.data(), b->data.size());
        model_.buffers.push_back(std::move(b));
        sg().tensors[size_t(index)]->buffer = uint32_t(model_.buffers.size() - 1);
        return index;
    }
    void quantize(int index, float scale, int64_t zero_point)
    {
        auto q = std::make_unique<tflite::QuantizationParametersT>();
        q->scale = {scale};
        q->zero_point = {zero_point};
        sg().tensors[size_t(index)]->quantization = std::move(q);
    }
    template <typename Options>
    void op(tflite::BuiltinOperator code, std::vector<int32_t> in, std::vector<int32_t> out,
            Options options)
    {
        auto o = std::make_unique<tflite::OperatorT>();
        o->opcode_index = opcode(code);
        o->inputs = std::move(in);
        o->outputs = std::move(out);
        o->builtin_options.Set(std::move(options));
        sg().operators.push_back(std::move(o));
    }
    void io(std::vector<int32_t> inputs, std::vector<int32_t> outputs)
    {
        sg().inputs = std::move(inputs);
        sg().outputs = std::move(outputs);
    }
    std::string write(const std::string& path)
    {
        flatbuffers::FlatBufferBuilder fbb;
        tflite::FinishModelBuffer(fbb, tflite::Model::Pack(fbb, &model_));
        std::ofstream f(path, std::ios::binary);
        f.write(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
        return f.good() ? std::string() : "cannot write " + path;
    }

private:
    tflite::SubGraphT& sg() { return *model_.subgraphs[0]; }
    uint32_t opcode(tflite::BuiltinOperator code)
    {
        for (size_t i = 0; i < model_.operator_codes.size(); ++i)
            if (model_.operator_codes[i]->builtin_code == code)
                return uint32_t(i);
        auto c = std::make_unique<tflite::OperatorCodeT>();
        c->builtin_code = code;
        // Readers before 2.4 look at the deprecated byte; every code used here fits in it.
        c->deprecated_builtin_code = int8_t(code);
        c->version = 1;
        model_.operator_codes.push_back(std::move(c));
        return uint32_t(model_.operator_codes.size() - 1);
    }

    tflite::ModelT model_;
};

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
