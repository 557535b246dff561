// SPDX-License-Identifier: MIT
//
// Conversion engine vs GStreamer's own converter, side by side in one run: 1920x1080 NV12 ->
// 640x640 RGB. GStreamer runs gst_video_converter_new() with one thread and the linear
// (bilinear) resampler, which is what videoconvertscale n-threads=1 method=bilinear runs inside
// its transform. Ours runs the same job as u8 HWC, as float32 CHW normalised, and with more
// threads. After the run a summary prints the two ratios the issue sets targets for.
//
// Frames per second are the items_per_second counter. Both sides convert the same synthetic
// frame into a buffer that is reused (as a pooled output buffer would be).

#include <edgetensor/convert.hpp>

#include <benchmark/benchmark.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

namespace
{

constexpr size_t kSrcW = 1920, kSrcH = 1080, kDstW = 640, kDstH = 640;

/// A 1080p NV12 frame with a smooth colour pattern plus detail (so nothing is trivially flat).
struct Nv12Frame {
    size_t stride = kSrcW;
    std::vector<uint8_t> y, uv;
    Nv12Frame() : y(kSrcW * kSrcH), uv(kSrcW * kSrcH / 2)
    {
        for (size_t r = 0; r < kSrcH; ++r)
            for (size_t c = 0; c < kSrcW; ++c)
                y[r * stride + c] = uint8_t(16 + (c * 219 / kSrcW + ((r ^ c) & 15)) % 220);
        for (size_t r = 0; r < kSrcH / 2; ++r)
            for (size_t c = 0; c < kSrcW / 2; ++c) {
                uv[r * stride + 2 * c] = uint8_t(16 + c * 224 / (kSrcW / 2));
                uv[r * stride + 2 * c + 1] = uint8_t(16 + r * 224 / (kSrcH / 2));
            }
    }
};

const Nv12Frame& frame()
{
    static const Nv12Frame f;
    return f;
}

// ---- GStreamer ----------------------------------------------------------------------------

void BM_GstVideoConverter(benchmark::State& state)
{
    const unsigned threads = unsigned(state.range(0));
    const auto dst_side = guint(state.range(1));
    GstVideoInfo in, out;
    gst_video_info_set_format(&in, GST_VIDEO_FORMAT_NV12, kSrcW, kSrcH);
    gst_video_info_set_format(&out, GST_VIDEO_FORMAT_RGB, dst_side, dst_side);
    GstStructure* opts = gst_structure_new(
        "options", GST_VIDEO_CONVERTER_OPT_THREADS, G_TYPE_UINT, threads,
        GST_VIDEO_CONVERTER_OPT_RESAMPLER_METHOD, GST_TYPE_VIDEO_RESAMPLER_METHOD,
        GST_VIDEO_RESAMPLER_METHOD_LINEAR, GST_VIDEO_CONVERTER_OPT_CHROMA_RESAMPLER_METHOD,
        GST_TYPE_VIDEO_RESAMPLER_METHOD, GST_VIDEO_RESAMPLER_METHOD_LINEAR, nullptr);
    GstVideoConverter* conv = gst_video_converter_new(&in, &out, opts); // takes opts
    if (!conv) {
        state.SkipWithError("gst_video_converter_new failed");
        return;
    }
    const auto& f = frame();
    GstBuffer* ib = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&in), nullptr);
    GstBuffer* ob = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&out), nullptr);
    GstVideoFrame fi, fo;
    gst_video_frame_map(&fi, &in, ib, GST_MAP_READWRITE);
    gst_video_frame_map(&fo, &out, ob, GST_MAP_WRITE);
    for (size_t r = 0; r < kSrcH; ++r)
        memcpy(static_cast<uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&fi, 0)) +
                   r * GST_VIDEO_FRAME_PLANE_STRIDE(&fi, 0),
               f.y.data() + r * f.stride, kSrcW);
    for (size_t r = 0; r < kSrcH / 2; ++r)
        memcpy(static_cast<uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&fi, 1)) +
                   r * GST_VIDEO_FRAME_PLANE_STRIDE(&fi, 1),
               f.uv.data() + r * f.stride, kSrcW);
    for (auto _ : state) {
        gst_video_converter_frame(conv, &fi, &fo);
        benchmark::DoNotOptimize(GST_VIDEO_FRAME_PLANE_DATA(&fo, 0));
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(int64_t(state.iterations()));
    gst_video_frame_unmap(&fo);
    gst_video_frame_unmap(&fi);
    gst_buffer_unref(ob);
    gst_buffer_unref(ib);
    gst_video_converter_free(conv);
}

// ---- edgetensor ---------------------------------------------------------------------------

enum Variant : int64_t {
    kU8Hwc = 0,
    kF32ChwNorm = 1,
    kU8HwcLetterbox = 2,
    kF16ChwNorm = 3,
    kU8Hwc500 = 4, // 500x500: non-integer ratios on both axes (every tap interpolates)
};

void BM_EdgetensorConvert(benchmark::State& state)
{
    const auto variant = Variant(state.range(0));
    edgetensor::ConvertConfig cfg;
    cfg.src_format = edgetensor::ConvertFormat::Nv12;
    cfg.src_width = kSrcW;
    cfg.src_height = kSrcH;
    cfg.src_colorimetry.encoding = edgetensor::ColorEncoding::Bt709;
    cfg.src_colorimetry.range = edgetensor::ColorRange::Limited;
    cfg.dst_width = variant == kU8Hwc500 ? 500 : kDstW;
    cfg.dst_height = variant == kU8Hwc500 ? 500 : kDstH;
    cfg.dst_format = edgetensor::OutputFormat::Rgb;
    cfg.method = edgetensor::ResizeMethod::Bilinear;
    cfg.threads = size_t(state.range(1));
    if (variant == kF32ChwNorm || variant == kF16ChwNorm) {
        cfg.layout = edgetensor::TensorLayout::Chw;
        cfg.dtype = variant == kF32ChwNorm ? edgetensor::DType::F32 : edgetensor::DType::F16;
        cfg.mean = {123.675f, 116.28f, 103.53f, 0.f};
        cfg.std = {58.395f, 57.12f, 57.375f, 1.f};
    }
    cfg.letterbox = variant == kU8HwcLetterbox;
    auto conv = edgetensor::Converter::create(cfg);
    if (!conv) {
        state.SkipWithError(conv.error().message().c_str());
        return;
    }
    const auto& f = frame();
    std::vector<uint8_t> out(conv->min_plane_stride() ? conv->min_plane_stride() * 3
                                                      : conv->min_row_stride() * kDstH);
    state.SetLabel(std::to_string(conv->dst_width()) + "x" + std::to_string(conv->dst_height()));
    edgetensor::SourceFrame src;
    src.planes[0] = {f.y.data(), f.stride};
    src.planes[1] = {f.uv.data(), f.stride};
    const edgetensor::DestFrame dst{out.data(), conv->min_row_stride(), conv->min_plane_stride()};
    for (auto _ : state) {
        auto r = conv->run(src, dst);
        if (!r) {
            state.SkipWithError(r.error().message().c_str());
            break;
        }
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(int64_t(state.iterations()));
}

// One thread: timed in CPU time, which other processes on a shared host disturb least.
BENCHMARK(BM_GstVideoConverter)
    ->ArgNames({"threads", "size"})
    ->Args({1, 640})
    ->Args({1, 500})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EdgetensorConvert)
    ->ArgNames({"variant", "threads"})
    ->Args({kU8Hwc, 1})
    ->Args({kF32ChwNorm, 1})
    ->Args({kF16ChwNorm, 1})
    ->Args({kU8HwcLetterbox, 1})
    ->Args({kU8Hwc500, 1})
    ->Unit(benchmark::kMillisecond);
// Several threads: wall-clock time (CPU time would only count the calling thread).
BENCHMARK(BM_GstVideoConverter)
    ->ArgNames({"threads", "size"})
    ->Args({2, 640})
    ->Args({4, 640})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EdgetensorConvert)
    ->ArgNames({"variant", "threads"})
    ->Args({kU8Hwc, 2})
    ->Args({kF32ChwNorm, 2})
    ->Args({kU8Hwc, 4})
    ->Args({kF32ChwNorm, 4})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

/// Keeps each one-thread run's CPU time per frame so the summary can put the targets side by side.
class SummaryReporter : public benchmark::ConsoleReporter
{
public:
    SummaryReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Defaults : OO_Tabular) {}

    void ReportRuns(const std::vector<Run>& runs) override
    {
        for (const auto& r : runs)
            if (r.run_type == Run::RT_Iteration && !r.error_occurred && r.iterations > 0)
                ms_[r.benchmark_name()] = r.GetAdjustedCPUTime();
        ConsoleReporter::ReportRuns(runs);
    }

    void Finalize() override
    {
        ConsoleReporter::Finalize();
        const double gst = find("BM_GstVideoConverter/threads:1/size:640");
        const double gst500 = find("BM_GstVideoConverter/threads:1/size:500");
        const double u8_500 = find("BM_EdgetensorConvert/variant:4/threads:1");
        const double u8 = find("BM_EdgetensorConvert/variant:0/threads:1");
        const double f32 = find("BM_EdgetensorConvert/variant:1/threads:1");
        std::printf("\nsummary (1920x1080 NV12 -> 640x640 RGB, bilinear, one thread, CPU time)\n");
        if (gst > 0 && u8 > 0)
            std::printf("  edgetensor u8 HWC vs GStreamer converter: %.2fx the frames per second "
                        "(target >= 3x)\n",
                        gst / u8);
        if (gst500 > 0 && u8_500 > 0)
            std::printf("  same at 500x500 (every tap interpolates): %.2fx\n", gst500 / u8_500);
        if (u8 > 0 && f32 > 0)
            std::printf("  f32 CHW normalised / u8 HWC time: %.2fx (target <= 1.5x)\n", f32 / u8);
    }

private:
    double find(const std::string& prefix) const
    {
        for (const auto& [name, t] : ms_)
            if (name.rfind(prefix, 0) == 0)
                return t;
        return 0.0;
    }
    std::map<std::string, double> ms_;
};

} // namespace

int main(int argc, char** argv)
{
    gst_init(&argc, &argv);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    SummaryReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}
