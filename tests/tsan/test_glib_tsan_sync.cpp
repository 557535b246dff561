// SPDX-License-Identifier: MIT
//
// The TSan lane's GLib annotations (glib_tsan_sync.c, preloaded): what GLib orders is seen as
// ordered, and a race is still a race. Built only in -Db_sanitize=thread builds (tools/dev.sh
// tsan). The ordered cases run in this process: a report fails it (TSan's exit status 66, or
// halt_on_error=1 as the lane sets). The racy cases run in a child process of this binary and
// must be reported there.
#include <gtest/gtest.h>

#include <glib.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace
{

constexpr int kRounds = 2000;

// A plain counter two threads add to; only the lock or hand-off under test orders them.
struct Shared {
    GMutex a;
    GMutex b;
    long counter = 0;
    bool use_second_mutex = false;
};

gpointer add_under_a(gpointer p)
{
    auto* s = static_cast<Shared*>(p);
    for (int i = 0; i < kRounds; ++i) {
        g_mutex_lock(&s->a);
        ++s->counter;
        g_mutex_unlock(&s->a);
    }
    return nullptr;
}

gpointer add_under_b_or_a(gpointer p)
{
    auto* s = static_cast<Shared*>(p);
    GMutex* m = s->use_second_mutex ? &s->b : &s->a;
    for (int i = 0; i < kRounds; ++i) {
        g_mutex_lock(m);
        ++s->counter;
        g_mutex_unlock(m);
    }
    return nullptr;
}

long add_from_two_threads(bool use_second_mutex)
{
    Shared s;
    g_mutex_init(&s.a);
    g_mutex_init(&s.b);
    s.use_second_mutex = use_second_mutex;
    GThread* t1 = g_thread_new("adder-a", add_under_a, &s);
    GThread* t2 = g_thread_new("adder-b", add_under_b_or_a, &s);
    g_thread_join(t1);
    g_thread_join(t2);
    g_mutex_clear(&s.a);
    g_mutex_clear(&s.b);
    return s.counter;
}

// The child's cases, chosen by argv[1]; each returns its exit status (TSan replaces it with 66
// when it reports).
int child_main(const char* which)
{
    if (std::strcmp(which, "two-mutexes") == 0) {
        add_from_two_threads(true);
        return 0;
    }
    if (std::strcmp(which, "unlocked") == 0) {
        static long plain = 0;
        GThread* t = g_thread_new(
            "writer",
            [](gpointer) -> gpointer {
                plain = 1;
                return nullptr;
            },
            nullptr);
        plain = 2;
        g_thread_join(t);
        return plain == 0 ? 1 : 0;
    }
    return 2;
}

struct ChildResult {
    int status = -1;
    std::string err;
};

ChildResult run_child(const char* which)
{
    std::vector<char*> argv{const_cast<char*>("/proc/self/exe"), const_cast<char*>(which), nullptr};
    gchar* out = nullptr;
    gchar* err = nullptr;
    gint status = -1;
    GError* error = nullptr;
    ChildResult r;
    if (!g_spawn_sync(nullptr, argv.data(), nullptr, G_SPAWN_DEFAULT, nullptr, nullptr, &out, &err,
                      &status, &error)) {
        r.err = error->message;
        g_error_free(error);
        return r;
    }
    r.status = g_spawn_check_wait_status(status, nullptr) ? 0 : status;
    r.err = err ? err : "";
    g_free(out);
    g_free(err);
    return r;
}

TEST(GlibTsanSync, AGMutexOrdersWhatItGuards)
{
    EXPECT_EQ(add_from_two_threads(false), 2 * kRounds);
}

TEST(GlibTsanSync, AConditionWaitOrdersTheSignallersWrites)
{
    struct Handoff {
        GMutex m;
        GCond c;
        bool ready = false;
        std::vector<int> data;
    } h;
    g_mutex_init(&h.m);
    g_cond_init(&h.c);
    GThread* t = g_thread_new(
        "producer",
        [](gpointer p) -> gpointer {
            auto* shared = static_cast<Handoff*>(p);
            g_mutex_lock(&shared->m);
            shared->data.assign(64, 7);
            shared->ready = true;
            g_cond_signal(&shared->c);
            g_mutex_unlock(&shared->m);
            return nullptr;
        },
        &h);
    g_mutex_lock(&h.m);
    while (!h.ready)
        g_cond_wait(&h.c, &h.m);
    g_mutex_unlock(&h.m);
    EXPECT_EQ(h.data.size(), 64u) << "read after the wait, outside the lock";
    h.data.clear();
    g_thread_join(t);
    g_cond_clear(&h.c);
    g_mutex_clear(&h.m);
}

TEST(GlibTsanSync, AnAsyncQueueAndAThreadPoolOrderWhatTheyHandOver)
{
    GAsyncQueue* q = g_async_queue_new();
    static int payload[16];
    GThreadPool* pool = g_thread_pool_new(
        [](gpointer data, gpointer queue) {
            auto* v = static_cast<int*>(data);
            for (int i = 0; i < 16; ++i)
                v[i] += 1;
            g_async_queue_push(static_cast<GAsyncQueue*>(queue), data);
        },
        q, 2, FALSE, nullptr);
    ASSERT_TRUE(pool);
    for (int round = 0; round < 50; ++round) {
        for (int& v : payload)
            v = round;
        g_thread_pool_push(pool, payload, nullptr);
        auto* back = static_cast<int*>(g_async_queue_pop(q));
        EXPECT_EQ(back[15], round + 1);
    }
    g_thread_pool_free(pool, FALSE, TRUE);
    g_async_queue_unref(q);
}

TEST(GlibTsanSync, TwoMutexesDoNotOrderEachOthersAccesses_Negative)
{
    const ChildResult r = run_child("two-mutexes");
    EXPECT_NE(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("WARNING: ThreadSanitizer: data race"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("add_under"), std::string::npos) << "the race is in the adders:\n"
                                                          << r.err;
}

TEST(GlibTsanSync, AnUnguardedWriteIsReported_Negative)
{
    const ChildResult r = run_child("unlocked");
    EXPECT_NE(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("WARNING: ThreadSanitizer: data race"), std::string::npos) << r.err;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc == 2 && argv[1][0] != '-')
        return child_main(argv[1]);
    testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
