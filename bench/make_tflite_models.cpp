// SPDX-License-Identifier: MIT
//
// The TensorFlow Lite counterparts of bench/infer_ab.py's ONNX models, written without a download
// (the dev package's flatbuffer schema, through the tests' Builder):
//
//   tiny.tflite   "image" u8 [1, S, S, 3] (NHWC) -> CAST f32 -> MEAN over H, W -> * 1/255
//                 -> "detection_scores" [1, 3]; "detection_boxes" [1, 3, 4],
//                 "detection_classes" [1, 3] and "num_detections" [1] are constants (+ 0), the
//                 four outputs of a TF-SSD model. The body is cheap, so the conversion and the
//                 hand-over to the runtime dominate.
//   heavy.tflite  the same input and head after four float32 3x3 CONV_2D layers (SAME, stride 1,
//                 no activation) 3 -> 16 -> 16 -> 16 -> 3 over the whole image, the ONNX heavy
//                 model's graph.
//
//   make_tflite_models DIR [SIZE]      (SIZE defaults to 640)

#include "tflite_builder.hpp"

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace
{

using edgetensor::test::tfl::Builder;

constexpr int32_t kDetections = 3;

/// The SSD head over `features` ([1, S, S, C] f32) and the graph's inputs and outputs.
void finish(Builder& b, int image, int features, int32_t channels)
{
    const int axes = b.constant("axes", tflite::TensorType_INT32, {2}, std::vector<int32_t>{1, 2});
    const int mean = b.tensor("mean", tflite::TensorType_FLOAT32, {1, channels});
    tflite::ReducerOptionsT reduce;
    reduce.keep_dims = false;
    b.op(tflite::BuiltinOperator_MEAN, {features, axes}, {mean}, reduce);
    const int k =
        b.constant("k255", tflite::TensorType_FLOAT32, {1}, std::vector<float>{1.0f / 255});
    const int scores = b.tensor("detection_scores", tflite::TensorType_FLOAT32, {1, kDetections});
    b.op(tflite::BuiltinOperator_MUL, {mean, k}, {scores}, tflite::MulOptionsT{});

    // The constant outputs go through an ADD of zero: a graph output that is a constant buffer is
    // read-only memory the runtime does not plan, which neither element expects.
    const int zero = b.constant("zero", tflite::TensorType_FLOAT32, {1}, std::vector<float>{0.0f});
    auto through = [&](const std::string& name, std::vector<int32_t> shape,
                       const std::vector<float>& values) {
        const int c = b.constant(name + "_value", tflite::TensorType_FLOAT32, shape, values);
        const int out = b.tensor(name, tflite::TensorType_FLOAT32, std::move(shape));
        b.op(tflite::BuiltinOperator_ADD, {c, zero}, {out}, tflite::AddOptionsT{});
        return out;
    };
    const int boxes = through("detection_boxes", {1, kDetections, 4},
                              std::vector<float>(size_t(kDetections) * 4, 0.25f));
    const int classes = through("detection_classes", {1, kDetections}, {1.0f, 2.0f, 3.0f});
    const int num = through("num_detections", {1}, {float(kDetections)});
    b.io({image}, {boxes, classes, scores, num});
}

std::string model(const std::string& path, int32_t size, bool heavy)
{
    Builder b;
    const int image = b.tensor("image", tflite::TensorType_UINT8, {1, size, size, 3});
    const int x = b.tensor("x", tflite::TensorType_FLOAT32, {1, size, size, 3});
    tflite::CastOptionsT cast;
    cast.in_data_type = tflite::TensorType_UINT8;
    cast.out_data_type = tflite::TensorType_FLOAT32;
    b.op(tflite::BuiltinOperator_CAST, {image}, {x}, cast);
    int prev = x;
    int32_t in_ch = 3;
    if (heavy) {
        std::mt19937 rng(1);
        std::normal_distribution<float> normal(0.0f, 0.1f);
        int layer = 0;
        for (int32_t out_ch : {16, 16, 16, 3}) {
            const std::string n = "conv" + std::to_string(layer++);
            std::vector<float> w(size_t(out_ch) * 3 * 3 * size_t(in_ch)); // OHWI
            for (float& v : w)
                v = normal(rng);
            const int wt =
                b.constant(n + "_w", tflite::TensorType_FLOAT32, {out_ch, 3, 3, in_ch}, w);
            const int bias = b.constant(n + "_b", tflite::TensorType_FLOAT32, {out_ch},
                                        std::vector<float>(size_t(out_ch), 0.0f));
            const int y = b.tensor(n, tflite::TensorType_FLOAT32, {1, size, size, out_ch});
            tflite::Conv2DOptionsT c;
            c.padding = tflite::Padding_SAME;
            c.stride_w = 1;
            c.stride_h = 1;
            b.op(tflite::BuiltinOperator_CONV_2D, {prev, wt, bias}, {y}, c);
            prev = y;
            in_ch = out_ch;
        }
    }
    finish(b, image, prev, in_ch);
    return b.write(path);
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2 || argc > 3) {
        std::fprintf(stderr, "usage: %s DIR [SIZE]\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    const int32_t size = argc == 3 ? int32_t(std::atoi(argv[2])) : 640;
    if (size <= 0) {
        std::fprintf(stderr, "make_tflite_models: SIZE must be a positive number, not '%s'\n",
                     argv[2]);
        return 2;
    }
    for (const bool heavy : {false, true}) {
        const std::string path = dir + (heavy ? "/heavy.tflite" : "/tiny.tflite");
        const std::string err = model(path, size, heavy);
        if (!err.empty()) {
            std::fprintf(stderr, "make_tflite_models: %s\n", err.c_str());
            return 1;
        }
    }
    return 0;
}
