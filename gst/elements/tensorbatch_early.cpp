// SPDX-License-Identifier: MIT
//
// tensorbatch's early conversion (tensorbatch_early.hpp).

#include "tensorbatch_early.hpp"

#include "tensorbatch_element.hpp"
#include "tensorbatch_fill.hpp"
#include "tensorbatch_pad.hpp"
#include "vfunc_guard.hpp"

#include <gst/edgetensor/edgetensor.hpp>

#include <algorithm>
#include <mutex>
#include <utility>

GST_DEBUG_CATEGORY_EXTERN(gst_tensor_batch_debug);
#define GST_CAT_DEFAULT gst_tensor_batch_debug

namespace edgetensor::gst::tensorbatch
{

namespace
{

constexpr guint kNoOwner = G_MAXUINT;

bool is_gap(GstBuffer* buf)
{
    return GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_GAP) && gst_buffer_get_size(buf) == 0;
}

// A batch buffer without waiting: none when the pool is exhausted or not active yet (the
// aggregator converts the frame then, and its own acquire says what is wrong, if anything).
std::unique_ptr<OpenBatch> try_open(GstTensorBatch* self, guint n)
{
    GstObjectPtr<GstBufferPool> pool(gst_aggregator_get_buffer_pool(GST_AGGREGATOR(self)));
    if (!pool || !gst_buffer_pool_is_active(pool.get()))
        return nullptr;
    GstBufferPoolAcquireParams params{};
    params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
    GstBuffer* buf = nullptr;
    if (gst_buffer_pool_acquire_buffer(pool.get(), &buf, &params) != GST_FLOW_OK)
        return nullptr;
    auto b = std::make_unique<OpenBatch>();
    if (!b->reset(buf, n))
        return nullptr;
    return b;
}

OpenBatch* by_seq(Ring& ring, guint64 seq)
{
    for (auto& b : ring.open)
        if (b->seq == seq)
            return b.get();
    return nullptr;
}

void free_slot(OpenBatch& b, size_t i)
{
    b.state[i] = SlotState::Free;
    b.owner[i] = kNoOwner;
}

// Takes back ticket `id` of `ps`: its frame never reached the pad's queue, or its conversion
// failed. Under mu.
void withdraw_locked(Ring& ring, PadStream& ps, guint64 id)
{
    auto it = std::find_if(ps.tickets.rbegin(), ps.tickets.rend(),
                           [id](const Ticket& t) { return t.id == id; });
    if (it == ps.tickets.rend())
        return;
    if (OpenBatch* b = it->converted ? by_seq(ring, it->seq) : nullptr;
        b && !b->closed && ps.slot) {
        const guint slot = *ps.slot;
        if (slot < b->state.size() && b->owner[slot] == ps.index() &&
            b->state[slot] != SlotState::Writing)
            free_slot(*b, slot);
    }
    // The pad's next frame takes this one's batch.
    if (ps.last_seq == it->seq)
        --ps.last_seq;
    ps.tickets.erase(std::next(it).base());
}

// Before GstAggregator queues `buf`: its ticket (`*ticket`, 0 for none) and, when it can, its
// conversion into its slot of its batch. An error stops the stream, as a converter's would.
GstFlowReturn before_queue(GstTensorBatch* self, GstTensorBatchPad* bp, GstBuffer* buf,
                           guint64* ticket)
{
    State& state = state_of(self);
    PadStream* ps = bp->stream;
    if (!ps || !state.early.load(std::memory_order_relaxed))
        return GST_FLOW_OK;
    std::unique_lock<std::mutex> conv(ps->conv_mu);
    // A caps event still in the pad's queue: the converter is not this frame's yet.
    bool caps_current = false;
    if (ps->caps()) {
        MiniObjectPtr<GstCaps> cur(gst_pad_get_current_caps(GST_PAD(bp)));
        caps_current = cur && (cur.get() == ps->caps() || gst_caps_is_equal(cur.get(), ps->caps()));
    }
    std::unique_lock<std::mutex> lock(state.mu);
    Streaming& st = state.st;
    Ring& ring = st.ring;
    if (!ps->slot)
        return GST_FLOW_OK;
    Ticket t;
    t.id = ring.next_ticket++;
    t.buf = buf;
    t.seq = std::max(ps->last_seq + 1, ring.lowest());
    const bool convertible = caps_current && st.out.negotiated && *ps->slot < st.out.n &&
                             ps->configured() && !is_gap(buf);
    std::unique_ptr<OpenBatch> spare;
    OpenBatch* b = nullptr;
    // Its batch, opened (with those before it: the ring holds consecutive batches) when the
    // ring has room and the pool a buffer to spare. Without mu while acquiring, so the
    // batch is found again after (the aggregator may have closed some, the pad been released).
    for (size_t opened = 0; convertible && ps->slot;) {
        t.seq = std::max(ps->last_seq + 1, ring.lowest());
        b = by_seq(ring, t.seq);
        if (b || t.seq < ring.next_seq || ring.open.size() >= Ring::kMaxOpen)
            break;
        if (spare) {
            spare->seq = ring.next_seq++;
            ring.open.push_back(std::move(spare));
            continue;
        }
        if (opened++ == Ring::kMaxOpen)
            break;
        const guint n = st.out.n;
        lock.unlock();
        spare = try_open(self, n);
        lock.lock();
        if (!spare)
            break;
    }
    // A slot another pad holds (one released meanwhile): the aggregator sorts it out.
    if (b && (!ps->slot || b->closed || b->state[*ps->slot] != SlotState::Free))
        b = nullptr;
    t.converted = b != nullptr;
    GST_LOG_OBJECT(bp, "frame %p: batch %" G_GUINT64_FORMAT " (%s), ring %zu", (void*)buf, t.seq,
                   t.converted ? "converting" : "later", ring.open.size());
    ps->tickets.push_back(t);
    ps->last_seq = t.seq;
    *ticket = t.id;
    if (!b)
        return GST_FLOW_OK;
    const guint slot = *ps->slot;
    b->state[slot] = SlotState::Writing;
    b->owner[slot] = ps->index();
    auto view = b->tensor.batch(slot);
    lock.unlock();

    Result<SlotOutcome> o = make_error(ErrorCode::InvalidArgument, "");
    try {
        o = view ? convert_slot(*ps, buf, nullptr, *view)
                 : Result<SlotOutcome>(make_error(view.error().code(),
                                                  "cannot address slot " + std::to_string(slot) +
                                                      " of the batch: " + view.error().message()));
    } catch (...) {
        lock.lock();
        free_slot(*b, slot);
        withdraw_locked(ring, *ps, *ticket);
        *ticket = 0;
        lock.unlock();
        state.written.notify_all();
        throw;
    }
    Deferred msgs;
    lock.lock();
    const bool ok = account(st, GST_PAD_NAME(bp), o, &msgs);
    if (ok) {
        place(*b, slot, ps->index(), *o);
    } else {
        free_slot(*b, slot);
        withdraw_locked(ring, *ps, *ticket);
        *ticket = 0;
    }
    lock.unlock();
    state.written.notify_all();
    conv.unlock();
    msgs.post(GST_ELEMENT(self));
    return ok ? GST_FLOW_OK : GST_FLOW_ERROR;
}

} // namespace

bool OpenBatch::reset(GstBuffer* buffer, guint n)
{
    buf.reset(buffer);
    auto t = tensor_from_buffer(buffer);
    if (!t || t->ndim() < 2 || t->shape()[0] != n)
        return false;
    tensor = std::move(*t);
    state.assign(n, SlotState::Free);
    owner.assign(n, kNoOwner);
    records.assign(n, GstEdgeTensorBatchSlot{});
    colorimetry.assign(n, 0);
    closed = false;
    return true;
}

bool OpenBatch::any_claimed() const
{
    return std::any_of(state.begin(), state.end(),
                       [](SlotState s) { return s != SlotState::Free; });
}

bool OpenBatch::any_writing() const
{
    return std::any_of(state.begin(), state.end(),
                       [](SlotState s) { return s == SlotState::Writing; });
}

void Ring::clear()
{
    open.clear();
}

const Ticket* find_ticket(const std::deque<Ticket>& tickets, const GstBuffer* buf)
{
    return !tickets.empty() && tickets.front().buf == buf ? &tickets.front() : nullptr;
}

std::optional<Ticket> take_ticket(std::deque<Ticket>& tickets, const GstBuffer* buf)
{
    if (!find_ticket(tickets, buf))
        return std::nullopt;
    Ticket t = tickets.front();
    tickets.pop_front();
    return t;
}

void forget_pad(Ring& ring, guint pad_index, std::deque<Ticket>& tickets, guint64& last_seq)
{
    for (auto& b : ring.open) {
        if (b->closed)
            continue;
        for (size_t i = 0; i < b->state.size(); ++i)
            if (b->owner[i] == pad_index && b->state[i] != SlotState::Writing)
                free_slot(*b, i);
    }
    tickets.clear();
    last_seq = 0;
}

GstFlowReturn early_chain(GstPad* pad, GstObject* parent, GstBuffer* buf)
{
    auto* self = GST_TENSOR_BATCH(parent);
    auto* bp = GST_TENSOR_BATCH_PAD(pad);
    guint64 ticket = 0;
    const GstFlowReturn early = guarded(parent, "chain", GST_FLOW_ERROR,
                                        [&] { return before_queue(self, bp, buf, &ticket); });
    if (early != GST_FLOW_OK) {
        gst_buffer_unref(buf);
        return early;
    }
    const GstFlowReturn ret = bp->aggregator_chain(pad, parent, buf);
    if (ret != GST_FLOW_OK && ticket)
        guarded(parent, "chain", [&] {
            std::lock_guard<std::mutex> lock(state_of(self).mu);
            if (bp->stream)
                withdraw_locked(state_of(self).st.ring, *bp->stream, ticket);
        });
    return ret;
}

} // namespace edgetensor::gst::tensorbatch
