// SPDX-License-Identifier: MIT
//
// tensoripcsink's ipc::ServerObserver: how the server's log, its refused receivers and the
// byte bound (max-held-bytes) and a receiver that holds a blocking sender up reach the element's
// debug category and the bus. The server (lib/tensor/src/ipc/ipc_server.hpp) decides; this file
// words it.

#pragma once

#include "gsttensoripcsink.h"
#include "ipc_server.hpp"

#include <edgetensor/log.hpp>

#include <cstdint>
#include <string>

namespace edgetensor::gst::tensoripcsink
{

// The server's log goes to this element's debug category, its refusals to the bus.
class Observer final : public ipc::ServerObserver
{
public:
    explicit Observer(GstTensorIpcSink* self) : self_(self) {}

    bool log_enabled(LogLevel level) const noexcept override;
    void log(LogLevel level, const std::string& message) noexcept override;
    void refused_uid(const ipc::PeerCredentials& peer, int allowed_uid, const std::string& receiver,
                     const std::string& path) noexcept override;
    void refused(ipc::Refusal why, uint32_t max_clients, const std::string& receiver,
                 const std::string& path, bool first) noexcept override;
    void over_byte_bound(uint64_t frame_bytes, uint64_t held_bytes, uint64_t bound, bool dropped,
                         bool first) noexcept override;
    void waiting_for_receiver(const ipc::HoldUp& who) noexcept override;
    void gave_up_on_receiver(const ipc::HoldUp& who) noexcept override;

private:
    GstTensorIpcSink* self_;
};

} // namespace edgetensor::gst::tensoripcsink
