// SPDX-License-Identifier: MIT
//
// The per-frame cost of reaching our memories from the CPU, counted in a real pipeline:
// `tensortestsrc ! tensorconvert ! fakesink` writes every frame into pooled edgetensor memories
// (the source through gst_video_frame_map, tensorconvert through gst_video_frame_map or
// gst_buffer_map). Those maps must go through the tensor's persistent mapping, so after warm-up
// no frame may mmap or munmap anything, and page faults stay far below one frame's pages. The
// frames are small because the same test runs in the VM lane under TCG; what it counts does not
// depend on the size. 192 pixels of RGB are 576 bytes, a multiple of 64: a row that is not
// needs GstVideoMeta to describe the DMA-BUF pool's aligned stride, fakesink cannot read it,
// and tensorconvert rightly falls back to shared memory.
//
// Across processes the same holds for a receiver whose consumer maps every frame (a stock
// converter, an app): tensoripcsrc maps each of the sender's memfds once, where a fresh fd
// memory per frame would be mapped and unmapped on every frame.
//
// mmap/munmap are counted by interposing them in this executable (it comes first in symbol
// lookup, so every library's calls land here); not built under sanitizers, which interpose
// them too. fstat is counted the same way: the receiver asks which file each received fd is
// once per frame (the check that it is a sealed memfd of the size described), and every later
// lookup by file (its kept mapping, the import cache) reuses that answer. fcntl(F_GET_SEALS)
// too: a memfd's seals are asked when it first comes, not again while the receiver keeps it.

#include "gst_test_util.hpp"
#include "ipc_test_util.hpp"

#include <gst/allocators/allocators.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>

namespace
{

std::atomic<uint64_t> g_mmaps{0};
std::atomic<uint64_t> g_munmaps{0};
std::atomic<uint64_t> g_fstats{0};
std::atomic<uint64_t> g_seal_reads{0};

using MmapFn = void* (*)(void*, size_t, int, int, int, off_t);
using MunmapFn = int (*)(void*, size_t);
using FstatFn = int (*)(int, struct stat*);
using FstatatFn = int (*)(int, const char*, struct stat*, int);
using FcntlFn = int (*)(int, int, ...);

template <typename Fn> Fn next_symbol(const char* name)
{
    return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

} // namespace

// Assembler names, because with _FILE_OFFSET_BITS=64 the headers rename `mmap` to mmap64.
extern "C" void* counted_mmap(void*, size_t, int, int, int, off_t) __asm__("mmap");
extern "C" void* counted_mmap64(void*, size_t, int, int, int, off_t) __asm__("mmap64");
extern "C" int counted_munmap(void*, size_t) __asm__("munmap");

extern "C" void* counted_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off)
{
    static const MmapFn real = next_symbol<MmapFn>("mmap");
    g_mmaps.fetch_add(1, std::memory_order_relaxed);
    return real(addr, len, prot, flags, fd, off);
}
extern "C" void* counted_mmap64(void* addr, size_t len, int prot, int flags, int fd, off_t off)
{
    static const MmapFn real = next_symbol<MmapFn>("mmap64");
    g_mmaps.fetch_add(1, std::memory_order_relaxed);
    return real(addr, len, prot, flags, fd, off);
}
extern "C" int counted_munmap(void* addr, size_t len)
{
    static const MunmapFn real = next_symbol<MunmapFn>("munmap");
    g_munmaps.fetch_add(1, std::memory_order_relaxed);
    return real(addr, len);
}

// Every name glibc gives fstat: callers built with _FILE_OFFSET_BITS=64 call the *64 ones.
extern "C" int counted_fstat(int, struct stat*) __asm__("fstat");
extern "C" int counted_fstat64(int, struct stat*) __asm__("fstat64");
extern "C" int counted_fstatat(int, const char*, struct stat*, int) __asm__("fstatat");
extern "C" int counted_fstatat64(int, const char*, struct stat*, int) __asm__("fstatat64");

extern "C" int counted_fstat(int fd, struct stat* st)
{
    static const FstatFn real = next_symbol<FstatFn>("fstat");
    g_fstats.fetch_add(1, std::memory_order_relaxed);
    return real(fd, st);
}
extern "C" int counted_fstat64(int fd, struct stat* st)
{
    static const FstatFn real = next_symbol<FstatFn>("fstat64");
    g_fstats.fetch_add(1, std::memory_order_relaxed);
    return real(fd, st);
}
extern "C" int counted_fstatat(int dirfd, const char* path, struct stat* st, int flags)
{
    static const FstatatFn real = next_symbol<FstatatFn>("fstatat");
    g_fstats.fetch_add(1, std::memory_order_relaxed);
    return real(dirfd, path, st, flags);
}
extern "C" int counted_fstatat64(int dirfd, const char* path, struct stat* st, int flags)
{
    static const FstatatFn real = next_symbol<FstatatFn>("fstatat64");
    g_fstats.fetch_add(1, std::memory_order_relaxed);
    return real(dirfd, path, st, flags);
}

// fcntl's third argument is an int, a long or a pointer as the command says; like glibc, take
// it as a pointer-sized value and pass it on.
extern "C" int counted_fcntl(int, int, ...) __asm__("fcntl");
extern "C" int counted_fcntl64(int, int, ...) __asm__("fcntl64");

namespace
{
int forward_fcntl(FcntlFn real, int fd, int cmd, void* arg)
{
#ifdef F_GET_SEALS
    if (cmd == F_GET_SEALS)
        g_seal_reads.fetch_add(1, std::memory_order_relaxed);
#endif
    return real(fd, cmd, arg);
}
} // namespace

extern "C" int counted_fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void* arg = va_arg(ap, void*);
    va_end(ap);
    static const FcntlFn real = next_symbol<FcntlFn>("fcntl");
    return forward_fcntl(real, fd, cmd, arg);
}
extern "C" int counted_fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void* arg = va_arg(ap, void*);
    va_end(ap);
    static const FcntlFn real = next_symbol<FcntlFn>("fcntl64");
    return forward_fcntl(real, fd, cmd, arg);
}

namespace
{

using edgetensor::test::BufferPtr;

constexpr int kWarmup = 60;
constexpr int kSteady = 300;

struct Sample {
    uint64_t mmaps = 0;
    uint64_t munmaps = 0;
    uint64_t fstats = 0;
    uint64_t seal_reads = 0;
    long minflt = 0;
};

Sample sample_now()
{
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return {g_mmaps.load(), g_munmaps.load(), g_fstats.load(), g_seal_reads.load(), ru.ru_minflt};
}

struct Probe {
    int frames = 0;
    Sample start;
    Sample end;
    bool dmabuf = false;
    bool ours = false;
    // The files behind the frames (st_dev, st_ino): those seen in the warm-up, and those first
    // seen in the steady state. Pools hand out the buffer freed last, so a buffer the sender
    // only needs when the receiver holds more than before appears late, and is mapped then.
    std::set<std::pair<dev_t, ino_t>> warm;
    std::set<std::pair<dev_t, ino_t>> new_in_steady;
};

void note_file(Probe* p, GstBuffer* buf)
{
    if (gst_buffer_n_memory(buf) == 0 || !gst_is_fd_memory(gst_buffer_peek_memory(buf, 0)))
        return;
    // The system call itself: the probe's own look is not the pipeline's to count.
    struct stat st {
    };
    if (syscall(SYS_fstat, gst_fd_memory_get_fd(gst_buffer_peek_memory(buf, 0)), &st) != 0)
        return;
    const auto key = std::make_pair(st.st_dev, st.st_ino);
    if (p->frames < kWarmup)
        p->warm.insert(key);
    else if (p->frames < kWarmup + kSteady && !p->warm.count(key))
        p->new_in_steady.insert(key);
}

GstPadProbeReturn count_frame(GstPad*, GstPadProbeInfo* info, gpointer data)
{
    auto* p = static_cast<Probe*>(data);
    GstBuffer* buf = GST_PAD_PROBE_INFO_BUFFER(info);
    if (p->frames == 0 && gst_buffer_n_memory(buf) > 0) {
        GstMemory* m = gst_buffer_peek_memory(buf, 0);
        p->dmabuf = gst_is_dmabuf_memory(m);
        p->ours = gst_is_edge_tensor_memory(m) && gst_is_fd_memory(m);
    }
    note_file(p, buf);
    ++p->frames;
    if (p->frames == kWarmup)
        p->start = sample_now();
    if (p->frames == kWarmup + kSteady)
        p->end = sample_now();
    return GST_PAD_PROBE_OK;
}

struct Case {
    const char* name;
    const char* output; // tensorconvert properties and downstream caps
    size_t out_bytes;   // one output frame
};

class MapCost : public ::testing::TestWithParam<Case>
{
};

TEST_P(MapCost, NoMmapAndFewFaultsPerSteadyStateFrame)
{
    const bool require_dma = std::getenv("EDGETENSOR_TEST_REQUIRE_DMA") &&
                             std::string(std::getenv("EDGETENSOR_TEST_REQUIRE_DMA")) == "1";
    const std::string desc =
        "tensortestsrc num-buffers=" + std::to_string(kWarmup + kSteady) +
        " ! video/x-raw,format=NV12,width=320,height=240,framerate=30/1 ! tensorconvert "
        "width=192 height=192 " +
        GetParam().output + " ! fakesink name=sink sync=false";
    GError* err = nullptr;
    GstElement* pipeline = gst_parse_launch(desc.c_str(), &err);
    ASSERT_NE(pipeline, nullptr) << (err ? err->message : "parse failed");
    g_clear_error(&err);

    Probe probe;
    GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
    GstPad* pad = gst_element_get_static_pad(sink, "sink");
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, count_frame, &probe, nullptr);
    gst_object_unref(pad);
    gst_object_unref(sink);

    ASSERT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
    GstBus* bus = gst_element_get_bus(pipeline);
    GstMessage* msg = gst_bus_timed_pop_filtered(
        bus, 300 * GST_SECOND, GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    ASSERT_NE(msg, nullptr) << "the pipeline did not finish within 300 s";
    if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
        GError* e = nullptr;
        gst_message_parse_error(msg, &e, nullptr);
        ADD_FAILURE() << "pipeline error: " << (e ? e->message : "?");
        g_clear_error(&e);
    }
    gst_message_unref(msg);
    gst_object_unref(bus);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);

    ASSERT_EQ(probe.frames, kWarmup + kSteady);
    ASSERT_TRUE(probe.ours) << "the output is not an fd-backed edgetensor memory";
    if (require_dma)
        ASSERT_TRUE(probe.dmabuf) << "EDGETENSOR_TEST_REQUIRE_DMA=1 but the output is not DMA-BUF";
    else if (!probe.dmabuf)
        RecordProperty("memory", "shm");

    const uint64_t mmaps = probe.end.mmaps - probe.start.mmaps;
    const uint64_t munmaps = probe.end.munmaps - probe.start.munmaps;
    const double faults = double(probe.end.minflt - probe.start.minflt) / kSteady;
    // A frame re-mapped for each access faults in every page it touches again: the 112 KiB
    // input frame and the output tensor, over 45 pages a frame. A persistent mapping touches
    // none; what remains is the rest of the process (slices, a lazily grown heap, the bus),
    // a few pages now and then. One fault a frame is far above that and far below a remap.
    const double page_per_frame = double(GetParam().out_bytes) / 4096.0;
    EXPECT_EQ(mmaps, 0u) << "mmap calls in " << kSteady << " steady-state frames";
    EXPECT_EQ(munmaps, 0u) << "munmap calls in " << kSteady << " steady-state frames";
    EXPECT_LT(faults, 1.0) << "minor page faults per frame (one output frame is " << page_per_frame
                           << " pages)";
    std::printf("[ %s ] %s memory: %llu mmap, %llu munmap, %.3f minor faults/frame over %d "
                "frames\n",
                GetParam().name, probe.dmabuf ? "DMA-BUF" : "shared", (unsigned long long)mmaps,
                (unsigned long long)munmaps, faults, kSteady);
}

INSTANTIATE_TEST_SUITE_P(
    Outputs, MapCost,
    ::testing::Values(Case{"rgb-video", "! video/x-raw,format=RGB", 192 * 192 * 3},
                      Case{"f32-chw-tensor",
                           "dtype=float32 layout=chw mean=123.675,116.28,103.53 "
                           "std=58.395,57.12,57.375",
                           192 * 192 * 3 * 4}),
    [](const ::testing::TestParamInfo<Case>& i) {
        std::string n = i.param.name;
        for (char& c : n)
            if (c == '-')
                c = '_';
        return n;
    });

} // namespace

namespace
{

// Maps the frame for reading and reads a byte of every page, as any consumer that reads the
// pixels does, then counts it.
GstPadProbeReturn read_frame(GstPad* pad, GstPadProbeInfo* info, gpointer data)
{
    GstBuffer* buf = GST_PAD_PROBE_INFO_BUFFER(info);
    GstMapInfo map;
    if (gst_buffer_map(buf, &map, GST_MAP_READ)) {
        volatile unsigned sum = 0;
        for (gsize i = 0; i < map.size; i += 4096)
            sum = sum + map.data[i];
        gst_buffer_unmap(buf, &map);
    }
    return count_frame(pad, info, data);
}

} // namespace

TEST(MapCostIpc, AReceiverThatReadsEveryFrameMapsEachSenderBufferOnce)
{
    edgetensor::test::load_system_plugins();
    edgetensor::test::SocketDir dir;
    const std::string n = std::to_string(kWarmup + kSteady);
    edgetensor::test::Pipeline tx(
        "tensortestsrc num-buffers=" + n +
        " pattern=frame-counter ! video/x-raw,format=NV12,width=320,height=240,framerate=30/1 ! "
        "tensoripcsink socket-path=" +
        dir.path() + " wait-for-connection=true block=true sync=false");
    edgetensor::test::Pipeline rx("tensoripcsrc socket-path=" + dir.path() + " num-buffers=" + n +
                                  " ! fakesink name=sink sync=false");
    ASSERT_TRUE(tx && rx);
    Probe probe;
    GstPad* pad = gst_element_get_static_pad(rx.by_name("sink"), "sink");
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, read_frame, &probe, nullptr);
    gst_object_unref(pad);
    ASSERT_NE(tx.play(), GST_STATE_CHANGE_FAILURE);
    ASSERT_NE(rx.play(), GST_STATE_CHANGE_FAILURE);
    auto msg =
        rx.wait(GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR), std::chrono::seconds(300));
    ASSERT_TRUE(msg) << "the receiver did not finish within 300 s";
    ASSERT_EQ(GST_MESSAGE_TYPE(msg.get()), GST_MESSAGE_EOS)
        << edgetensor::test::message_text(msg.get());
    ASSERT_EQ(probe.frames, kWarmup + kSteady);
    // Where the sender's pool is DMA-BUF (the VM lane), the frames must still reach downstream
    // as dmabuf memory (importers want the fd and offset), kept mapped all the same.
    const char* require = std::getenv("EDGETENSOR_TEST_REQUIRE_DMA");
    if (require && std::string(require) == "1") {
        ASSERT_TRUE(probe.dmabuf) << "EDGETENSOR_TEST_REQUIRE_DMA=1 but the frames are not DMA-BUF";
    }
    const uint64_t mmaps = probe.end.mmaps - probe.start.mmaps;
    const uint64_t munmaps = probe.end.munmaps - probe.start.munmaps;
    const double faults = double(probe.end.minflt - probe.start.minflt) / kSteady;
    // Per frame a remapping receiver makes one mmap and one munmap and faults in the frame's
    // 28 pages again. Both pipelines are in this process: a sender buffer first used in the
    // steady state is one mmap where the sender's pool makes it and one where the receiver
    // keeps it, and nothing else maps.
    const uint64_t late = probe.new_in_steady.size();
    EXPECT_LE(mmaps, 2 * late) << "mmap calls in " << kSteady << " steady-state frames, " << late
                               << " sender buffers first seen in them";
    EXPECT_LE(late, 2u) << "sender buffers first used after " << kWarmup << " frames";
    EXPECT_EQ(munmaps, 0u) << "munmap calls in " << kSteady << " steady-state frames";
    EXPECT_LT(faults, 1.0) << "minor page faults per frame (a frame is 28 pages)";
    // One per frame: the check of the received fd (its file's size and kind). The kept
    // mapping's lookup and the import cache's key reuse that answer (three before); a sender
    // buffer first seen here may be asked about once more on each side.
    const uint64_t fstats = probe.end.fstats - probe.start.fstats;
    EXPECT_LE(fstats, kSteady + 2 * late)
        << "fstat calls in " << kSteady << " steady-state frames (one memory each)";
    // A memfd's seals are asked when it first arrives; the receiver keeps it mapped, and a
    // seal is never removed (one a frame before).
    const uint64_t seal_reads = probe.end.seal_reads - probe.start.seal_reads;
    EXPECT_LE(seal_reads, late) << "fcntl(F_GET_SEALS) calls in " << kSteady
                                << " steady-state frames";
    std::printf("[ ipc-receiver ] %s: %llu mmap, %llu munmap, %llu fstat, %llu F_GET_SEALS, %.3f "
                "minor faults/frame over %d frames; %zu sender buffers, %llu first seen in those "
                "frames\n",
                probe.dmabuf ? "DMA-BUF" : "memfd", (unsigned long long)mmaps,
                (unsigned long long)munmaps, (unsigned long long)fstats,
                (unsigned long long)seal_reads, faults, kSteady,
                probe.warm.size() + probe.new_in_steady.size(), (unsigned long long)late);
}
