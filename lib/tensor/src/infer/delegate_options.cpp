// SPDX-License-Identifier: MIT

#include "infer/delegate_options.hpp"

namespace edgetensor::detail::infer
{
namespace
{

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

} // namespace

Result<std::vector<std::pair<std::string, std::string>>>
parse_delegate_options(std::string_view text)
{
    std::vector<std::pair<std::string, std::string>> out;
    while (!text.empty()) {
        const size_t end = text.find(';');
        const std::string_view piece = trim(text.substr(0, end));
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
        if (piece.empty())
            continue;
        const size_t eq = piece.find('=');
        if (eq == std::string_view::npos)
            return make_error(ErrorCode::InvalidArgument,
                              "delegate option '" + std::string(piece) +
                                  "' has no '=': write key=value pairs separated by ';'");
        const std::string key(trim(piece.substr(0, eq)));
        if (key.empty())
            return make_error(ErrorCode::InvalidArgument,
                              "delegate option '" + std::string(piece) + "' has an empty key");
        for (const auto& kv : out)
            if (kv.first == key)
                return make_error(ErrorCode::InvalidArgument,
                                  "delegate option '" + key + "' is given twice");
        out.emplace_back(key, std::string(trim(piece.substr(eq + 1))));
    }
    return out;
}

} // namespace edgetensor::detail::infer
