// SPDX-License-Identifier: MIT
//
// A gst-launch-1.0 that does what a launch line cannot, for the batching benchmarks
// (bench/batch_ab.py, issue 23 item 7): runs a pipeline description to EOS as one process and
//  --rois N        adds N GstVideoRegionOfInterestMeta (bench/batch_rois.hpp, label "obj") to
//                  every buffer leaving the element named `roi` (an identity): tensorbatch
//                  mode=roi reads them; no element of a stock install adds regions from a
//                  property;
//  --distinct K    gives every buffer leaving an `imagefreeze` its own memory, one of K copies
//                  of the frame in turn (made from the first K frames): a camera's frames, each
//                  a distinct buffer that the caches no longer hold once K frames are larger
//                  than they are, where imagefreeze alone repeats one buffer that stays cached
//                  in whichever thread converts it;
//  --stall NAME:K  drops every buffer after the first K leaving the element named NAME (its
//                  EOS still passes): a live camera that stops delivering;
//  --latency       for every batch leaving the element named `b` (tensorbatch): how long after
//                  its oldest frame reached b it left, and how long after that frame's PTS, by
//                  the pipeline clock; prints p50/p99/max for full and partial batches against
//                  the bound batched-push-timeout + one frame interval (--frame-interval-ms,
//                  default 33.333).
// It prints tensorbatch's stats (frames, batches, partial batches, copies) when `b` exists.
// Nothing is asserted on time: the exit status is 0 unless the pipeline fails.

#include "batch_rois.hpp"

#include <gst/edgetensor/edgetensor.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace
{

struct Latencies {
    std::mutex mu;
    // When each frame reached tensorbatch, by (sink pad number, PTS): the start of its wait.
    std::map<std::pair<guint, GstClockTime>, GstClockTime> arrived;
    // Per batch, from its oldest frame's arrival (the wait in tensorbatch) and from its PTS
    // (the capture time a live source stamps, one frame interval before it delivers).
    std::vector<double> full_ms, partial_ms, full_pts_ms, partial_pts_ms;
};

// The running time now of the element that owns `pad` (its clock and base time).
GstClockTime running_now(GstPad* pad)
{
    GstElement* el = gst_pad_get_parent_element(pad);
    if (!el)
        return GST_CLOCK_TIME_NONE;
    GstClock* clock = gst_element_get_clock(el);
    GstClockTime now = GST_CLOCK_TIME_NONE;
    if (clock) {
        now = gst_clock_get_time(clock) - gst_element_get_base_time(el);
        gst_object_unref(clock);
    }
    gst_object_unref(el);
    return now;
}

GstPadProbeReturn arrive(GstPad* pad, GstPadProbeInfo* info, gpointer data)
{
    auto* lat = static_cast<Latencies*>(data);
    GstBuffer* buf = GST_PAD_PROBE_INFO_BUFFER(info);
    const GstClockTime now = running_now(pad);
    guint index = 0;
    if (now != GST_CLOCK_TIME_NONE && GST_BUFFER_PTS_IS_VALID(buf) &&
        std::sscanf(GST_PAD_NAME(pad), "sink_%u", &index) == 1) {
        std::lock_guard<std::mutex> lock(lat->mu);
        lat->arrived.emplace(std::pair{index, GST_BUFFER_PTS(buf)}, now);
    }
    return GST_PAD_PROBE_OK;
}

GstPadProbeReturn add_rois(GstPad*, GstPadProbeInfo* info, gpointer data)
{
    const guint n = GPOINTER_TO_UINT(data);
    // A shallow copy when imagefreeze still holds the buffer: the memory is shared, not copied.
    GstBuffer* buf = gst_buffer_make_writable(GST_PAD_PROBE_INFO_BUFFER(info));
    for (guint i = 0; i < n; ++i) {
        const auto r = edgetensor::bench::roi_rect(i % edgetensor::bench::kRoiCount);
        GstVideoRegionOfInterestMeta* m = gst_buffer_add_video_region_of_interest_meta(
            buf, "obj", guint(r.x), guint(r.y), guint(r.width), guint(r.height));
        m->id = gint(i);
    }
    GST_PAD_PROBE_INFO_DATA(info) = buf;
    return GST_PAD_PROBE_OK;
}

// The K copies of one imagefreeze's frame, taken in turn.
struct Ring {
    guint k = 0;
    guint next = 0;
    std::vector<GstBuffer*> copies;
    ~Ring()
    {
        for (GstBuffer* b : copies)
            gst_buffer_unref(b);
    }
};

GstPadProbeReturn distinct(GstPad*, GstPadProbeInfo* info, gpointer data)
{
    auto* ring = static_cast<Ring*>(data);
    GstBuffer* buf = GST_PAD_PROBE_INFO_BUFFER(info);
    // Copies made while the first K frames pass (the streaming thread's start-up, which
    // batch_ab.py's N - N/5 difference leaves out); after that, no copy: a new buffer sharing
    // one copy's memory, carrying this frame's timestamps and flags.
    if (ring->copies.size() < ring->k)
        ring->copies.push_back(gst_buffer_copy_deep(buf));
    GstBuffer* copy = ring->copies[ring->next++ % ring->copies.size()];
    GstBuffer* out = gst_buffer_new();
    gst_buffer_copy_into(
        out, copy, GstBufferCopyFlags(GST_BUFFER_COPY_MEMORY | GST_BUFFER_COPY_META), 0, gsize(-1));
    gst_buffer_copy_into(out, buf,
                         GstBufferCopyFlags(GST_BUFFER_COPY_FLAGS | GST_BUFFER_COPY_TIMESTAMPS), 0,
                         gsize(-1));
    gst_buffer_unref(buf);
    GST_PAD_PROBE_INFO_DATA(info) = out;
    return GST_PAD_PROBE_OK;
}

// A Ring on the src pad of every imagefreeze in `pipeline`; false when there is none.
bool probe_imagefreezes(GstElement* pipeline, guint k, std::vector<std::unique_ptr<Ring>>* rings)
{
    GstIterator* it = gst_bin_iterate_recurse(GST_BIN(pipeline));
    GValue v = G_VALUE_INIT;
    while (gst_iterator_next(it, &v) == GST_ITERATOR_OK) {
        auto* el = GST_ELEMENT(g_value_get_object(&v));
        GstElementFactory* f = gst_element_get_factory(el);
        if (f && std::strcmp(GST_OBJECT_NAME(f), "imagefreeze") == 0) {
            rings->push_back(std::make_unique<Ring>());
            rings->back()->k = k;
            GstPad* src = gst_element_get_static_pad(el, "src");
            gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER, distinct, rings->back().get(),
                              nullptr);
            gst_object_unref(src);
        }
        g_value_reset(&v);
    }
    g_value_unset(&v);
    gst_iterator_free(it);
    if (rings->empty())
        std::fprintf(stderr, "batch_pipeline: --distinct: no imagefreeze in the pipeline\n");
    return !rings->empty();
}

struct Stall {
    guint after = 0;
    guint seen = 0;
};

GstPadProbeReturn stall(GstPad*, GstPadProbeInfo*, gpointer data)
{
    auto* s = static_cast<Stall*>(data);
    return ++s->seen > s->after ? GST_PAD_PROBE_DROP : GST_PAD_PROBE_OK;
}

GstPadProbeReturn measure(GstPad* pad, GstPadProbeInfo* info, gpointer data)
{
    auto* lat = static_cast<Latencies*>(data);
    GstBuffer* buf = GST_PAD_PROBE_INFO_BUFFER(info);
    const GstClockTime now = running_now(pad);
    const GstEdgeTensorBatchMeta* m = gst_buffer_get_edge_tensor_batch_meta(buf);
    if (now == GST_CLOCK_TIME_NONE || !GST_BUFFER_PTS_IS_VALID(buf) || !m)
        return GST_PAD_PROBE_OK;
    std::lock_guard<std::mutex> lock(lat->mu);
    bool partial = false;
    GstClockTime oldest = GST_CLOCK_TIME_NONE;
    for (guint i = 0; i < m->n_slots; ++i) {
        const GstEdgeTensorBatchSlot* slot = gst_edge_tensor_batch_meta_get_slot(m, i);
        partial = partial || !slot->filled;
        if (!slot->filled)
            continue;
        auto it = lat->arrived.find({slot->pad_index, slot->pts});
        if (it != lat->arrived.end()) {
            oldest = std::min(oldest, it->second);
            lat->arrived.erase(it);
        }
    }
    (partial ? lat->partial_pts_ms : lat->full_pts_ms)
        .push_back((double(now) - double(GST_BUFFER_PTS(buf))) / 1e6);
    if (oldest != GST_CLOCK_TIME_NONE)
        (partial ? lat->partial_ms : lat->full_ms).push_back((double(now) - double(oldest)) / 1e6);
    return GST_PAD_PROBE_OK;
}

double pct(std::vector<double> v, double p)
{
    std::sort(v.begin(), v.end());
    const size_t i = std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5));
    return v[i];
}

void print_latency(const char* what, const std::vector<double>& v, double bound)
{
    if (v.empty()) {
        std::printf("latency %s batches: none\n", what);
        return;
    }
    const size_t over =
        size_t(std::count_if(v.begin(), v.end(), [&](double x) { return x > bound; }));
    std::printf("latency %s batches: %zu, p50 %.2f ms, p99 %.2f ms, max %.2f ms; %zu over the "
                "bound %.2f ms\n",
                what, v.size(), pct(v, 0.5), pct(v, 0.99), pct(v, 1.0), over, bound);
}

bool probe_sinks(GstElement* pipeline, const char* name, GstPadProbeCallback cb, gpointer data)
{
    GstElement* el = gst_bin_get_by_name(GST_BIN(pipeline), name);
    if (!el)
        return false;
    GstIterator* it = gst_element_iterate_sink_pads(el);
    GValue v = G_VALUE_INIT;
    while (gst_iterator_next(it, &v) == GST_ITERATOR_OK) {
        gst_pad_add_probe(GST_PAD(g_value_get_object(&v)), GST_PAD_PROBE_TYPE_BUFFER, cb, data,
                          nullptr);
        g_value_reset(&v);
    }
    g_value_unset(&v);
    gst_iterator_free(it);
    gst_object_unref(el);
    return true;
}

bool probe_element(GstElement* pipeline, const char* name, GstPadProbeCallback cb, gpointer data)
{
    GstElement* el = gst_bin_get_by_name(GST_BIN(pipeline), name);
    if (!el) {
        std::fprintf(stderr, "batch_pipeline: no element named '%s' in the pipeline\n", name);
        return false;
    }
    GstPad* src = gst_element_get_static_pad(el, "src");
    gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER, cb, data, nullptr);
    gst_object_unref(src);
    gst_object_unref(el);
    return true;
}

int usage()
{
    std::fprintf(stderr, "usage: batch_pipeline [--rois N] [--distinct K] [--stall NAME:K] "
                         "[--latency] [--frame-interval-ms MS] PIPELINE-DESCRIPTION...\n");
    return 2;
}

} // namespace

int main(int argc, char** argv)
{
    gst_init(&argc, &argv);
    guint rois = 0;
    guint distinct_k = 0;
    std::string stall_name;
    Stall stall_state;
    bool latency = false;
    double interval_ms = 1000.0 / 30.0;
    int i = 1;
    for (; i < argc && std::strncmp(argv[i], "--", 2) == 0; ++i) {
        const std::string a = argv[i];
        if (a == "--rois" && i + 1 < argc) {
            rois = guint(std::strtoul(argv[++i], nullptr, 10));
        } else if (a == "--distinct" && i + 1 < argc) {
            distinct_k = guint(std::strtoul(argv[++i], nullptr, 10));
            if (distinct_k == 0)
                return usage();
        } else if (a == "--stall" && i + 1 < argc) {
            const std::string v = argv[++i];
            const size_t colon = v.find(':');
            if (colon == std::string::npos)
                return usage();
            stall_name = v.substr(0, colon);
            stall_state.after = guint(std::strtoul(v.c_str() + colon + 1, nullptr, 10));
        } else if (a == "--latency") {
            latency = true;
        } else if (a == "--frame-interval-ms" && i + 1 < argc) {
            interval_ms = std::strtod(argv[++i], nullptr);
        } else {
            return usage();
        }
    }
    if (i >= argc)
        return usage();
    GError* err = nullptr;
    GstElement* pipeline = gst_parse_launchv(const_cast<const gchar**>(argv + i), &err);
    if (!pipeline) {
        std::fprintf(stderr, "batch_pipeline: %s\n", err ? err->message : "cannot parse");
        g_clear_error(&err);
        return 1;
    }
    g_clear_error(&err); // a recoverable parse warning
    Latencies lat;
    std::vector<std::unique_ptr<Ring>> rings;
    if ((rois && !probe_element(pipeline, "roi", add_rois, GUINT_TO_POINTER(rois))) ||
        (distinct_k && !probe_imagefreezes(pipeline, distinct_k, &rings)) ||
        (!stall_name.empty() &&
         !probe_element(pipeline, stall_name.c_str(), stall, &stall_state)) ||
        (latency && (!probe_element(pipeline, "b", measure, &lat) ||
                     !probe_sinks(pipeline, "b", arrive, &lat)))) {
        gst_object_unref(pipeline);
        return 1;
    }
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    // GstAggregator's deadline for a partial batch is its PTS + this latency (what upstream
    // reports + batched-push-timeout), asked once the pipeline plays.
    GstClockTime latency_ns = GST_CLOCK_TIME_NONE;
    if (latency) {
        gst_element_get_state(pipeline, nullptr, nullptr, 5 * GST_SECOND);
        GstElement* b = gst_bin_get_by_name(GST_BIN(pipeline), "b");
        GstPad* src = gst_element_get_static_pad(b, "src");
        GstQuery* q = gst_query_new_latency();
        if (gst_pad_query(src, q))
            gst_query_parse_latency(q, nullptr, &latency_ns, nullptr);
        gst_query_unref(q);
        gst_object_unref(src);
        gst_object_unref(b);
    }
    GstBus* bus = gst_element_get_bus(pipeline);
    GstMessage* msg = gst_bus_timed_pop_filtered(
        bus, GST_CLOCK_TIME_NONE, GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    int rc = 0;
    if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
        GError* e = nullptr;
        gchar* dbg = nullptr;
        gst_message_parse_error(msg, &e, &dbg);
        std::fprintf(stderr, "batch_pipeline: error from %s: %s\n%s\n", GST_OBJECT_NAME(msg->src),
                     e->message, dbg ? dbg : "");
        g_clear_error(&e);
        g_free(dbg);
        rc = 1;
    }
    gst_message_unref(msg);
    gst_object_unref(bus);
    if (GstElement* b = gst_bin_get_by_name(GST_BIN(pipeline), "b")) {
        GstStructure* stats = nullptr;
        if (g_object_class_find_property(G_OBJECT_GET_CLASS(b), "stats"))
            g_object_get(b, "stats", &stats, nullptr);
        if (stats) {
            gchar* s = gst_structure_to_string(stats);
            std::printf("stats: %s\n", s);
            g_free(s);
            gst_structure_free(stats);
        }
        if (latency) {
            guint64 timeout = 0;
            g_object_get(b, "batched-push-timeout", &timeout, nullptr);
            // The property's own definition: the timeout expires batched-push-timeout after
            // the oldest frame's running time plus upstream's latency (GstAggregator's live
            // deadline, tensorbatch's reported latency); the target is to leave within one
            // frame interval of that.
            const double deadline = latency_ns != GST_CLOCK_TIME_NONE ? double(latency_ns) / 1e6
                                                                      : double(timeout) / 1e6;
            const double bound = deadline + interval_ms;
            std::lock_guard<std::mutex> lock(lat.mu);
            std::printf("bound: the timeout's expiry (PTS + upstream's latency + "
                        "batched-push-timeout = %.2f ms) + one frame interval\n",
                        deadline);
            std::printf("from the oldest frame's arrival at tensorbatch:\n");
            print_latency("full", lat.full_ms, bound);
            print_latency("partial", lat.partial_ms, bound);
            std::printf("from the oldest frame's PTS (a live source's PTS is its capture time, "
                        "its latency earlier than it delivers):\n");
            print_latency("full", lat.full_pts_ms, bound);
            print_latency("partial", lat.partial_pts_ms, bound);
            if (latency_ns != GST_CLOCK_TIME_NONE) {
                const double l = double(latency_ns) / 1e6;
                auto past = [&](double p) {
                    return lat.partial_pts_ms.empty() ? 0.0 : pct(lat.partial_pts_ms, p) - l;
                };
                std::printf("tensorbatch's latency %.2f ms (upstream's + batched-push-timeout): "
                            "a partial batch's deadline is its PTS + that; it left after the "
                            "deadline by p50 %.2f ms, p99 %.2f ms\n",
                            l, past(0.5), past(0.99));
            }
        }
        gst_object_unref(b);
    }
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);
    return rc;
}
