// SPDX-License-Identifier: MIT
//
// The import cache of libgstedgetensor-1.0: keyed by (st_dev, st_ino, offset) + geometry, never
// by fd number or GstMemory; bounded LRU; invalidation; stats; fd accounting. Buffers here are
// memfds re-wrapped every frame in a new GstMemory holding a new fd (dup + close), the way a
// camera pool may hand the same buffer out.

#include "fd_count.hpp"
#include "gst_test_util.hpp"
#include "memory_identity.hpp"

#include <gst/allocators/allocators.h>
#include <gst/edgetensor/edgetensor.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <set>
#include <vector>

namespace edgetensor::test
{
namespace
{

struct CachePtr {
    GstEdgeTensorImportCache* c;
    explicit CachePtr(guint n = GST_EDGE_TENSOR_IMPORT_CACHE_DEFAULT_SIZE)
        : c(gst_edge_tensor_import_cache_new(n))
    {
    }
    ~CachePtr() { gst_edge_tensor_import_cache_free(c); }
    CachePtr(const CachePtr&) = delete;
    CachePtr& operator=(const CachePtr&) = delete;
    GstEdgeTensorImportCache* get() const { return c; }
};

UniqueFd make_memfd(size_t size, const char* name = "import-test")
{
    UniqueFd fd(memfd_create(name, MFD_CLOEXEC));
    EXPECT_TRUE(fd) << g_strerror(errno);
    EXPECT_EQ(ftruncate(fd.get(), off_t(size)), 0);
    return fd;
}

AllocatorPtr fd_allocator()
{
    return AllocatorPtr(gst_fd_allocator_new());
}

/// A new GstMemory over a new duplicate of `fd` (the memory owns and closes the duplicate),
/// numbered at least `min_number` when given.
MemoryPtr rewrap(GstAllocator* alloc, int fd, size_t size, int min_number = 0)
{
    UniqueFd d =
        min_number > 0 ? UniqueFd(fcntl(fd, F_DUPFD_CLOEXEC, min_number)) : UniqueFd::dup(fd);
    EXPECT_TRUE(d);
    GstMemory* m = gst_fd_allocator_alloc(alloc, d.get(), size, GST_FD_MEMORY_FLAG_NONE);
    EXPECT_TRUE(m);
    d.release();
    return MemoryPtr(m);
}

BufferPtr buffer_of(MemoryPtr mem)
{
    GstBuffer* b = gst_buffer_new();
    gst_buffer_append_memory(b, mem.release());
    return BufferPtr(b);
}

guint64 ino_of(int fd)
{
    return guint64(inode_of(fd));
}

guint64 stat_u64(GstStructure* s, const char* field)
{
    guint64 v = G_MAXUINT64;
    EXPECT_TRUE(gst_structure_get_uint64(s, field, &v)) << field;
    return v;
}

constexpr const char* kRgbaCaps = "video/x-raw,format=RGBA,width=64,height=16,framerate=30/1";
constexpr size_t kRgbaSize = 64 * 4 * 16;

GstEdgeTensorImportResult import(GstEdgeTensorImportCache* c, GstBuffer* b, guint64* id = nullptr)
{
    return gst_edge_tensor_import_cache_import(c, b, id, nullptr);
}

TEST(ImportCache, RewrappedMemfdsHitAfterTheFirstRoundWithRepeatingIdentities)
{
    CachePtr cache;
    ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(cache.get(), caps_from(kRgbaCaps).get()));
    AllocatorPtr alloc = fd_allocator();
    std::vector<UniqueFd> memfds;
    for (int i = 0; i < 4; ++i)
        memfds.push_back(make_memfd(kRgbaSize));

    std::map<int, guint64> identity_of; // memfd index -> identity
    std::map<int, int> last_fd;
    int frame = 0;
    for (int round = 0; round < 5; ++round) {
        for (int i = 0; i < 4; ++i) {
            // A new fd number every frame, as a pool that dup()s and close()s may present.
            BufferPtr b = buffer_of(rewrap(alloc.get(), memfds[i].get(), kRgbaSize, 200 + frame++));
            const int fd = gst_fd_memory_get_fd(gst_buffer_peek_memory(b.get(), 0));
            if (last_fd.count(i)) {
                EXPECT_NE(fd, last_fd[i]) << "the test must present a new fd number";
            }
            last_fd[i] = fd;
            guint64 id = 0;
            const auto r = import(cache.get(), b.get(), &id);
            EXPECT_EQ(r, round == 0 ? GST_EDGE_TENSOR_IMPORT_MISS : GST_EDGE_TENSOR_IMPORT_HIT)
                << "round " << round << " buffer " << i;
            EXPECT_NE(id, 0u);
            if (round == 0) {
                identity_of[i] = id;
            } else {
                EXPECT_EQ(id, identity_of[i]) << "identity must repeat for the same buffer";
            }
        }
    }
    std::set<guint64> distinct;
    for (auto& [i, id] : identity_of)
        distinct.insert(id);
    EXPECT_EQ(distinct.size(), 4u);
    EXPECT_EQ(gst_edge_tensor_import_cache_get_misses(cache.get()), 4u);
    EXPECT_EQ(gst_edge_tensor_import_cache_get_hits(cache.get()), 16u);
    EXPECT_EQ(gst_edge_tensor_import_cache_get_n_entries(cache.get()), 4u);
}

TEST(ImportCache, SameFdNumberForADifferentBufferIsNotAHit_Negative)
{
    CachePtr cache;
    ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(cache.get(), caps_from(kRgbaCaps).get()));
    AllocatorPtr alloc = fd_allocator();
    UniqueFd a = make_memfd(kRgbaSize, "a");
    UniqueFd b = make_memfd(kRgbaSize, "b");

    BufferPtr first = buffer_of(rewrap(alloc.get(), a.get(), kRgbaSize));
    const int number = gst_fd_memory_get_fd(gst_buffer_peek_memory(first.get(), 0));
    guint64 id_a = 0;
    ASSERT_EQ(import(cache.get(), first.get(), &id_a), GST_EDGE_TENSOR_IMPORT_MISS);
    first.reset(); // closes `number`

    // The very same fd number now names buffer b.
    ASSERT_EQ(dup3(b.get(), number, O_CLOEXEC), number);
    GstMemory* m = gst_fd_allocator_alloc(alloc.get(), number, kRgbaSize, GST_FD_MEMORY_FLAG_NONE);
    BufferPtr second = buffer_of(MemoryPtr(m));
    guint64 id_b = 0;
    EXPECT_EQ(import(cache.get(), second.get(), &id_b), GST_EDGE_TENSOR_IMPORT_MISS);
    EXPECT_NE(id_b, id_a);
    EXPECT_EQ(gst_edge_tensor_import_cache_get_hits(cache.get()), 0u);
}

TEST(ImportCache, SameBufferInANewGstMemoryIsAHit)
{
    CachePtr cache;
    ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(cache.get(), caps_from(kRgbaCaps).get()));
    AllocatorPtr alloc = fd_allocator();
    UniqueFd a = make_memfd(kRgbaSize);
    BufferPtr b1 = buffer_of(rewrap(alloc.get(), a.get(), kRgbaSize));
    BufferPtr b2 = buffer_of(rewrap(alloc.get(), a.get(), kRgbaSize)); // both alive: other fds
    guint64 id1 = 0, id2 = 0;
    EXPECT_EQ(import(cache.get(), b1.get(), &id1), GST_EDGE_TENSOR_IMPORT_MISS);
    EXPECT_EQ(import(cache.get(), b2.get(), &id2), GST_EDGE_TENSOR_IMPORT_HIT);
    EXPECT_EQ(id1, id2);
}

// tensoripcsrc hands out a new share of one kept memory per frame: the file behind them is
// asked once, on the kept memory, not once per share. Renaming the fd under the kept memory
// (something no real memory does) shows where an answer came from.
TEST(MemoryIdentity, SharesOfAKeptMemoryUseItsAnswerAndANewMemoryIsAskedAfresh)
{
    AllocatorPtr alloc = fd_allocator();
    UniqueFd a = make_memfd(kRgbaSize, "a");
    UniqueFd b = make_memfd(kRgbaSize, "b");
    UniqueFd number = UniqueFd::dup(a.get());
    MemoryPtr kept(gst_fd_allocator_alloc(alloc.get(), number.get(), kRgbaSize,
                                          GST_FD_MEMORY_FLAG_DONT_CLOSE));
    ASSERT_TRUE(kept);
    {
        MemoryPtr first(gst_memory_share(kept.get(), 0, -1));
        auto id = gst::memory_identity(first.get());
        ASSERT_TRUE(id) << id.error().message();
        EXPECT_EQ(id->ino, ino_of(a.get()));
    }
    ASSERT_EQ(dup3(b.get(), number.get(), O_CLOEXEC), number.get()); // the number now names b
    MemoryPtr later(gst_memory_share(kept.get(), 0, -1));
    auto id = gst::memory_identity(later.get());
    ASSERT_TRUE(id) << id.error().message();
    EXPECT_EQ(id->ino, ino_of(a.get())) << "a later share must use the kept memory's answer";

    // Not a share: asked afresh, even under an fd number a kept memory has.
    MemoryPtr other(gst_fd_allocator_alloc(alloc.get(), number.get(), kRgbaSize,
                                           GST_FD_MEMORY_FLAG_DONT_CLOSE));
    auto other_id = gst::memory_identity(other.get());
    ASSERT_TRUE(other_id) << other_id.error().message();
    EXPECT_EQ(other_id->ino, ino_of(b.get()));
}

// What a caller that has just fstat()ed an fd says is kept, and never replaced.
TEST(MemoryIdentity, ARememberedIdentityIsAnsweredAndTheFirstOneStays)
{
    AllocatorPtr alloc = fd_allocator();
    UniqueFd a = make_memfd(kRgbaSize, "a");
    MemoryPtr mem = rewrap(alloc.get(), a.get(), kRgbaSize);
    const gst::MemoryIdentity told{ino_of(a.get()) + 1, 42};
    gst::remember_memory_identity(mem.get(), told);
    gst::remember_memory_identity(mem.get(), gst::MemoryIdentity{7, 7});
    MemoryPtr share(gst_memory_share(mem.get(), 0, -1));
    for (GstMemory* m : {mem.get(), share.get()}) {
        auto id = gst::memory_identity(m);
        ASSERT_TRUE(id) << id.error().message();
        EXPECT_TRUE(*id == told);
    }
    gst::remember_memory_identity(nullptr, told); // nothing to tell: ignored
}

TEST(ImportCache, ImportedMetaSurvivesShallowCopiesAndMakeWritable)
{
    CachePtr cache;
    ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(cache.get(), caps_from(kRgbaCaps).get()));
    AllocatorPtr alloc = fd_allocator();
    UniqueFd a = make_memfd(kRgbaSize);
    BufferPtr b = buffer_of(rewrap(alloc.get(), a.get(), kRgbaSize));
    GstEdgeTensorMeta* m =
        gst_edge_tensor_import_cache_attach_meta(cache.get(), b.get(), nullptr, nullptr);
    ASSERT_TRUE(m);
    ASSERT_FALSE(gst_is_edge_tensor_memory(gst_buffer_peek_memory(b.get(), 0)))
        << "the test needs foreign (imported) memory";
    const guint64 id = m->identity;
    const gint handle = m->desc.handle;

    BufferPtr copy(gst_buffer_copy(b.get()));
    GstEdgeTensorMeta* mc = gst_buffer_get_edge_tensor_meta(copy.get());
    ASSERT_TRUE(mc) << "a shallow copy shares the memory, so the meta still holds";
    EXPECT_EQ(mc->identity, id);
    EXPECT_EQ(mc->desc.handle, handle);
    EXPECT_EQ(mc->plane_strides[0], m->plane_strides[0]);

    // make_writable of a shared buffer copies it (shallowly): a downstream element doing this
    // must not lose the meta.
    GstBuffer* shared = gst_buffer_ref(b.get());
    GstBuffer* writable = gst_buffer_make_writable(shared);
    ASSERT_NE(writable, b.get());
    BufferPtr w(writable);
    GstEdgeTensorMeta* mw = gst_buffer_get_edge_tensor_meta(w.get());
    ASSERT_TRUE(mw);
    EXPECT_EQ(mw->identity, id);
    EXPECT_EQ(mw->width, 64u);

    // Another GstMemory over the same memfd (same inode and offset) holds the same bytes.
    // (Memory-tagged metas travel only with the memory, so copy both; r's own memory stays
    // first.)
    BufferPtr r = buffer_of(rewrap(alloc.get(), a.get(), kRgbaSize));
    ASSERT_TRUE(gst_buffer_copy_into(
        r.get(), b.get(), GstBufferCopyFlags(GST_BUFFER_COPY_META | GST_BUFFER_COPY_MEMORY), 0,
        -1));
    ASSERT_NE(gst_buffer_peek_memory(r.get(), 0), gst_buffer_peek_memory(b.get(), 0));
    GstEdgeTensorMeta* mr = gst_buffer_get_edge_tensor_meta(r.get());
    ASSERT_TRUE(mr);
    EXPECT_EQ(mr->identity, id);
    EXPECT_EQ(mr->desc.handle, gst_fd_memory_get_fd(gst_buffer_peek_memory(r.get(), 0)))
        << "the copy's meta borrows the copy's own fd";
}

TEST(ImportCache, ImportedMetaIsDroppedByDeepAndRegionCopies_Negative)
{
    CachePtr cache;
    ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(cache.get(), caps_from(kRgbaCaps).get()));
    AllocatorPtr alloc = fd_allocator();
    UniqueFd a = make_memfd(kRgbaSize);
    BufferPtr b = buffer_of(rewrap(alloc.get(), a.get(), kRgbaSize));
    ASSERT_TRUE(gst_edge_tensor_import_cache_attach_meta(cache.get(), b.get(), nullptr, nullptr));

    BufferPtr deep(gst_buffer_copy_deep(b.get()));
    ASSERT_TRUE(deep);
    EXPECT_FALSE(gst_buffer_get_edge_tensor_meta(deep.get()))
        << "a deep copy's bytes are not the imported tensor";
    BufferPtr part(gst_buffer_copy_region(b.get(), GST_BUFFER_COPY_ALL, 256, 1024));
    ASSERT_TRUE(part);
    EXPECT_FALSE(gst_buffer_get_edge_tensor_meta(part.get()));

    // Another buffer of the same size over a different memfd is not the tensor either.
    UniqueFd other = make_memfd(kRgbaSize);
    BufferPtr o = buffer_of(rewrap(alloc.get(), other.get(), kRgbaSize));
    GstEdgeTensorMeta* src = gst_buffer_get_edge_tensor_meta(b.get());
    ASSERT_TRUE(src);
    ASSERT_TRUE(gst_buffer_copy_into(
        o.get(), b.get(), GstBufferCopyFlags(GST_BUFFER_COPY_META | GST_BUFFER_COPY_MEMORY), 0,
        -1));
    EXPECT_FALSE(gst_buffer_get_edge_tensor_meta(o.get()));
}

TEST(ImportCache, CapsChangeInvalidates)
{
    CachePtr cache;
    AllocatorPtr alloc = fd_allocator();
    UniqueFd a = make_memfd(2 * kRgbaSize);
    ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(cache.get(), caps_from(kRgbaCaps).get()));
    guint64 id1 = 0, id2 = 0;
    EXPECT_EQ(
        import(cache.get(), buffer_of(rewrap(alloc.get(), a.get(), 2 * kRgbaSize)).get(), &id1),
        GST_EDGE_TENSOR_IMPORT_MISS);
    // Equal caps change nothing.
    ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(cache.get(), caps_from(kRgbaCaps).get()));
    EXPECT_EQ(gst_edge_tensor_import_cache_get_n_entries(cache.get()), 1u);

    ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(
        cache.get(), caps_from("video/x-raw,format=RGBA,width=64,height=32,framerate=30/1").get()));
    EXPECT_EQ(gst_edge_tensor_import_cache_get_n_entries(cache.get()), 0u);
    EXPECT_EQ(
        import(cache.get(), buffer_of(rewrap(alloc.get(), a.get(), 2 * kRgbaSize)).get(), &id2),
        GST_EDGE_TENSOR_IMPORT_MISS);
    EXPECT_NE(id1, id2);
    GstStructure* s = gst_edge_tensor_import_cache_get_stats(cache.get());
    EXPECT_EQ(stat_u64(s, "invalidations"), 1u);
    gst_structure_free(s);
}

TEST(ImportCache, LruEvictsTheLeastRecentlyUsedAtTheBound)
{
    CachePtr cache(3);
    ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(cache.get(), caps_from(kRgbaCaps).get()));
    AllocatorPtr alloc = fd_allocator();
    std::vector<UniqueFd> fds;
    for (int i = 0; i < 4; ++i)
        fds.push_back(make_memfd(kRgbaSize));
    auto imp = [&](int i) {
        return import(cache.get(), buffer_of(rewrap(alloc.get(), fds[i].get(), kRgbaSize)).get());
    };
    EXPECT_EQ(imp(0), GST_EDGE_TENSOR_IMPORT_MISS);
    EXPECT_EQ(imp(1), GST_EDGE_TENSOR_IMPORT_MISS);
    EXPECT_EQ(imp(2), GST_EDGE_TENSOR_IMPORT_MISS);
    EXPECT_EQ(imp(0), GST_EDGE_TENSOR_IMPORT_HIT);  // 1 is now the least recently used
    EXPECT_EQ(imp(3), GST_EDGE_TENSOR_IMPORT_MISS); // evicts 1
    EXPECT_EQ(gst_edge_tensor_import_cache_get_evictions(cache.get()), 1u);
    EXPECT_EQ(gst_edge_tensor_import_cache_get_n_entries(cache.get()), 3u);
    EXPECT_EQ(imp(0), GST_EDGE_TENSOR_IMPORT_HIT);
    EXPECT_EQ(imp(2), GST_EDGE_TENSOR_IMPORT_HIT);
    EXPECT_EQ(imp(1), GST_EDGE_TENSOR_IMPORT_MISS); // evicts 3
    EXPECT_EQ(gst_edge_tensor_import_cache_get_evictions(cache.get()), 2u);

    gst_edge_tensor_import_cache_set_max_entries(cache.get(), 1);
    EXPECT_EQ(gst_edge_tensor_import_cache_get_n_entries(cache.get()), 1u);
    EXPECT_EQ(gst_edge_tensor_import_cache_get_evictions(cache.get()), 4u);
    EXPECT_EQ(imp(1), GST_EDGE_TENSOR_IMPORT_HIT) << "the most recently used entry stays";
    GstStructure* s = gst_edge_tensor_import_cache_get_stats(cache.get());
    guint peak = 0;
    EXPECT_TRUE(gst_structure_get_uint(s, "peak-entries", &peak));
    EXPECT_EQ(peak, 3u);
    gst_structure_free(s);
}

TEST(ImportCache, SystemMemoryIsNotImportableAndChangesNothing_Negative)
{
    CachePtr cache;
    ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(cache.get(), caps_from(kRgbaCaps).get()));
    const auto before = open_fds();
    BufferPtr b(gst_buffer_new_allocate(nullptr, kRgbaSize, nullptr));
    gchar* why = nullptr;
    EXPECT_FALSE(gst_edge_tensor_import_cache_can_import(cache.get(), b.get(), &why));
    ASSERT_TRUE(why);
    EXPECT_NE(std::string(why).find("SystemMemory"), std::string::npos) << why;
    g_free(why);
    EXPECT_EQ(import(cache.get(), b.get()), GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE);
    GstEdgeTensorImportResult r = GST_EDGE_TENSOR_IMPORT_HIT;
    EXPECT_EQ(gst_edge_tensor_import_cache_attach_meta(cache.get(), b.get(), &r, nullptr), nullptr);
    EXPECT_EQ(r, GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE);
    EXPECT_EQ(gst_buffer_get_edge_tensor_meta(b.get()), nullptr);
    GstStructure* s = gst_edge_tensor_import_cache_get_stats(cache.get());
    for (const char* f : {"hits", "misses", "evictions", "failed-imports", "invalidations"})
        EXPECT_EQ(stat_u64(s, f), 0u) << f;
    gst_structure_free(s);
    EXPECT_EQ(open_fds(), before);
}

TEST(ImportCache, WithoutCapsNothingIsImportable_Negative)
{
    CachePtr cache;
    AllocatorPtr alloc = fd_allocator();
    UniqueFd a = make_memfd(kRgbaSize);
    EXPECT_EQ(import(cache.get(), buffer_of(rewrap(alloc.get(), a.get(), kRgbaSize)).get()),
              GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE);
    EXPECT_FALSE(
        gst_edge_tensor_import_cache_set_caps(cache.get(), caps_from("audio/x-raw").get()));
}

TEST(ImportCache, PipeFdFailsWithItsReason_Negative)
{
    CachePtr cache;
    ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(cache.get(), caps_from(kRgbaCaps).get()));
    AllocatorPtr alloc = fd_allocator();
    int p[2];
    ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
    UniqueFd keep_write(p[1]);
    const auto before = open_fds();
    {
        GstMemory* m =
            gst_fd_allocator_alloc(alloc.get(), p[0], kRgbaSize, GST_FD_MEMORY_FLAG_DONT_CLOSE);
        BufferPtr b = buffer_of(MemoryPtr(m));
        gchar* why = nullptr;
        EXPECT_EQ(gst_edge_tensor_import_cache_import(cache.get(), b.get(), nullptr, &why),
                  GST_EDGE_TENSOR_IMPORT_FAILED);
        ASSERT_TRUE(why);
        EXPECT_NE(std::string(why).find("pipefs"), std::string::npos) << why;
        g_free(why);
    }
    GstStructure* s = gst_edge_tensor_import_cache_get_stats(cache.get());
    EXPECT_EQ(stat_u64(s, "failed-imports"), 1u);
    EXPECT_NE(std::string(gst_structure_get_string(s, "last-failure")).find("pipefs"),
              std::string::npos);
    const GValue* f = gst_structure_get_value(s, "failures");
    ASSERT_TRUE(f && GST_VALUE_HOLDS_STRUCTURE(f));
    guint64 n = 0;
    EXPECT_TRUE(gst_structure_get_uint64(gst_value_get_structure(f), "UnknownBufferType", &n));
    EXPECT_EQ(n, 1u);
    gst_structure_free(s);
    EXPECT_EQ(open_fds(), before) << "the failed import's dup must be closed";
    close(p[0]);
}

TEST(ImportCache, FrameLargerThanTheBufferFails_Negative)
{
    CachePtr cache;
    ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(cache.get(), caps_from(kRgbaCaps).get()));
    AllocatorPtr alloc = fd_allocator();
    UniqueFd small = make_memfd(kRgbaSize / 2);
    gchar* why = nullptr;
    EXPECT_EQ(gst_edge_tensor_import_cache_import(
                  cache.get(), buffer_of(rewrap(alloc.get(), small.get(), kRgbaSize / 2)).get(),
                  nullptr, &why),
              GST_EDGE_TENSOR_IMPORT_FAILED);
    ASSERT_TRUE(why);
    g_free(why);
    GstStructure* s = gst_edge_tensor_import_cache_get_stats(cache.get());
    const GValue* f = gst_structure_get_value(s, "failures");
    guint64 n = 0;
    EXPECT_TRUE(gst_structure_get_uint64(gst_value_get_structure(f), "InsufficientCapacity", &n));
    gst_structure_free(s);
}

TEST(ImportCache, TwoFdNv12IsComposedFromItsPlanesAndHits)
{
    constexpr guint W = 64, H = 32;
    CachePtr cache;
    ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(
        cache.get(), caps_from("video/x-raw,format=NV12,width=64,height=32").get()));
    AllocatorPtr alloc = fd_allocator();
    UniqueFd luma = make_memfd(W * H, "luma");
    UniqueFd chroma = make_memfd(W * H / 2, "chroma");
    auto make = [&] {
        GstBuffer* b = gst_buffer_new();
        gst_buffer_append_memory(b, rewrap(alloc.get(), luma.get(), W * H).release());
        gst_buffer_append_memory(b, rewrap(alloc.get(), chroma.get(), W * H / 2).release());
        gsize offsets[4] = {0, W * H, 0, 0};
        gint strides[4] = {gint(W), gint(W), 0, 0};
        gst_buffer_add_video_meta_full(b, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_NV12, W, H, 2,
                                       offsets, strides);
        return BufferPtr(b);
    };
    BufferPtr b1 = make();
    GstEdgeTensorImportResult r;
    auto t = gst::import_tensor(cache.get(), b1.get(), &r);
    ASSERT_EQ(r, GST_EDGE_TENSOR_IMPORT_MISS);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->plane_count(), 2u);
    EXPECT_EQ(t->format(), PixelFormat::Nv12);
    ASSERT_TRUE(t->stat_identity(0));
    EXPECT_EQ(t->stat_identity(0)->second, ino_of(luma.get()));
    EXPECT_EQ(t->stat_identity(1)->second, ino_of(chroma.get()));
    EXPECT_EQ(t->plane_layout(1)->offset, 0u);

    BufferPtr b2 = make();
    GstEdgeTensorMeta* m =
        gst_edge_tensor_import_cache_attach_meta(cache.get(), b2.get(), &r, nullptr);
    EXPECT_EQ(r, GST_EDGE_TENSOR_IMPORT_HIT);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->identity, t->buffer_identity().id());
    EXPECT_EQ(m->n_planes, 2u);
    EXPECT_EQ(m->plane_offsets[1], 0u) << "offsets are into each plane's own fd";
    EXPECT_EQ(m->plane_strides[1], gint(W));
    EXPECT_EQ(m->desc.handle, gst_fd_memory_get_fd(gst_buffer_peek_memory(b2.get(), 0)));
}

TEST(ImportCache, SingleFdNv12UsesTheVideoMetaOffsetsAndStrides)
{
    constexpr guint W = 64, H = 32, STRIDE = 128, CHROMA = 4608;
    CachePtr cache;
    ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(
        cache.get(), caps_from("video/x-raw,format=NV12,width=64,height=32").get()));
    AllocatorPtr alloc = fd_allocator();
    UniqueFd fd = make_memfd(8192);
    auto with_meta = [&] {
        BufferPtr b = buffer_of(rewrap(alloc.get(), fd.get(), 8192));
        gsize offsets[4] = {0, CHROMA, 0, 0};
        gint strides[4] = {gint(STRIDE), gint(STRIDE), 0, 0};
        gst_buffer_add_video_meta_full(b.get(), GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_NV12, W,
                                       H, 2, offsets, strides);
        return b;
    };
    GstEdgeTensorImportResult r;
    BufferPtr b1 = with_meta();
    auto t = gst::import_tensor(cache.get(), b1.get(), &r);
    ASSERT_EQ(r, GST_EDGE_TENSOR_IMPORT_MISS);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->plane_layout(0)->stride, STRIDE);
    EXPECT_EQ(t->plane_layout(1)->offset, CHROMA);
    EXPECT_EQ(t->plane_layout(1)->stride, STRIDE);
    EXPECT_EQ(import(cache.get(), with_meta().get()), GST_EDGE_TENSOR_IMPORT_HIT);

    // The same fd in GStreamer's default layout is another frame geometry: another entry.
    guint64 id = 0;
    EXPECT_EQ(import(cache.get(), buffer_of(rewrap(alloc.get(), fd.get(), 8192)).get(), &id),
              GST_EDGE_TENSOR_IMPORT_MISS);
    EXPECT_NE(id, t->buffer_identity().id());
}

TEST(ImportCache, I420InThreeFdsIsNotImportableButInOneFdImportsFlat_Negative)
{
    constexpr guint W = 64, H = 32;
    CachePtr cache;
    ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(
        cache.get(), caps_from("video/x-raw,format=I420,width=64,height=32").get()));
    AllocatorPtr alloc = fd_allocator();
    UniqueFd y = make_memfd(W * H), u = make_memfd(W * H / 4), v = make_memfd(W * H / 4);
    const auto before = open_fds();
    {
        GstBuffer* b = gst_buffer_new();
        gst_buffer_append_memory(b, rewrap(alloc.get(), y.get(), W * H).release());
        gst_buffer_append_memory(b, rewrap(alloc.get(), u.get(), W * H / 4).release());
        gst_buffer_append_memory(b, rewrap(alloc.get(), v.get(), W * H / 4).release());
        BufferPtr three(b);
        gchar* why = nullptr;
        EXPECT_FALSE(gst_edge_tensor_import_cache_can_import(cache.get(), three.get(), &why));
        ASSERT_TRUE(why);
        EXPECT_NE(std::string(why).find("I420"), std::string::npos) << why;
        g_free(why);
        EXPECT_EQ(import(cache.get(), three.get()), GST_EDGE_TENSOR_IMPORT_NOT_IMPORTABLE);
    }
    EXPECT_EQ(open_fds(), before);
    GstStructure* s = gst_edge_tensor_import_cache_get_stats(cache.get());
    EXPECT_EQ(stat_u64(s, "misses"), 0u);
    EXPECT_EQ(stat_u64(s, "failed-imports"), 0u);
    gst_structure_free(s);

    UniqueFd one = make_memfd(W * H * 3 / 2);
    GstEdgeTensorImportResult r;
    BufferPtr b = buffer_of(rewrap(alloc.get(), one.get(), W * H * 3 / 2));
    auto t = gst::import_tensor(cache.get(), b.get(), &r);
    ASSERT_EQ(r, GST_EDGE_TENSOR_IMPORT_MISS);
    ASSERT_TRUE(t);
    EXPECT_FALSE(t->is_image()) << "the core has no I420 image: a flat tensor";
    EXPECT_EQ(t->size(), size_t(W * H * 3 / 2));
}

TEST(ImportCache, OtherTensorsImportWithTheCapsDtypeAndShape)
{
    CachePtr cache;
    ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(
        cache.get(), caps_from("other/tensors,num_tensors=1,format=static,types=float32,"
                               "dimensions=(string)4:8:1,framerate=0/1")
                         .get()));
    AllocatorPtr alloc = fd_allocator();
    UniqueFd fd = make_memfd(4 * 8 * 4);
    GstEdgeTensorImportResult r;
    BufferPtr b = buffer_of(rewrap(alloc.get(), fd.get(), 128));
    auto t = gst::import_tensor(cache.get(), b.get(), &r);
    ASSERT_EQ(r, GST_EDGE_TENSOR_IMPORT_MISS);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->dtype(), DType::F32);
    EXPECT_EQ(t->shape(), (Shape{1, 8, 4}));
    EXPECT_EQ(t->memory(), TensorMemory::Shm);
    BufferPtr b2 = buffer_of(rewrap(alloc.get(), fd.get(), 128));
    GstEdgeTensorMeta* m =
        gst_edge_tensor_import_cache_attach_meta(cache.get(), b2.get(), &r, nullptr);
    ASSERT_TRUE(m);
    EXPECT_EQ(r, GST_EDGE_TENSOR_IMPORT_HIT);
    EXPECT_EQ(m->desc.dtype, EDGETENSOR_DTYPE_F32);
    EXPECT_EQ(m->memory_kind, GST_EDGE_TENSOR_MEMORY_SHM);
}

TEST(ImportCache, PoolBuffersKeepThePoolsIdentity)
{
    PoolPtr pool = make_active_pool(kRgbaCaps, {.min = 2, .max = 2});
    ASSERT_TRUE(pool);
    CachePtr cache;
    ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(cache.get(), caps_from(kRgbaCaps).get()));
    // One frame held while the next is imported, as a queue between the two would: both of
    // the pool's buffers come round.
    BufferPtr held;
    std::set<guint64> seen;
    for (int i = 0; i < 6; ++i) {
        BufferPtr b = acquire(pool.get());
        const guint64 pool_id = gst_buffer_get_edge_tensor_meta(b.get())->identity;
        GstEdgeTensorImportResult r;
        GstEdgeTensorMeta* m =
            gst_edge_tensor_import_cache_attach_meta(cache.get(), b.get(), &r, nullptr);
        ASSERT_TRUE(m);
        EXPECT_EQ(m->identity, pool_id);
        EXPECT_EQ(r, seen.insert(pool_id).second ? GST_EDGE_TENSOR_IMPORT_MISS
                                                 : GST_EDGE_TENSOR_IMPORT_HIT)
            << i;
        held = std::move(b);
    }
    EXPECT_EQ(seen.size(), 2u);
}

TEST(ImportCache, StatsListTheInodesOfTheImportedTensors)
{
    CachePtr cache;
    ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(cache.get(), caps_from(kRgbaCaps).get()));
    AllocatorPtr alloc = fd_allocator();
    UniqueFd a = make_memfd(kRgbaSize), b = make_memfd(kRgbaSize);
    import(cache.get(), buffer_of(rewrap(alloc.get(), a.get(), kRgbaSize)).get());
    import(cache.get(), buffer_of(rewrap(alloc.get(), b.get(), kRgbaSize)).get());
    GstStructure* s = gst_edge_tensor_import_cache_get_stats(cache.get());
    EXPECT_STREQ(gst_structure_get_name(s), GST_EDGE_TENSOR_IMPORT_STATS_NAME);
    const GValue* inodes = gst_structure_get_value(s, "inodes");
    ASSERT_TRUE(inodes && GST_VALUE_HOLDS_ARRAY(inodes));
    std::set<guint64> got;
    for (guint i = 0; i < gst_value_array_get_size(inodes); ++i)
        got.insert(g_value_get_uint64(gst_value_array_get_value(inodes, i)));
    EXPECT_EQ(got, (std::set<guint64>{ino_of(a.get()), ino_of(b.get())}));
    guint entries = 0;
    EXPECT_TRUE(gst_structure_get_uint(s, "entries", &entries));
    EXPECT_EQ(entries, 2u);
    gst_structure_free(s);
}

TEST(ImportCache, TenThousandRewrappedFramesLeaveTheFdCountUnchanged)
{
    AllocatorPtr alloc = fd_allocator();
    const auto before = open_fds();
    {
        std::vector<UniqueFd> memfds;
        for (int i = 0; i < 4; ++i)
            memfds.push_back(make_memfd(kRgbaSize));
        CachePtr cache(2); // smaller than the set: evictions close fds too
        ASSERT_TRUE(gst_edge_tensor_import_cache_set_caps(cache.get(), caps_from(kRgbaCaps).get()));
        size_t steady = 0;
        for (int n = 0; n < 10000; ++n) {
            {
                BufferPtr b = buffer_of(rewrap(alloc.get(), memfds[n % 4].get(), kRgbaSize));
                ASSERT_EQ(import(cache.get(), b.get()), GST_EDGE_TENSOR_IMPORT_MISS);
            }
            if (n == 100)
                steady = open_fds().size();
        }
        // Which numbers the two cached dups hold varies; how many fds are open must not.
        EXPECT_EQ(open_fds().size(), steady) << describe_fds(open_fds());
        EXPECT_EQ(gst_edge_tensor_import_cache_get_evictions(cache.get()), 9998u);
        gst_edge_tensor_import_cache_clear(cache.get(), "test");
    }
    EXPECT_EQ(open_fds(), before) << describe_fds(open_fds());
}

} // namespace
} // namespace edgetensor::test
