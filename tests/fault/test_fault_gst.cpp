// SPDX-License-Identifier: MIT
//
// Fault injection under the elements (one scenario per process, tests/fault/meson.build): the
// pipeline either recovers as documented (a fallback provider, a copy, the mapped path) or stops
// with an element error that names the failed call and its errno, within a timeout, leaving no
// fd or tensor storage behind; and a pool is usable again once the call works.

#include "../gst/element_harness.hpp"
#include "fault_util.hpp"
#include "pool_acquire.hpp"
#include "require.hpp"
#include "text_match.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>

#include <edgetensor/dma.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

using detail::FaultPoint;

constexpr const char* kCaps = "video/x-raw,format=NV12,width=64,height=48,framerate=30/1";
constexpr gsize kFrame = 64 * 48 * 3 / 2;

// What the sink saw: frames and the providers of their tensors.
struct SinkLog {
    std::mutex mu;
    int frames = 0;
    std::set<std::string> providers;
};

GstPadProbeReturn log_buffer(GstPad*, GstPadProbeInfo* info, gpointer data)
{
    auto* log = static_cast<SinkLog*>(data);
    auto t = gst::tensor_from_buffer(GST_PAD_PROBE_INFO_BUFFER(info));
    std::lock_guard<std::mutex> lock(log->mu);
    log->frames++;
    if (t)
        log->providers.insert(std::string(t->provider()));
    return GST_PAD_PROBE_OK;
}

class FaultGst : public ::testing::Test
{
protected:
    void SetUp() override
    {
        ASSERT_TRUE(load_system_plugin("coreelements"));
        // The providers are probed once per process: probe now, so the calls a scenario counts
        // ("@skip") are the pipeline's.
        is_dma_available();
        is_shm_available();
        // Process-wide GStreamer singletons (the system clock's fds, thread pools) are created
        // by the first pipeline; make them before anything is counted.
        run_launch("fakesrc num-buffers=2 ! fakesink sync=true");
    }

    // tensortestsrc ! tensorimport ! tensorconvert ! fakesink, `frames` frames.
    PipelineRun run_chain(const std::string& import_props = "", int frames = 20,
                          SinkLog* log = nullptr, guint64* copies = nullptr)
    {
        const std::string launch = "tensortestsrc name=src num-buffers=" + std::to_string(frames) +
                                   " ! " + kCaps + " ! tensorimport name=imp " + import_props +
                                   " ! tensorconvert width=32 height=32 ! fakesink name=sink";
        GstElement* pipeline = parse_launch(launch);
        if (!pipeline)
            return {};
        if (log) {
            GstObjectPtr<GstElement> sink(gst_bin_get_by_name(GST_BIN(pipeline), "sink"));
            GstObjectPtr<GstPad> pad(gst_element_get_static_pad(sink.get(), "sink"));
            gst_pad_add_probe(pad.get(), GST_PAD_PROBE_TYPE_BUFFER, log_buffer, log, nullptr);
        }
        PipelineRun r = run_pipeline(pipeline);
        if (copies) {
            GstObjectPtr<GstElement> imp(gst_bin_get_by_name(GST_BIN(pipeline), "imp"));
            g_object_get(imp.get(), "copies", copies, nullptr);
        }
        EXPECT_TRUE(unref_and_wait_finalized(pipeline)) << "the pipeline outlives its last "
                                                           "reference";
        EXPECT_FALSE(r.timed_out) << "no deadlock: the pipeline must end";
        return r;
    }
};

UniqueFd memfd_with(gsize size)
{
    UniqueFd fd(memfd_create("fault-gst-test", MFD_CLOEXEC));
    EXPECT_TRUE(fd);
    EXPECT_EQ(ftruncate(fd.get(), off_t(size)), 0);
    return fd;
}

// A frame in a memfd, as a foreign fd memory (the import cache's input). The duplicate is made
// with fcntl, not UniqueFd::dup: the test's own dup must not hit the fault.
BufferPtr memfd_frame(int fd)
{
    AllocatorPtr alloc(gst_fd_allocator_new());
    GstMemory* mem = gst_fd_allocator_alloc(alloc.get(), fcntl(fd, F_DUPFD_CLOEXEC, 0), kFrame,
                                            GST_FD_MEMORY_FLAG_NONE);
    GstBuffer* b = gst_buffer_new();
    gst_buffer_append_memory(b, mem);
    return BufferPtr(b);
}

// ---- host calls -----------------------------------------------------------------------------

TEST_F(FaultGst, MemfdFailureFallsBackToShmOpenAndThePipelineRuns)
{
    ET_REQUIRE_FAULT("memfd-create=EMFILE");
    const Footprint before;
    SinkLog log;
    const PipelineRun r = run_chain("", 20, &log);
    EXPECT_TRUE(r.eos) << r.errors;
    EXPECT_EQ(log.frames, 20);
    if (!is_dma_available()) {
        EXPECT_EQ(log.providers, std::set<std::string>{"shm_open"});
        EXPECT_GE(injected(FaultPoint::MemfdCreate), 1u);
    }
    expect_same_footprint(before, "after the pipeline");
}

TEST_F(FaultGst, AnMmapFailureInAPoolIsAnElementErrorNamingMmapAndThePipelineRunsAgain)
{
    ET_REQUIRE_FAULT("mmap=ENOMEM@2*1");
    if (is_dma_available())
        GTEST_SKIP() << "DMA-BUF pools map lazily, through GStreamer: no mmap of ours here";
    const Footprint before;
    const PipelineRun r = run_chain();
    EXPECT_FALSE(r.eos);
    EXPECT_TRUE(contains(r.errors, "Cannot allocate")) << r.errors;
    EXPECT_TRUE(contains(r.errors, "mmap")) << r.errors;
    EXPECT_TRUE(contains(r.errors, "(ENOMEM)")) << r.errors;
    EXPECT_EQ(injected(FaultPoint::Mmap), 1u);
    expect_same_footprint(before, "after the failed pipeline");
    const PipelineRun again = run_chain();
    EXPECT_TRUE(again.eos) << again.errors;
    expect_same_footprint(before, "after the second pipeline");
}

TEST_F(FaultGst, APoolIsUsableAgainAfterAFailedAllocation)
{
    ET_REQUIRE_FAULT("mmap=ENOMEM@2*1"); // call 0 was the shm probe in SetUp
    if (is_dma_available())
        GTEST_SKIP() << "DMA-BUF pools map lazily, through GStreamer: no mmap of ours here";
    const Footprint before;
    {
        PoolPtr pool = make_active_pool(kCaps, {.min = 1}); // mmap 1
        ASSERT_TRUE(pool);
        std::vector<BufferPtr> held;
        held.push_back(acquire(pool.get())); // the preallocated one
        GstBuffer* b = nullptr;
        EXPECT_EQ(gst_buffer_pool_acquire_buffer(pool.get(), &b, nullptr), GST_FLOW_ERROR);
        int err = 0;
        const std::string why = gst::take_pool_error(pool.get(), &err);
        EXPECT_TRUE(contains(why, "mmap")) << why;
        EXPECT_EQ(err, ENOMEM) << why;
        held.push_back(acquire(pool.get())); // mmap 3: the pool goes on
        held.push_back(acquire(pool.get()));
        EXPECT_TRUE(held.back());
        held.clear();
        EXPECT_TRUE(gst_buffer_pool_set_active(pool.get(), FALSE));
    }
    expect_same_footprint(before, "after the pool");
}

TEST_F(FaultGst, FstatFailureWithCopyModeNeverIsAnErrorNamingFstat)
{
    ET_REQUIRE_FAULT("fstat=EIO");
    const Footprint before;
    const PipelineRun r = run_chain("copy-mode=never");
    EXPECT_FALSE(r.eos);
    EXPECT_TRUE(contains(r.errors, "Cannot import a buffer")) << r.errors;
    EXPECT_TRUE(contains(r.errors, "fstat")) << r.errors;
    EXPECT_TRUE(contains(r.errors, "(EIO)")) << r.errors;
    expect_same_footprint(before, "after the failed pipeline");
}

TEST_F(FaultGst, OneFstatFailureIsCopiedAroundCountedAndWarned)
{
    ET_REQUIRE_FAULT("fstat=EIO*1");
    const Footprint before;
    guint64 copies = 0;
    SinkLog log;
    const PipelineRun r = run_chain("copy-mode=auto", 20, &log, &copies);
    EXPECT_TRUE(r.eos) << r.errors;
    EXPECT_EQ(log.frames, 20);
    EXPECT_EQ(copies, 1u) << "only the frame whose import failed";
    EXPECT_TRUE(contains(r.warnings, "fstat")) << r.warnings;
    EXPECT_TRUE(contains(r.warnings, "(EIO)")) << r.warnings;
    expect_same_footprint(before, "after the pipeline");
}

TEST_F(FaultGst, DupFailureOnAForeignFdNamesDupAndTensorconvertMapsInstead)
{
    ET_REQUIRE_FAULT("dup=EMFILE");
    UniqueFd fd = memfd_with(kFrame);
    const Footprint before;
    {
        ElementHarness t("tensorimport copy-mode=never");
        gst_harness_set_src_caps_str(t.get(), kCaps);
        EXPECT_EQ(gst_harness_push(t.get(), memfd_frame(fd.get()).release()), GST_FLOW_ERROR);
        const std::string err = t.messages(GST_MESSAGE_ERROR);
        EXPECT_TRUE(contains(err, "dup")) << err;
        EXPECT_TRUE(contains(err, "(EMFILE)")) << err;
    }
    {
        // tensorconvert documents the fallback: input it cannot import is mapped.
        ElementHarness t("tensorconvert width=16 height=16");
        gst_harness_set_sink_caps_str(t.get(), "other/tensors");
        gst_harness_set_src_caps_str(t.get(), kCaps);
        for (int n = 0; n < 3; ++n) {
            EXPECT_EQ(gst_harness_push(t.get(), memfd_frame(fd.get()).release()), GST_FLOW_OK)
                << t.messages(GST_MESSAGE_ERROR);
            BufferPtr out(gst_harness_try_pull(t.get()));
            EXPECT_TRUE(out);
        }
    }
    EXPECT_GE(injected(FaultPoint::Dup), 4u);
    expect_same_footprint(before, "after the elements");
}

TEST_F(FaultGst, FstatfsFailureOnAForeignFdIsAnErrorNamingFstatfs)
{
    ET_REQUIRE_FAULT("fstatfs=EIO");
    UniqueFd fd = memfd_with(kFrame);
    const Footprint before;
    {
        ElementHarness t("tensorimport copy-mode=never");
        gst_harness_set_src_caps_str(t.get(), kCaps);
        EXPECT_EQ(gst_harness_push(t.get(), memfd_frame(fd.get()).release()), GST_FLOW_ERROR);
        const std::string err = t.messages(GST_MESSAGE_ERROR);
        EXPECT_TRUE(contains(err, "fstatfs")) << err;
        EXPECT_TRUE(contains(err, "(EIO)")) << err;
    }
    expect_same_footprint(before, "after the element");
}

// ---- DMA-BUF calls (the VM lane) ------------------------------------------------------------

TEST_F(FaultGst, DmaHeapFailureFallsBackToUdmabufAndThePipelineRuns)
{
    ET_REQUIRE_FAULT("dma-heap-alloc=ENOMEM@1");
    ET_REQUIRE_DMA_OR_SKIP();
    const Footprint before;
    SinkLog log;
    const PipelineRun r = run_chain("", 20, &log);
    EXPECT_TRUE(r.eos) << r.errors;
    EXPECT_EQ(log.frames, 20);
    EXPECT_EQ(log.providers, std::set<std::string>{"udmabuf"});
    EXPECT_GE(injected(FaultPoint::DmaHeapAlloc), 1u);
    expect_same_footprint(before, "after the pipeline");
}

TEST_F(FaultGst, UdmabufFailureToo_FallsBackToDrmPrimeAndThePipelineRuns)
{
    ET_REQUIRE_FAULT("dma-heap-alloc=ENOMEM@1,udmabuf-create=ENOMEM@1");
    ET_REQUIRE_DMA_OR_SKIP();
    if (!is_drm_prime_available())
        GTEST_SKIP() << "no drm-prime provider";
    const Footprint before;
    SinkLog log;
    const PipelineRun r = run_chain("", 20, &log);
    EXPECT_TRUE(r.eos) << r.errors;
    ASSERT_EQ(log.providers.size(), 1u);
    EXPECT_EQ(log.providers.begin()->substr(0, 9), "drm-prime");
    expect_same_footprint(before, "after the pipeline");
}

TEST_F(FaultGst, NoDmaProviderLeftIsAnElementErrorNamingTheIoctlAndErrno)
{
    // With EDGETENSOR_DMA_PROVIDERS=dma-heap (meson sets it for this test).
    ET_REQUIRE_FAULT("dma-heap-alloc=ENOMEM@1");
    ET_REQUIRE_DMA_OR_SKIP();
    auto order = active_dma_providers();
    if (!order || order->size() != 1)
        GTEST_SKIP() << "needs EDGETENSOR_DMA_PROVIDERS=dma-heap";
    const Footprint before;
    const PipelineRun r = run_chain();
    EXPECT_FALSE(r.eos);
    EXPECT_TRUE(contains(r.errors, "Cannot allocate")) << r.errors;
    EXPECT_TRUE(contains(r.errors, "DMA_HEAP_IOCTL_ALLOC")) << r.errors;
    EXPECT_TRUE(contains(r.errors, "(ENOMEM)")) << r.errors;
    expect_same_footprint(before, "after the failed pipeline");
}

// A foreign DMA-BUF frame (what a camera sends): tensorconvert takes the tensor path, which maps
// with DMA_BUF_IOCTL_SYNC (and so do its output buffers, our memories, whichever path). Returns
// the outputs of `n` conversions, then the reference from the same bytes in system memory, and
// the error messages posted.
void convert_dma_input(int n, std::vector<std::vector<guint8>>* outs, std::vector<guint8>* ref,
                       guint64* misses, std::string* errors = nullptr)
{
    auto t = TensorDyn::create(DType::U8, {kFrame}, TensorMemory::Dma);
    ASSERT_TRUE(t) << t.error().message();
    auto fd = t->clone_fd();
    ASSERT_TRUE(fd);
    AllocatorPtr dmabuf(gst_dmabuf_allocator_new());
    GstMemory* mem = gst_dmabuf_allocator_alloc(dmabuf.get(), fd->release(), kFrame);
    BufferPtr in(gst_buffer_new());
    gst_buffer_append_memory(in.get(), mem);
    std::vector<guint8> bytes(kFrame);
    for (gsize i = 0; i < kFrame; ++i)
        bytes[i] = guint8(i * 13 + 5);
    gst_buffer_fill(in.get(), 0, bytes.data(), bytes.size()); // GStreamer's map: no SYNC of ours

    ElementHarness c("tensorconvert width=16 height=16");
    gst_harness_set_sink_caps_str(c.get(), "other/tensors");
    gst_harness_set_src_caps_str(c.get(), kCaps);
    auto pull = [&](GstBuffer* b) {
        const GstFlowReturn r = gst_harness_push(c.get(), b);
        if (!errors) {
            EXPECT_EQ(r, GST_FLOW_OK) << c.messages(GST_MESSAGE_ERROR);
        }
        BufferPtr out(gst_harness_try_pull(c.get()));
        std::vector<guint8> v(out ? gst_buffer_get_size(out.get()) : 0);
        if (out)
            gst_buffer_extract(out.get(), 0, v.data(), v.size());
        return v;
    };
    for (int i = 0; i < n; ++i)
        outs->push_back(pull(gst_buffer_ref(in.get())));
    *ref = pull(gst_buffer_new_memdup(bytes.data(), bytes.size()));
    g_object_get(c.element, "cache-misses", misses, nullptr);
    if (errors)
        *errors = c.messages(GST_MESSAGE_ERROR);
}

TEST_F(FaultGst, ASyncFailureOnTheTensorPathFallsBackToTheMappedPath)
{
    ET_REQUIRE_FAULT("dma-buf-sync=EIO*1");
    ET_REQUIRE_DMA_OR_SKIP();
    const Footprint before;
    std::vector<std::vector<guint8>> outs;
    std::vector<guint8> ref;
    guint64 misses = 0;
    convert_dma_input(3, &outs, &ref, &misses);
    ASSERT_FALSE(ref.empty());
    for (const auto& o : outs)
        EXPECT_EQ(o, ref) << "the mapped path gives the same tensor";
    EXPECT_EQ(misses, 1u) << "the input was imported (the tensor path was tried)";
    EXPECT_EQ(injected(FaultPoint::DmaBufSync), 1u);
    expect_same_footprint(before, "after the element");
}

TEST_F(FaultGst, PersistentSyncFailureIsAnElementErrorNamingTheIoctlAndErrno)
{
    ET_REQUIRE_FAULT("dma-buf-sync=EIO");
    ET_REQUIRE_DMA_OR_SKIP();
    const Footprint before;
    std::vector<std::vector<guint8>> outs;
    std::vector<guint8> ref;
    guint64 misses = 0;
    std::string errors;
    convert_dma_input(1, &outs, &ref, &misses, &errors);
    // No CPU access to a DMA-BUF of ours is possible: the output cannot be written.
    EXPECT_TRUE(outs.front().empty());
    EXPECT_TRUE(contains(errors, "Cannot map the output")) << errors;
    EXPECT_TRUE(contains(errors, "DMA_BUF_IOCTL_SYNC")) << errors;
    EXPECT_TRUE(contains(errors, "(EIO)")) << errors;
    expect_same_footprint(before, "after the element");
}

TEST_F(FaultGst, InterruptedSyncsAreRetriedOnTheTensorPath)
{
    ET_REQUIRE_FAULT("dma-buf-sync=EINTR*2");
    ET_REQUIRE_DMA_OR_SKIP();
    const Footprint before;
    std::vector<std::vector<guint8>> outs;
    std::vector<guint8> ref;
    guint64 misses = 0;
    convert_dma_input(3, &outs, &ref, &misses);
    for (const auto& o : outs)
        EXPECT_EQ(o, ref);
    EXPECT_EQ(injected(FaultPoint::DmaBufSync), 2u);
    EXPECT_GT(detail::fault_calls(FaultPoint::DmaBufSync), 2u);
    expect_same_footprint(before, "after the element");
}

// ---- exceptions at the GStreamer boundary (gst/libs/vfunc_guard.hpp) ------------------------

// Skips unless the "throw" point is limited to the guards named `where`.
#define ET_REQUIRE_THROW_AT(where)                                                                 \
    do {                                                                                           \
        const char* at = std::getenv("EDGETENSOR_FAULT_THROW_AT");                                 \
        if (std::string(at ? at : "") != (where))                                                  \
            GTEST_SKIP() << "needs EDGETENSOR_FAULT_THROW_AT=" << (where);                         \
    } while (0)

TEST_F(FaultGst, AnExceptionInTransformIsAnElementErrorNamingItAndThePipelineRunsAgain)
{
    ET_REQUIRE_FAULT("throw=ENOMEM@5*1");
    ET_REQUIRE_THROW_AT("transform");
    const Footprint before;
    const PipelineRun r = run_chain();
    EXPECT_FALSE(r.eos);
    EXPECT_TRUE(contains(r.errors, "Out of memory in transform of tensorconvert")) << r.errors;
    EXPECT_EQ(injected(FaultPoint::Throw), 1u) << "the sixth frame's transform threw";
    expect_same_footprint(before, "after the failed pipeline");
    const PipelineRun again = run_chain();
    EXPECT_TRUE(again.eos) << again.errors;
    expect_same_footprint(before, "after the second pipeline");
}

TEST_F(FaultGst, AnExceptionInTheStatsEntryLeavesTheStreamAlone)
{
    // tensorimport builds its statistics at EOS through gst_edge_tensor_import_cache_get_stats,
    // which allocates: out of memory there it returns NULL, logged, and EOS goes on.
    ET_REQUIRE_FAULT("throw=ENOMEM*1");
    ET_REQUIRE_THROW_AT("gst_edge_tensor_import_cache_get_stats");
    const Footprint before;
    const PipelineRun r = run_chain();
    EXPECT_TRUE(r.eos) << r.errors;
    EXPECT_EQ(injected(FaultPoint::Throw), 1u);
    expect_same_footprint(before, "after the pipeline");
}

TEST_F(FaultGst, AnExceptionInGetPropertyIsAnElementErrorAndTheValueStaysUnset)
{
    ET_REQUIRE_FAULT("throw=ENOMEM");
    ET_REQUIRE_THROW_AT("get_property");
    GstObjectPtr<GstElement> imp(gst_element_factory_make("tensorimport", "imp"));
    ASSERT_TRUE(imp);
    GstObjectPtr<GstBus> bus(gst_bus_new());
    gst_element_set_bus(imp.get(), bus.get());
    GstStructure* stats = nullptr;
    g_object_get(imp.get(), "stats", &stats, nullptr);
    EXPECT_EQ(stats, nullptr);
    GstMessage* m = gst_bus_pop_filtered(bus.get(), GST_MESSAGE_ERROR);
    ASSERT_TRUE(m);
    GError* e = nullptr;
    gst_message_parse_error(m, &e, nullptr);
    EXPECT_STREQ(e->message, "Out of memory in get_property of imp.");
    g_error_free(e);
    gst_message_unref(m);
    EXPECT_GE(injected(FaultPoint::Throw), 1u);
    gst_element_set_bus(imp.get(), nullptr);
}

TEST_F(FaultGst, ExceptionsEverywhereEndThePipelineWithAnErrorNeverACrash)
{
    // Every guarded vfunc, property accessor and C entry throws: the pipeline does not start,
    // says why, and leaves nothing behind.
    ET_REQUIRE_FAULT("throw=ENOMEM");
    ET_REQUIRE_THROW_AT("");
    const Footprint before;
    const PipelineRun r = run_chain();
    EXPECT_FALSE(r.eos);
    EXPECT_TRUE(contains(r.errors, "Out of memory in ")) << r.errors;
    EXPECT_GE(injected(FaultPoint::Throw), 1u);
    expect_same_footprint(before, "after the failed pipeline");
}

} // namespace
} // namespace edgetensor::test
