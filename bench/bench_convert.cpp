// SPDX-License-Identifier: MIT
//
// The conversion engine against what users would otherwise run, side by side in one run, on
// the same synthetic frames:
//  - stock videoconvertscale, the element itself (GstHarness, the buffer pushed and the
//    output pulled per frame, so its pool and buffer handling count), with its defaults: the
//    issue's B pipeline `videoconvertscale n-threads=1 method=bilinear` (both are defaults);
//  - OpenCV (when built with it), cv::setNumThreads(1): cvtColor then resize (INTER_LINEAR),
//    plus what a user writes for the float and letterbox cases, all buffers reused;
//  - gst_video_converter_new() with the linear resamplers: the earlier anchor, kept for
//    comparison (it is slower than the element, which sets more options).
// Jobs: NV12 1080p -> RGB 640x640; -> f32 CHW normalised; letterbox; YUY2 720p -> RGB 320x320;
// NV12 4K -> RGB 640x640 (and f16, 500x500 where every tap interpolates, and int8 CHW
// normalised and quantized, which should cost what f32 CHW does).
//
// One-thread cases are timed in CPU time, which other processes on a shared host disturb
// least; the thread-scaling pair (threads 1 and 2) in wall-clock time. Frames per second are
// the items_per_second counter. After the run a summary prints each ratio the issue sets a
// target for, from the fastest repetition when run with --benchmark_repetitions (the best
// estimate of an idle machine).
//
// Every case also reports its job's memory-bandwidth floor (bench/mem_floor.hpp): the source
// planes read once and the tensor written once at this host's memcpy bandwidth, as floor_ms,
// and its time as a multiple of it, x_floor; the summary prints both for the engine, and beside
// them BM_MoveBytes: the same bytes moved by memcpy and a read with the buffers as hot as the
// engine's (on a host whose last-level cache holds a frame, below the 64 MiB floor).

#include <edgetensor/convert.hpp>

#include "mem_floor.hpp"
#include "run_times.hpp"

#include <benchmark/benchmark.h>
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#ifdef EDGETENSOR_BENCH_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#endif

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace
{

namespace et = edgetensor;

enum class Out { U8Rgb, F32ChwNorm, F16ChwNorm, I8ChwQuant };

struct Job {
    const char* name;
    et::ConvertFormat format;
    size_t sw, sh, dw, dh;
    Out out;
    bool letterbox;
};

constexpr std::array<float, 4> kMean{123.675f, 116.28f, 103.53f, 0.f};
constexpr std::array<float, 4> kStd{58.395f, 57.12f, 57.375f, 1.f};
constexpr uint8_t kFill = 114;
// An int8 model's input quantization over ImageNet-normalised values.
constexpr et::Quantization kQuant{0.0186584f, -14};

// The job index is the benchmark argument; the summary refers to these.
enum JobId : int64_t {
    kRgb = 0,
    kF32,
    kLetterbox,
    kYuy2,
    k4k,
    kF16,
    kRgb500,
    kI8Quant,
    kJobCount,
};
const Job kJobs[kJobCount] = {
    {"1080p NV12 -> 640x640 RGB", et::ConvertFormat::Nv12, 1920, 1080, 640, 640, Out::U8Rgb, false},
    {"1080p NV12 -> 640x640 f32 CHW normalised", et::ConvertFormat::Nv12, 1920, 1080, 640, 640,
     Out::F32ChwNorm, false},
    {"1080p NV12 -> 640x640 RGB letterbox", et::ConvertFormat::Nv12, 1920, 1080, 640, 640,
     Out::U8Rgb, true},
    {"720p YUY2 -> 320x320 RGB", et::ConvertFormat::Yuy2, 1280, 720, 320, 320, Out::U8Rgb, false},
    {"4K NV12 -> 640x640 RGB", et::ConvertFormat::Nv12, 3840, 2160, 640, 640, Out::U8Rgb, false},
    {"1080p NV12 -> 640x640 f16 CHW normalised", et::ConvertFormat::Nv12, 1920, 1080, 640, 640,
     Out::F16ChwNorm, false},
    {"1080p NV12 -> 500x500 RGB (every tap interpolates)", et::ConvertFormat::Nv12, 1920, 1080, 500,
     500, Out::U8Rgb, false},
    {"1080p NV12 -> 640x640 int8 CHW quantized", et::ConvertFormat::Nv12, 1920, 1080, 640, 640,
     Out::I8ChwQuant, false},
};

/// A frame in GStreamer's default layout (planes back to back, default strides), with a
/// smooth colour pattern plus detail so nothing is trivially flat.
struct Frame {
    GstVideoInfo info;
    std::vector<uint8_t> data;

    const uint8_t* plane(size_t p) const
    {
        return data.data() + GST_VIDEO_INFO_PLANE_OFFSET(&info, p);
    }
    size_t stride(size_t p) const { return size_t(GST_VIDEO_INFO_PLANE_STRIDE(&info, p)); }
};

Frame make_frame(et::ConvertFormat f, size_t w, size_t h)
{
    Frame fr;
    const GstVideoFormat gf =
        f == et::ConvertFormat::Nv12 ? GST_VIDEO_FORMAT_NV12 : GST_VIDEO_FORMAT_YUY2;
    gst_video_info_set_format(&fr.info, gf, guint(w), guint(h));
    fr.data.assign(GST_VIDEO_INFO_SIZE(&fr.info), 0);
    uint8_t* base = fr.data.data();
    auto luma = [&](size_t c, size_t r) {
        return uint8_t(16 + (c * 219 / w + ((r ^ c) & 15)) % 220);
    };
    auto cb = [&](size_t c) { return uint8_t(16 + c * 224 / w); };
    auto cr = [&](size_t r) { return uint8_t(16 + r * 224 / h); };
    if (gf == GST_VIDEO_FORMAT_NV12) {
        uint8_t* y = base + GST_VIDEO_INFO_PLANE_OFFSET(&fr.info, 0);
        uint8_t* uv = base + GST_VIDEO_INFO_PLANE_OFFSET(&fr.info, 1);
        for (size_t r = 0; r < h; ++r)
            for (size_t c = 0; c < w; ++c)
                y[r * fr.stride(0) + c] = luma(c, r);
        for (size_t r = 0; r < h / 2; ++r)
            for (size_t c = 0; c < w / 2; ++c) {
                uv[r * fr.stride(1) + 2 * c] = cb(2 * c);
                uv[r * fr.stride(1) + 2 * c + 1] = cr(2 * r);
            }
    } else {
        for (size_t r = 0; r < h; ++r)
            for (size_t c = 0; c < w; c += 2) {
                uint8_t* m = base + r * fr.stride(0) + c * 2;
                m[0] = luma(c, r);
                m[1] = cb(c);
                m[2] = luma(c + 1, r);
                m[3] = cr(r);
            }
    }
    return fr;
}

const Frame& frame_for(const Job& j)
{
    static std::map<std::string, Frame> frames;
    const std::string key = std::to_string(int(j.format)) + ":" + std::to_string(j.sw);
    auto it = frames.find(key);
    if (it == frames.end())
        it = frames.emplace(key, make_frame(j.format, j.sw, j.sh)).first;
    return it->second;
}

/// What a job must move at least: its source planes read once, its tensor written once.
double bytes_read(const Job& j)
{
    const double px = double(j.sw) * double(j.sh);
    return j.format == et::ConvertFormat::Nv12 ? px * 1.5 : px * 2.0; // NV12 4:2:0, YUY2 4:2:2
}

double bytes_written(const Job& j)
{
    const double elem = j.out == Out::F32ChwNorm ? 4.0 : j.out == Out::F16ChwNorm ? 2.0 : 1.0;
    return double(j.dw) * double(j.dh) * 3.0 * elem;
}

/// The job's memory-bandwidth floor on this host (bench/mem_floor.hpp).
double job_floor_ms(const Job& j)
{
    return edgetensor::bench::floor_ms(bytes_read(j), bytes_written(j));
}

/// Frames per second, and the floor: floor_ms, and x_floor = time per frame / floor_ms (a
/// rate counter inverted, so it divides by the same time the report shows).
void finish(benchmark::State& state, const Job& j)
{
    state.SetItemsProcessed(int64_t(state.iterations()));
    state.SetLabel(j.name);
    const double floor = job_floor_ms(j);
    state.counters["floor_ms"] = floor;
    state.counters["x_floor"] =
        benchmark::Counter(double(state.iterations()) * floor * 1e-3,
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// ---- edgetensor ---------------------------------------------------------------------------

void BM_Edgetensor(benchmark::State& state)
{
    const Job& j = kJobs[state.range(0)];
    et::ConvertConfig cfg;
    cfg.src_format = j.format;
    cfg.src_width = j.sw;
    cfg.src_height = j.sh;
    cfg.src_colorimetry.encoding = j.sh > 576 ? et::ColorEncoding::Bt709 : et::ColorEncoding::Bt601;
    cfg.src_colorimetry.range = et::ColorRange::Limited;
    cfg.dst_width = j.dw;
    cfg.dst_height = j.dh;
    cfg.dst_format = et::OutputFormat::Rgb;
    cfg.method = et::ResizeMethod::Bilinear;
    cfg.letterbox = j.letterbox;
    cfg.fill = {kFill, kFill, kFill, 255};
    cfg.threads = size_t(state.range(1));
    if (j.out != Out::U8Rgb) {
        cfg.layout = et::TensorLayout::Chw;
        cfg.dtype = j.out == Out::F32ChwNorm ? et::DType::F32 : et::DType::F16;
        cfg.mean = kMean;
        cfg.std = kStd;
    }
    if (j.out == Out::I8ChwQuant) {
        cfg.dtype = et::DType::I8;
        cfg.quant = kQuant;
    }
    auto conv = et::Converter::create(cfg);
    if (!conv) {
        state.SkipWithError(conv.error().message().c_str());
        return;
    }
    const Frame& f = frame_for(j);
    std::vector<uint8_t> out(conv->min_plane_stride() ? conv->min_plane_stride() * 3
                                                      : conv->min_row_stride() * j.dh);
    et::SourceFrame src;
    for (size_t p = 0; p < GST_VIDEO_INFO_N_PLANES(&f.info); ++p)
        src.planes[p] = {f.plane(p), f.stride(p)};
    const et::DestFrame dst{out.data(), conv->min_row_stride(), conv->min_plane_stride()};
    for (auto _ : state) {
        auto r = conv->run(src, dst);
        if (!r) {
            state.SkipWithError(r.error().message().c_str());
            break;
        }
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    finish(state, j);
    state.SetLabel(std::string(j.name) + " [" + std::string(conv->simd_level()) + "]");
}

// ---- stock videoconvertscale, the element --------------------------------------------------

void BM_Videoconvertscale(benchmark::State& state)
{
    const Job& j = kJobs[state.range(0)];
    const Frame& f = frame_for(j);
    // Exactly the B element: n-threads=1 and method=bilinear are its defaults anyway.
    GstHarness* h = gst_harness_new_parse("videoconvertscale n-threads=1 method=bilinear");
    if (!h) {
        state.SkipWithError("videoconvertscale is not installed (gstreamer1.0-plugins-base)");
        return;
    }
    gchar* in_caps = g_strdup_printf(
        "video/x-raw,format=%s,width=%zu,height=%zu,framerate=30/1,pixel-aspect-ratio=1/1",
        gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&f.info)), j.sw, j.sh);
    // The letterbox case fixes the output's pixel aspect ratio, so videoconvertscale's default
    // add-borders=true keeps the picture's shape with black bars, as ours does.
    gchar* out_caps = g_strdup_printf("video/x-raw,format=RGB,width=%zu,height=%zu%s", j.dw, j.dh,
                                      j.letterbox ? ",pixel-aspect-ratio=1/1" : "");
    gst_harness_set_src_caps_str(h, in_caps);
    gst_harness_set_sink_caps_str(h, out_caps);
    g_free(in_caps);
    g_free(out_caps);
    GstBuffer* in = gst_buffer_new_allocate(nullptr, f.data.size(), nullptr);
    gst_buffer_fill(in, 0, f.data.data(), f.data.size());
    bool ok = true;
    for (auto _ : state) {
        if (gst_harness_push(h, gst_buffer_ref(in)) != GST_FLOW_OK) {
            ok = false;
            break;
        }
        GstBuffer* outb = gst_harness_pull(h);
        if (!outb) {
            ok = false;
            break;
        }
        benchmark::DoNotOptimize(outb);
        gst_buffer_unref(outb);
    }
    if (!ok)
        state.SkipWithError("videoconvertscale did not convert the frame");
    gst_buffer_unref(in);
    gst_harness_teardown(h);
    finish(state, j);
}

// ---- gst_video_converter_new (the earlier anchor) ------------------------------------------

void BM_GstVideoConverter(benchmark::State& state)
{
    const Job& j = kJobs[state.range(0)];
    const Frame& f = frame_for(j);
    GstVideoInfo out;
    gst_video_info_set_format(&out, GST_VIDEO_FORMAT_RGB, guint(j.dw), guint(j.dh));
    GstStructure* opts = gst_structure_new(
        "options", GST_VIDEO_CONVERTER_OPT_THREADS, G_TYPE_UINT, 1u,
        GST_VIDEO_CONVERTER_OPT_RESAMPLER_METHOD, GST_TYPE_VIDEO_RESAMPLER_METHOD,
        GST_VIDEO_RESAMPLER_METHOD_LINEAR, GST_VIDEO_CONVERTER_OPT_CHROMA_RESAMPLER_METHOD,
        GST_TYPE_VIDEO_RESAMPLER_METHOD, GST_VIDEO_RESAMPLER_METHOD_LINEAR, nullptr);
    GstVideoInfo in = f.info;
    GstVideoConverter* conv = gst_video_converter_new(&in, &out, opts); // takes opts
    if (!conv) {
        state.SkipWithError("gst_video_converter_new failed");
        return;
    }
    GstBuffer* ib = gst_buffer_new_allocate(nullptr, f.data.size(), nullptr);
    gst_buffer_fill(ib, 0, f.data.data(), f.data.size());
    GstBuffer* ob = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&out), nullptr);
    GstVideoFrame fi, fo;
    gst_video_frame_map(&fi, &in, ib, GST_MAP_READ);
    gst_video_frame_map(&fo, &out, ob, GST_MAP_WRITE);
    for (auto _ : state) {
        gst_video_converter_frame(conv, &fi, &fo);
        benchmark::DoNotOptimize(GST_VIDEO_FRAME_PLANE_DATA(&fo, 0));
        benchmark::ClobberMemory();
    }
    gst_video_frame_unmap(&fo);
    gst_video_frame_unmap(&fi);
    gst_buffer_unref(ob);
    gst_buffer_unref(ib);
    gst_video_converter_free(conv);
    finish(state, j);
}

// ---- OpenCV ---------------------------------------------------------------------------------

#ifdef EDGETENSOR_BENCH_OPENCV
void BM_OpenCV(benchmark::State& state)
{
    const Job& j = kJobs[state.range(0)];
    const Frame& f = frame_for(j);
    cv::setNumThreads(1);
    const int sw = int(j.sw), sh = int(j.sh), dw = int(j.dw), dh = int(j.dh);
    const bool nv12 = j.format == et::ConvertFormat::Nv12;
    // NV12 as OpenCV takes it: one 8-bit image of 1.5 x height rows (default strides).
    const cv::Mat src = nv12 ? cv::Mat(sh * 3 / 2, sw, CV_8UC1, const_cast<uint8_t*>(f.plane(0)))
                             : cv::Mat(sh, sw, CV_8UC2, const_cast<uint8_t*>(f.plane(0)));
    const int code = nv12 ? cv::COLOR_YUV2RGB_NV12 : cv::COLOR_YUV2RGB_YUY2;
    cv::Mat rgb(sh, sw, CV_8UC3);
    cv::Mat out(dh, dw, CV_8UC3);
    cv::Mat content = out;
    int top = 0;
    if (j.letterbox) {
        const int ch = int((2 * j.sh * j.dw + j.sw) / (2 * j.sw)); // rounded as ours is
        top = (dh - ch) / 2;
        content = out(cv::Rect(0, top, dw, ch));
    }
    // Float: (v - mean) / std per channel, then one plane per channel (CHW), into the output.
    cv::Mat f32(dh, dw, CV_32FC3);
    std::vector<float> chw(size_t(3 * dw * dh));
    std::vector<cv::Mat> planes;
    for (int c = 0; c < 3; ++c)
        planes.emplace_back(dh, dw, CV_32FC1, chw.data() + size_t(c * dw * dh));
    const cv::Scalar mean(kMean[0], kMean[1], kMean[2]);
    const cv::Scalar inv_std(1.0 / kStd[0], 1.0 / kStd[1], 1.0 / kStd[2]);
    for (auto _ : state) {
        cv::cvtColor(src, rgb, code);
        cv::resize(rgb, content, content.size(), 0, 0, cv::INTER_LINEAR);
        if (j.letterbox) {
            out.rowRange(0, top).setTo(cv::Scalar::all(kFill));
            out.rowRange(top + content.rows, dh).setTo(cv::Scalar::all(kFill));
        }
        if (j.out == Out::F32ChwNorm) {
            out.convertTo(f32, CV_32FC3);
            cv::subtract(f32, mean, f32);
            cv::multiply(f32, inv_std, f32);
            cv::split(f32, planes);
        }
        benchmark::DoNotOptimize(out.data);
        benchmark::DoNotOptimize(chw.data());
        benchmark::ClobberMemory();
    }
    finish(state, j);
}
#endif

// ---- the job's bytes moved in cache -----------------------------------------------------------

/// The floor of mem_floor.hpp copies 64 MiB, far past the L2; a job's frame and tensor (4.3 MB
/// for 1080p -> 640x640 RGB) are reused every iteration, like the engine's, and may stay in a
/// large last-level cache. This moves exactly the job's bytes the same way: memcpy of the
/// smaller of the two sizes from the frame into the tensor, then a read of the rest of the
/// frame or a memset of the rest of the tensor.
void BM_MoveBytes(benchmark::State& state)
{
    const Job& j = kJobs[state.range(0)];
    const Frame& f = frame_for(j);
    const size_t r = size_t(bytes_read(j)), w = size_t(bytes_written(j));
    std::vector<uint8_t> out(w);
    const size_t copied = std::min(r, w);
    for (auto _ : state) {
        std::memcpy(out.data(), f.data.data(), copied);
        if (w > copied)
            std::memset(out.data() + copied, 0x5a, w - copied);
        uint64_t sum = 0;
        for (size_t i = copied; i + 8 <= r; i += 8) {
            uint64_t v;
            std::memcpy(&v, f.data.data() + i, 8);
            sum += v;
        }
        benchmark::DoNotOptimize(sum);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    finish(state, j);
}

// ---- registration -----------------------------------------------------------------------------

double min_of(const std::vector<double>& v)
{
    return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
}

void one_thread_jobs(benchmark::internal::Benchmark* b, std::initializer_list<int64_t> jobs)
{
    b->ArgNames({"job"})->Unit(benchmark::kMillisecond)->ComputeStatistics("min", min_of);
    for (const int64_t j : jobs)
        b->Arg(j);
}

const bool kRegistered = [] {
    // One thread, CPU time.
    auto* et1 = benchmark::RegisterBenchmark("BM_Edgetensor", BM_Edgetensor)
                    ->ArgNames({"job", "threads"})
                    ->Unit(benchmark::kMillisecond)
                    ->ComputeStatistics("min", min_of);
    for (int64_t j = 0; j < kJobCount; ++j)
        et1->Args({j, 1});
    one_thread_jobs(benchmark::RegisterBenchmark("BM_Videoconvertscale", BM_Videoconvertscale),
                    {kRgb, kLetterbox, kYuy2, k4k, kRgb500});
#ifdef EDGETENSOR_BENCH_OPENCV
    one_thread_jobs(benchmark::RegisterBenchmark("BM_OpenCV", BM_OpenCV),
                    {kRgb, kF32, kLetterbox, kYuy2, k4k, kRgb500});
#endif
    one_thread_jobs(benchmark::RegisterBenchmark("BM_GstVideoConverter", BM_GstVideoConverter),
                    {kRgb});
    one_thread_jobs(benchmark::RegisterBenchmark("BM_MoveBytes", BM_MoveBytes),
                    {kRgb, kF32, kYuy2, k4k});
    // Thread scaling: wall-clock time (CPU time would only count the calling thread).
    auto* et_mt = benchmark::RegisterBenchmark("BM_EdgetensorWall", BM_Edgetensor)
                      ->ArgNames({"job", "threads"})
                      ->Unit(benchmark::kMillisecond)
                      ->UseRealTime()
                      ->ComputeStatistics("min", min_of);
    for (const int64_t j : {kRgb, kF32, k4k})
        for (const int64_t t : {1, 2})
            et_mt->Args({j, t});
    return true;
}();

using edgetensor::bench::RunTimes;

/// Keeps each case's time per frame so the summary can put the targets side by side.
class Summary : public edgetensor::bench::SummaryReporter
{
    void summary() override
    {
        std::printf("\nsummary: ms per frame (one thread: CPU time; threads: wall time), "
                    "ratio = their time / ours; floor = bytes read once + written once at %.1f "
                    "GB/s (memcpy, 64 MiB), x = ours / floor\n",
                    edgetensor::bench::copy_bandwidth_bytes_per_s() * 1e-9);
        std::printf("  %-52s %9s %9s %7s %9s %7s %8s %6s %8s %6s\n", "job", "edgetensor",
                    "videocvt", "ratio", "opencv", "ratio", "floor", "x", "moved", "x");
        for (int64_t j = 0; j < kJobCount; ++j) {
            const double ours = times_.get("BM_Edgetensor/job:" + std::to_string(j) + "/threads:1");
            const double vcs = times_.get("BM_Videoconvertscale/job:" + std::to_string(j));
            const double cv = times_.get("BM_OpenCV/job:" + std::to_string(j));
            if (ours <= 0)
                continue;
            const double floor = job_floor_ms(kJobs[j]);
            const double moved = times_.get("BM_MoveBytes/job:" + std::to_string(j));
            std::printf("  %-52s %9.3f %9s %7s %9s %7s %8.3f %5.2fx %8s %6s\n", kJobs[j].name, ours,
                        RunTimes::ms(vcs).c_str(), RunTimes::ratio(vcs, ours).c_str(),
                        RunTimes::ms(cv).c_str(), RunTimes::ratio(cv, ours).c_str(), floor,
                        ours / floor, RunTimes::ms(moved).c_str(),
                        RunTimes::ratio(ours, moved).c_str());
        }
        const double ours = times_.get("BM_Edgetensor/job:0/threads:1");
        const double vcs = times_.get("BM_Videoconvertscale/job:0");
        const double cv = times_.get("BM_OpenCV/job:0");
        const double f32 = times_.get("BM_Edgetensor/job:1/threads:1");
        const double old = times_.get("BM_GstVideoConverter/job:0");
        const double q8 =
            times_.get("BM_Edgetensor/job:" + std::to_string(kI8Quant) + "/threads:1");
        std::printf("\ntargets (one thread unless stated):\n");
        if (ours > 0 && vcs > 0)
            std::printf("  in-process vs videoconvertscale element: %.2fx (the >= 3x target is "
                        "for whole gst-launch-1.0 pipelines; see bench/)\n",
                        vcs / ours);
        if (ours > 0 && cv > 0)
            std::printf("  engine vs OpenCV cvtColor + resize: %.2fx (target >= 2.5x)\n",
                        cv / ours);
        if (ours > 0 && f32 > 0)
            std::printf("  f32 CHW normalised / u8 HWC time: %.2fx (target <= 1.5x)\n", f32 / ours);
        if (q8 > 0 && f32 > 0)
            std::printf("  int8 quantized CHW / f32 CHW normalised time: %.2fx (target: at most a "
                        "few percent above 1x)\n",
                        q8 / f32);
        if (old > 0 && vcs > 0)
            std::printf("  gst_video_converter_new anchor: %.3f ms, %.2fx the element's time\n",
                        old, old / vcs);
        for (const int64_t j : {kRgb, kF32, k4k}) {
            const std::string base = "BM_EdgetensorWall/job:" + std::to_string(j) + "/threads:";
            const double t1 = times_.get(base + "1"), t2 = times_.get(base + "2");
            if (t1 > 0 && t2 > 0)
                std::printf("  threads 2 vs 1, %s: %.2fx (target >= 1.7x on an idle machine; "
                            "wall time)\n",
                            kJobs[j].name, t1 / t2);
        }
    }
};

} // namespace

int main(int argc, char** argv)
{
    gst_init(&argc, &argv);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    (void)kRegistered;
    Summary reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}
