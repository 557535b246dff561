// SPDX-License-Identifier: MIT
//
// Helpers the inference tests share: a scratch directory, files, and error-text checks.

#pragma once

#include <edgetensor/infer.hpp>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace edgetensor::test
{

/// A fresh directory under $TMPDIR (or /tmp), removed with everything in it when destroyed.
class TempDir
{
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const noexcept { return path_; }
    /// path()/name
    std::string file(std::string_view name) const;
    /// Writes `bytes` to path()/name and returns that path.
    std::string write(std::string_view name, std::string_view bytes) const;

private:
    std::string path_;
};

/// The environment variable `name`, or "" when unset.
std::string env_or_empty(const char* name);

} // namespace edgetensor::test

/// The error's message contains `text`.
#define EXPECT_ERROR_HAS(result, code_, text)                                                      \
    do {                                                                                           \
        const auto& et_r_ = (result);                                                              \
        ASSERT_FALSE(et_r_) << "expected an error containing: " << (text);                         \
        EXPECT_EQ(et_r_.error().code(), (code_))                                                   \
            << ::edgetensor::error_code_name(et_r_.error().code()) << ": "                         \
            << et_r_.error().message();                                                            \
        EXPECT_NE(et_r_.error().message().find(text), std::string::npos)                           \
            << "message: " << et_r_.error().message() << "\nexpected to contain: " << (text);      \
    } while (0)
