// SPDX-License-Identifier: MIT
//
// What tensorinfer's element tests share: the test models (made at test time: python3-onnx
// through tests/infer/make_onnx_models.py and tests/gst/make_tensorinfer_models.py), the
// fixture that skips (or fails, where the lane requires the runtime) without them, and a
// pipeline runner that feeds appsrc and collects appsink's samples and the bus's messages.

#pragma once

#include "attached_tensors.hpp"
#include "gst_test_util.hpp"
#include "infer_require.hpp"
#include "infer_test_util.hpp"
#include "model_dir.hpp"

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>

#include <edgetensor/convert.hpp>

#include <array>
#include <string>
#include <vector>

namespace edgetensor::test
{

/// The models of tests/infer/make_onnx_models.py (ssd_u8.onnx, conv_f32.onnx, conv_batch.onnx,
/// nonzero.onnx, ...).
ModelDir& infer_models();
/// The models of tests/gst/make_tensorinfer_models.py (ssd_dyn.onnx, yolo.onnx).
ModelDir& detector_models();

/// Skips (or fails where EDGETENSOR_TEST_REQUIRE_INFER names ONNX Runtime) without ONNX Runtime
/// or the test models.
class OnnxElementTest : public testing::Test
{
protected:
    void SetUp() override;
};

/// The TF-SSD test model's outputs (make_onnx_models.py): box i is (ymin, xmin, ymax, xmax) =
/// (0.1 i, 0.2, 0.5 + 0.1 i, 0.9), class i + 1, score the mean of channel i / 255.
inline std::array<float, 4> ssd_box(int i)
{
    return {0.1f * float(i), 0.2f, 0.5f + 0.1f * float(i), 0.9f};
}
/// The YOLO test model's candidate i: cx, cy, w, h in the 16x16 input's pixels.
inline std::array<float, 4> yolo_box(int i)
{
    return {4.0f + 6.0f * float(i), 5.0f + 4.0f * float(i), 6.0f, 8.0f};
}

/// Channel values the tests fill u8 HWC images with (so the SSD model's scores are known).
inline constexpr std::array<uint8_t, 3> kChannelValues{51, 102, 204};

/// An other/tensors u8 [1, h, w, 3] buffer from `pool`, every pixel kChannelValues.
BufferPtr filled_image_tensor(GstBufferPool* pool, size_t h, size_t w);

/// The frame transform of a `fw`x`fh` frame converted to `tw`x`th` (letterboxed or not).
gst::FrameTransform transform_of(size_t fw, size_t fh, size_t tw, size_t th, bool letterbox);

/// A pipeline run to its end.
struct PipelineRun {
    bool eos = false;
    std::vector<std::string> errors;   ///< "message | debug", every one posted
    std::vector<std::string> warnings; ///< "message | debug"
    std::vector<MiniObjectPtr<GstSample>> samples;
    MiniObjectPtr<GstCaps> src_caps; ///< the caps appsink got
    gst::StructurePtr stats;         ///< tensorinfer's stats (element "inf"), read at the end
    std::string all_errors() const;
};

/// Parses `launch` (with an appsrc named "src" when `buffers` is not empty and an appsink named
/// "sink" when there is one; tensorinfer named "inf"), pushes `buffers` with `src_caps`, ends
/// the stream and runs to EOS or the first error (60 s at most), then collects the errors
/// that follow it (until none comes for half a second).
PipelineRun run_pipeline(const std::string& launch, const std::string& src_caps,
                         std::vector<BufferPtr> buffers);

} // namespace edgetensor::test
