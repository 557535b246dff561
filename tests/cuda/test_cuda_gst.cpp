// SPDX-License-Identifier: MIT
//
// tensorconvert's output buffers through CUDA, end to end: a pipeline's appsink hands over
// buffers of our pool, the tensor behind each one is mapped for CUDA and copied back with
// cudaMemcpy, and the bytes equal what a CPU map of the same buffer reads. On a host without
// DMA-BUF the pool hands out shared memory, which CUDA registers in place; in the VM lane
// (EDGETENSOR_TEST_REQUIRE_DMA=1) every output buffer is a DMA-BUF, imported. Either way every
// frame goes through CUDA.

#include "cuda_test_util.hpp"
#include "glib_raii.hpp"
#include "require.hpp"

#include <gst/app/gstappsink.h>
#include <gst/edgetensor/edgetensor.hpp>
#include <gst/gst.h>

#include <algorithm>
#include <dlfcn.h>
#include <filesystem>

namespace edgetensor::test
{
namespace
{

using gst::GstObjectPtr;
using gst::MiniObjectPtr;

/// The stock elements the pipeline uses, loaded by file (the test's system plugin path is
/// empty, so nothing else is scanned).
bool load_stock_plugins()
{
    static const bool ok = [] {
        Dl_info info{};
        if (!dladdr(reinterpret_cast<void*>(&gst_init), &info) || !info.dli_fname)
            return false;
        const auto dir = std::filesystem::path(info.dli_fname).parent_path() / "gstreamer-1.0";
        for (const char* name : {"coreelements", "app"}) {
            const std::string file = (dir / (std::string("libgst") + name + ".so")).string();
            GError* err = nullptr;
            GstPlugin* p = gst_plugin_load_file(file.c_str(), &err);
            if (!p) {
                ADD_FAILURE() << "cannot load " << file << ": " << (err ? err->message : "?");
                g_clear_error(&err);
                return false;
            }
            gst_object_unref(p);
        }
        return true;
    }();
    return ok;
}

using CudaGst = CudaTest;

TEST_F(CudaGst, TensorconvertOutputThroughCudaEqualsItsCpuBytes)
{
    ASSERT_TRUE(load_stock_plugins());
    GError* err = nullptr;
    GstObjectPtr<GstElement> pipe(
        gst_parse_launch("tensortestsrc num-buffers=4 pattern=checkers ! "
                         "video/x-raw,format=NV12,width=160,height=120 ! "
                         "tensorconvert width=64 height=64 dtype=float32 layout=chw std=255 ! "
                         "appsink name=sink sync=false",
                         &err));
    ASSERT_TRUE(pipe && !err) << (err ? err->message : "?");
    GstObjectPtr<GstElement> sink(gst_bin_get_by_name(GST_BIN(pipe.get()), "sink"));
    ASSERT_EQ(gst_element_set_state(pipe.get(), GST_STATE_PLAYING), GST_STATE_CHANGE_ASYNC);
    size_t frames = 0, through_cuda = 0;
    while (MiniObjectPtr<GstSample> s{
        gst_app_sink_try_pull_sample(GST_APP_SINK(sink.get()), 20 * GST_SECOND)}) {
        GstBuffer* buf = gst_sample_get_buffer(s.get());
        ASSERT_NE(buf, nullptr);
        auto t = gst::tensor_from_buffer(buf);
        ASSERT_TRUE(t) << "tensorconvert's buffer carries no tensor";
        ++frames;
        if (dma_required()) {
            EXPECT_EQ(t->memory(), TensorMemory::Dma);
        }
        auto m = t->cuda_map();
        ASSERT_TRUE(m) << m.error().message();
        ASSERT_EQ(m->size_bytes(), 3u * 64 * 64 * 4);
        auto host = copy_to_host(*m, m->size_bytes());
        m->reset();
        GstMapInfo info;
        ASSERT_TRUE(gst_buffer_map(buf, &info, GST_MAP_READ));
        ASSERT_GE(info.size, host.size());
        EXPECT_EQ(std::memcmp(info.data, host.data(), host.size()), 0) << "frame " << frames;
        // Not a blank frame: white squares normalised to 0..1 are near 1.
        const auto* f = reinterpret_cast<const float*>(host.data());
        EXPECT_GT(*std::max_element(f, f + host.size() / 4), 0.5f);
        gst_buffer_unmap(buf, &info);
        ++through_cuda;
    }
    gst_element_set_state(pipe.get(), GST_STATE_NULL);
    EXPECT_EQ(frames, 4u);
    EXPECT_EQ(through_cuda, frames);
    std::printf("%zu frames, %zu through CUDA\n", frames, through_cuda);
}

} // namespace
} // namespace edgetensor::test
