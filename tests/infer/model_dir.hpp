// SPDX-License-Identifier: MIT
//
// The test models of a suite, made once per process in a scratch directory by a generator
// (make_onnx_models.py through python3, or a C++ function).

#pragma once

#include "infer_test_util.hpp"

#include <memory>
#include <string>

namespace edgetensor::test
{

class ModelDir
{
public:
    /// Runs `python script dir`; a missing python3-onnx (exit 77) or a failure leaves why().
    void make_with_python(const std::string& python, const std::string& script);
    /// Calls `make(dir)`, which returns "" or why it failed.
    template <typename F> void make_with(F&& make)
    {
        dir_ = std::make_unique<TempDir>();
        why_ = make(dir_->path());
    }
    /// "" when the models are there.
    const std::string& why() const noexcept { return why_; }
    /// True when the models could not be made for a reason of the host (python3-onnx missing),
    /// not because the generator failed.
    bool host_lacks_tools() const noexcept { return host_lacks_; }
    std::string path(const std::string& name) const { return dir_ ? dir_->file(name) : name; }

private:
    std::unique_ptr<TempDir> dir_;
    std::string why_ = "not made";
    bool host_lacks_ = false;
};

} // namespace edgetensor::test
