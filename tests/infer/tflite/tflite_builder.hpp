// SPDX-License-Identifier: MIT
//
// A one-subgraph TensorFlow Lite model written with the flatbuffer schema the dev package ships
// (tensorflow/lite/schema/schema_generated.h): the tests' small models (tflite_models.cpp) and
// the benchmark's 640x640 ones (bench/make_tflite_models.cpp) are both built with it, so the
// schema details (buffer 0, the deprecated opcode byte) live in one place.

#pragma once

#include <tensorflow/lite/schema/schema_generated.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace edgetensor::test::tfl
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

} // namespace edgetensor::test::tfl
