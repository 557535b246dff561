// SPDX-License-Identifier: MIT
//
// Lets ThreadSanitizer see the synchronisation GLib and GStreamer do with futexes and atomics, so
// the TSan lane can run whole GStreamer pipelines (tools/dev.sh tsan; tests/gst/meson.build
// preloads this library into the gst suites of a -Db_sanitize=thread build).
//
// Why: on Linux GLib's GMutex and GCond are futexes, not pthread objects, and GStreamer hands
// buffers, events and messages between its threads under them. TSan sees neither, so without
// this library every pipeline test reports races inside stock code paths (a buffer written by a
// source thread and read by the aggregator, a caps event built by the application and parsed by a
// streaming thread), hundreds a suite. Only calls made through the PLT can be interposed: the
// calls one stock library makes into another (libgstbase into libglib) and our own; a library's
// calls to itself are direct (libglib's GAsyncQueue takes its GMutex without us). The rest is
// covered by the lane's settings (tests/gst/meson.build): G_SLICE=always-malloc (GSlice recycles
// memory between threads under a lock of its own) and ignore_noninstrumented_modules=1 (the
// malloc, free and memcpy that uninstrumented libraries call are not checked against ours).
//
// What this keeps: a race between two accesses of edgetensor's code (instrumented) that nothing
// orders is still reported, and so is one ordered only by a mutex the two threads do not share
// (tests/tsan/test_glib_tsan_sync.cpp proves both). What it gives up: GThreadPool work is ordered
// after every earlier push to any pool (one key for all pools; GLib hands the work over inside
// itself), and a reference drop orders the object's earlier users before whoever frees it, as an
// acquire-release refcount does.
//
// The library is not instrumented and calls TSan only through weak symbols, so a process without
// TSan (a gst-launch-1.0 a test starts) runs GLib's own functions unchanged.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <glib.h>
#include <gst/gst.h>

#undef g_once_init_enter
#undef g_once_init_leave

void __tsan_acquire(void* addr) __attribute__((weak));
void __tsan_release(void* addr) __attribute__((weak));
void __tsan_mutex_pre_lock(void* addr, unsigned flags) __attribute__((weak));
int __tsan_mutex_post_lock(void* addr, unsigned flags, int recursion) __attribute__((weak));
int __tsan_mutex_pre_unlock(void* addr, unsigned flags) __attribute__((weak));
void __tsan_mutex_post_unlock(void* addr, unsigned flags) __attribute__((weak));

// The values of tsan_interface.h's flags (not included: it is the compiler's, and this file must
// build where the runtime is absent).
enum { kTryLock = 1u << 4, kTryLockFailed = 1u << 5 };

static int tsan_present(void)
{
    return __tsan_mutex_pre_lock != NULL;
}

static void before_lock(const void* m, unsigned flags)
{
    if (tsan_present())
        __tsan_mutex_pre_lock((void*)m, flags);
}

static void after_lock(const void* m, unsigned flags)
{
    if (tsan_present())
        __tsan_mutex_post_lock((void*)m, flags, 0);
}

static void before_unlock(const void* m)
{
    if (tsan_present())
        __tsan_mutex_pre_unlock((void*)m, 0);
}

static void after_unlock(const void* m)
{
    if (tsan_present())
        __tsan_mutex_post_unlock((void*)m, 0);
}

static void release(const void* p)
{
    if (__tsan_release)
        __tsan_release((void*)p);
}

static void acquire(const void* p)
{
    if (__tsan_acquire)
        __tsan_acquire((void*)p);
}

// The next definition of NAME (GLib's or GStreamer's), looked up once.
#define REAL(name)                                                                                 \
    static __typeof__(name)* real_fn;                                                              \
    if (!real_fn)                                                                                  \
        real_fn = (__typeof__(name)*)dlsym(RTLD_NEXT, #name);

// GMutex: a futex.
void g_mutex_lock(GMutex* m)
{
    REAL(g_mutex_lock);
    before_lock(m, 0);
    real_fn(m);
    after_lock(m, 0);
}

gboolean g_mutex_trylock(GMutex* m)
{
    REAL(g_mutex_trylock);
    before_lock(m, kTryLock);
    const gboolean locked = real_fn(m);
    after_lock(m, locked ? kTryLock : kTryLock | kTryLockFailed);
    return locked;
}

void g_mutex_unlock(GMutex* m)
{
    REAL(g_mutex_unlock);
    before_unlock(m);
    real_fn(m);
    after_unlock(m);
}

// GCond: a futex.
// A condition wait lets go of its mutex and takes it again inside GLib: told as an unlock
// before the wait and a lock after it.
static void wait_lets_go(const void* m)
{
    before_unlock(m);
    after_unlock(m);
}

static void wait_takes_again(const void* m)
{
    before_lock(m, 0);
    after_lock(m, 0);
}

void g_cond_wait(GCond* c, GMutex* m)
{
    REAL(g_cond_wait);
    wait_lets_go(m);
    real_fn(c, m);
    wait_takes_again(m);
}

gboolean g_cond_wait_until(GCond* c, GMutex* m, gint64 end_time)
{
    REAL(g_cond_wait_until);
    wait_lets_go(m);
    const gboolean signalled = real_fn(c, m, end_time);
    wait_takes_again(m);
    return signalled;
}

// GOnce: the winner's initialisation is published by g_once_init_leave(); later callers read the
// value with an atomic load (in the caller's code, instrumented or not).
gboolean g_once_init_enter(volatile void* location)
{
    REAL(g_once_init_enter);
    const gboolean first = real_fn(location);
    acquire((const void*)location);
    return first;
}

void g_once_init_leave(volatile void* location, gsize result)
{
    REAL(g_once_init_leave);
    release((const void*)location);
    real_fn(location, result);
}

// GAsyncQueue: GMutex and GCond taken inside GLib (GstHarness hands buffers to the test this way).
void g_async_queue_push(GAsyncQueue* q, gpointer data)
{
    REAL(g_async_queue_push);
    release(q);
    real_fn(q, data);
}

void g_async_queue_push_unlocked(GAsyncQueue* q, gpointer data)
{
    REAL(g_async_queue_push_unlocked);
    release(q);
    real_fn(q, data);
}

gpointer g_async_queue_pop(GAsyncQueue* q)
{
    REAL(g_async_queue_pop);
    gpointer data = real_fn(q);
    acquire(q);
    return data;
}

gpointer g_async_queue_pop_unlocked(GAsyncQueue* q)
{
    REAL(g_async_queue_pop_unlocked);
    gpointer data = real_fn(q);
    acquire(q);
    return data;
}

gpointer g_async_queue_try_pop(GAsyncQueue* q)
{
    REAL(g_async_queue_try_pop);
    gpointer data = real_fn(q);
    acquire(q);
    return data;
}

gpointer g_async_queue_timeout_pop(GAsyncQueue* q, guint64 timeout)
{
    REAL(g_async_queue_timeout_pop);
    gpointer data = real_fn(q, timeout);
    acquire(q);
    return data;
}

gpointer g_async_queue_timeout_pop_unlocked(GAsyncQueue* q, guint64 timeout)
{
    REAL(g_async_queue_timeout_pop_unlocked);
    gpointer data = real_fn(q, timeout);
    acquire(q);
    return data;
}

// GThreadPool (GstTask's threads, gst_element_call_async): a push reaches a worker through an
// async queue inside GLib, so each pool's function is wrapped to acquire what pushes released.
static char thread_pool_key;

typedef struct {
    GFunc func;
    gpointer user_data;
} PoolFunc;

static void pool_trampoline(gpointer data, gpointer pool_func)
{
    const PoolFunc* f = pool_func;
    acquire(&thread_pool_key);
    f->func(data, f->user_data);
}

// Freed never: a pool lives as long as the process in every user of this library, and the
// wrapper must outlive the pool's last worker.
static PoolFunc* pool_func_new(GFunc func, gpointer user_data)
{
    PoolFunc* f = g_new(PoolFunc, 1);
    f->func = func;
    f->user_data = user_data;
    return f;
}

GThreadPool* g_thread_pool_new(GFunc func, gpointer user_data, gint max_threads, gboolean exclusive,
                               GError** error)
{
    REAL(g_thread_pool_new);
    return real_fn(pool_trampoline, pool_func_new(func, user_data), max_threads, exclusive, error);
}

GThreadPool* g_thread_pool_new_full(GFunc func, gpointer user_data, GDestroyNotify item_free_func,
                                    gint max_threads, gboolean exclusive, GError** error)
{
    REAL(g_thread_pool_new_full);
    return real_fn(pool_trampoline, pool_func_new(func, user_data), item_free_func, max_threads,
                   exclusive, error);
}

gboolean g_thread_pool_push(GThreadPool* pool, gpointer data, GError** error)
{
    REAL(g_thread_pool_push);
    release(&thread_pool_key);
    return real_fn(pool, data, error);
}

// Reference counts: atomics in uninstrumented code. Every drop releases what its thread did to
// the object and acquires what earlier drops released, so the thread that frees it is ordered
// after every earlier user.
void g_object_unref(gpointer object)
{
    REAL(g_object_unref);
    release(object);
    acquire(object);
    real_fn(object);
}

void gst_mini_object_unref(GstMiniObject* object)
{
    REAL(gst_mini_object_unref);
    release(object);
    acquire(object);
    real_fn(object);
}

// A buffer pool hands a released buffer to the next acquirer through a lock-free queue.
GstFlowReturn gst_buffer_pool_acquire_buffer(GstBufferPool* pool, GstBuffer** buffer,
                                             GstBufferPoolAcquireParams* params)
{
    REAL(gst_buffer_pool_acquire_buffer);
    const GstFlowReturn ret = real_fn(pool, buffer, params);
    if (ret == GST_FLOW_OK && buffer && *buffer)
        acquire(*buffer);
    return ret;
}
