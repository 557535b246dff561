// SPDX-License-Identifier: MIT
//
// tensorbatch's conversion on arrival (convert-on-arrival=true, streams mode, ordering=fifo):
// each sink pad's streaming thread converts its frame straight into its slot of an open batch
// before handing the frame to GstAggregator's queue, as separate tensorconvert branches would
// each convert in their own thread. The aggregator thread then only closes the oldest open
// batch and pushes it. Otherwise every frame waits in its pad for the aggregator's one thread,
// which converts them one after another once the batch is complete.
//
// Every frame that enters a pad gets a ticket naming the batch it belongs to (its pad's
// previous frame's batch + 1, or the oldest open one) and whether it is in it already. It is
// not when no batch can take it now: ordering=latest, before the output is negotiated, after
// a caps change not yet applied, or with the ring full; the aggregator converts it when it
// closes that batch. The aggregator matches a ticket to the buffer it pops, so
// GstAggregator's own decisions (which pads have data, timeouts, EOS) stay what they are.
//
// Invariants (under the element's mu):
// - a pad's frames go into batches of increasing sequence numbers; a batch leaves the ring
//   only from the front, closed after every slot being written is written;
// - a pad's converter is used by one thread at a time: its conv_mu, taken before mu;
// - a converted frame whose batch has left the ring went out in it (a partial batch closed
//   while the frame was in its pad's thread): the aggregator drops the buffer when it pops
//   it. A frame not converted whose batch left without it goes into the next one, unless the
//   pad's next frame is there already: then it is dropped, and counted.

#pragma once

#include "glib_raii.hpp"

#include <edgetensor/tensor_dyn.hpp>

#include <gst/edgetensor/edgetensor.h>
#include <gst/gst.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

typedef struct _GstTensorBatch GstTensorBatch;

namespace edgetensor::gst::tensorbatch
{

enum class SlotState : uint8_t {
    Free,    ///< nobody wrote it: all-zero bytes when the batch leaves
    Writing, ///< a pad's thread is converting into it
    Filled,  ///< holds a picture; its record says whence
    Skipped, ///< a frame took its turn but did not match its caps: empty, counted as dropped
};

/// One batch buffer and what its slots hold.
struct OpenBatch {
    /// Position in the ring (1, 2, ...); 0 for a batch the aggregator made for itself.
    guint64 seq = 0;
    MiniObjectPtr<GstBuffer> buf;
    TensorDyn tensor;
    std::vector<SlotState> state;
    std::vector<guint> owner;                    ///< the pad index of the slot's frame
    std::vector<GstEdgeTensorBatchSlot> records; ///< provenance of filled slots
    std::vector<guint32> colorimetry;            ///< output colorimetry of filled slots (packed)
    bool closed = false;                         ///< no more claims: the aggregator took it

    /// `buf` (transfer full) as a batch of `n` slots, all free. False when it holds no [N, ...]
    /// tensor of `n`.
    bool reset(GstBuffer* buf, guint n);
    bool any_claimed() const;
    bool any_writing() const;
};

/// Which batch a frame that entered a pad belongs to.
struct Ticket {
    guint64 id = 0;
    const GstBuffer* buf = nullptr; ///< compared, never dereferenced
    guint64 seq = 0;                ///< its batch
    bool converted = false;         ///< in its batch already; else the aggregator converts it
};

/// The open batches, oldest first. Bounded: each holds a pool buffer.
struct Ring {
    /// A pad runs up to four frames ahead of the batch being closed: the one the aggregator
    /// took, two in GstAggregator's queue (live), one in its chain.
    static constexpr size_t kMaxOpen = 4;
    std::deque<std::unique_ptr<OpenBatch>> open;
    guint64 next_seq = 1;
    guint64 next_ticket = 1;

    OpenBatch* front() { return open.empty() ? nullptr : open.front().get(); }
    /// The batch a frame arriving now belongs to at the earliest: the oldest not closed.
    guint64 lowest() const
    {
        if (open.empty())
            return next_seq;
        return open.front()->closed ? open.front()->seq + 1 : open.front()->seq;
    }
    /// Whether batch `seq` has left the ring.
    bool gone(guint64 seq) const { return open.empty() || seq < open.front()->seq; }
    void clear();
};

/// The chain function of tensorbatch's sink pads: early conversion, then GstAggregator's own.
GstFlowReturn early_chain(GstPad* pad, GstObject* parent, GstBuffer* buf);

/// The ticket of `buf` when it is the oldest frame of a pad whose tickets are `tickets`; null
/// for a frame its chain did not see (a GAP event's). Under mu.
const Ticket* find_ticket(const std::deque<Ticket>& tickets, const GstBuffer* buf);
/// find_ticket(), taken off `tickets`.
std::optional<Ticket> take_ticket(std::deque<Ticket>& tickets, const GstBuffer* buf);

/// Forgets what `pad`'s frames claimed in open batches and its tickets (flush-stop: its
/// queued frames are gone). Under mu.
void forget_pad(Ring& ring, guint pad_index, std::deque<Ticket>& tickets, guint64& last_seq);

} // namespace edgetensor::gst::tensorbatch
