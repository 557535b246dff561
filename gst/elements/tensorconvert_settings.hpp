// SPDX-License-Identifier: MIT
//
// tensorconvert's string properties (mean, std, crop): parsing, validation, and the record of
// refused values that keeps the element from starting with settings nobody asked for.

#pragma once

#include <edgetensor/types.hpp>

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace edgetensor::gst::tensorconvert
{

/// Largest width, height or crop coordinate.
inline constexpr unsigned kMaxSize = 16384;

/// "a,b,c" (at most 4 values, one per output channel) as floats; empty = no values. Every value
/// must be a finite number whose magnitude fits a float (a mean of 1e39 would become inf).
bool parse_mean(const char* str, std::vector<float>* out, std::string* why);

/// As parse_mean, and every value must be a normal float: not zero, not denormal (1e-40 is,
/// and (value - mean) / std would overflow to inf), not infinite.
bool parse_std(const char* str, std::vector<float>* out, std::string* why);

/// "x,y,width,height" (integers 0..16384, width and height >= 1). Empty = no crop.
bool parse_crop(const char* str, std::optional<Region>* out, std::string* why);

/// Spreads a mean/std list over `channels`: one value for all, or exactly one per channel.
bool per_channel(const std::vector<float>& v, size_t channels, float def,
                 std::array<float, 4>* out);

/// True when (value - mean) / std stays finite in float for every value 0..255 of every one of
/// `channels` channels (lists as per_channel() spreads them; lists that do not spread are left
/// to the caller); otherwise `why` names the channel and its mean and std.
bool normalisation_is_finite(const std::vector<float>& mean, const std::vector<float>& stdev,
                             size_t channels, std::string* why);

/// Property values that were refused and not replaced since: gst-launch sets properties before
/// the element has a bus, so a warning can go unseen; start() refuses to run while any is here.
class Refusals
{
public:
    void refuse(const std::string& prop, const std::string& value, const std::string& why);
    /// A value of `prop` was accepted: its earlier refusal no longer stands.
    void accept(const std::string& prop) { refused_.erase(prop); }
    bool empty() const noexcept { return refused_.empty(); }
    /// "std \"0\" (std values must not be zero); crop \"a\" (...)".
    std::string describe() const;

private:
    std::map<std::string, std::string> refused_; // prop -> "\"value\" (why)"
};

} // namespace edgetensor::gst::tensorconvert
