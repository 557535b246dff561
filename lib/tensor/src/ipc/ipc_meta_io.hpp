// SPDX-License-Identifier: MIT
//
// The meta section's byte writer and bounded reader, and the records coded outside
// ipc_meta.cpp (ipc_meta_batch.cpp: tensorbatch's provenance). Internal to the protocol.

#pragma once

#include "ipc_meta.hpp"

#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace edgetensor::ipc::detail
{

inline Unexpected bad(std::string what)
{
    return make_error(ErrorCode::InvalidDescriptor, std::move(what));
}

inline Unexpected too_many(std::string what)
{
    return make_error(ErrorCode::InvalidArgument, std::move(what));
}

inline constexpr size_t kRecordHeadSize = 8;
inline constexpr size_t kFdEntrySize = 16;

class Writer
{
public:
    template <typename T> void put(T v)
    {
        const size_t at = out_.size();
        out_.resize(at + sizeof(T));
        std::memcpy(out_.data() + at, &v, sizeof(T));
    }
    void str(const std::string& s)
    {
        put(uint32_t(s.size()));
        out_.insert(out_.end(), s.begin(), s.end());
    }
    size_t size() const noexcept { return out_.size(); }
    void patch_u32(size_t at, uint32_t v) { std::memcpy(out_.data() + at, &v, sizeof(v)); }
    std::vector<uint8_t> take() { return std::move(out_); }

private:
    std::vector<uint8_t> out_;
};

// Reads within its bytes or fails; the first failure sticks, so a parser can read a whole
// fixed part and check once.
class Reader
{
public:
    explicit Reader(std::span<const uint8_t> b) : b_(b) {}
    template <typename T> bool get(T* v)
    {
        if (b_.size() - at_ < sizeof(T)) {
            ok_ = false;
            return false;
        }
        std::memcpy(v, b_.data() + at_, sizeof(T));
        at_ += sizeof(T);
        return true;
    }
    size_t left() const noexcept { return b_.size() - at_; }
    bool ok() const noexcept { return ok_; }
    /// A length-prefixed string of at most kMaxLabelBytes, no NUL.
    Result<void> str(std::string* s, const std::string& what)
    {
        uint32_t n = 0;
        if (!get(&n))
            return bad(what + " is truncated");
        if (n > kMaxLabelBytes)
            return bad(what + " of " + std::to_string(n) + " bytes (at most " +
                       std::to_string(kMaxLabelBytes) + ")");
        if (n > left())
            return bad(what + " of " + std::to_string(n) + " bytes is truncated");
        const char* p = reinterpret_cast<const char*>(b_.data() + at_);
        if (std::memchr(p, '\0', n) != nullptr)
            return bad(what + " holds a NUL byte");
        s->assign(p, n);
        at_ += n;
        return {};
    }
    std::span<const uint8_t> take(size_t n)
    {
        auto s = b_.subspan(at_, n);
        at_ += n;
        return s;
    }

private:
    std::span<const uint8_t> b_;
    size_t at_ = 0;
    bool ok_ = true;
};

void encode_batch(Writer& w, const BatchMeta& m);
/// A BATCH record's body; errors (InvalidDescriptor) name `where` and the slot and field.
Result<BatchMeta> parse_batch(Reader& r, const std::string& where);

} // namespace edgetensor::ipc::detail
