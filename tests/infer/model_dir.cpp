// SPDX-License-Identifier: MIT
#include "model_dir.hpp"

#include <cstdio>
#include <sys/wait.h>

namespace edgetensor::test
{

void ModelDir::make_with_python(const std::string& python, const std::string& script)
{
    dir_ = std::make_unique<TempDir>();
    if (python.empty() || script.empty()) {
        why_ = "no python3 or model script given (EDGETENSOR_TEST_PYTHON, "
               "EDGETENSOR_TEST_ONNX_MODELS)";
        host_lacks_ = true;
        return;
    }
    const std::string cmd = "'" + python + "' '" + script + "' '" + dir_->path() + "' 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) {
        why_ = "cannot run " + cmd;
        return;
    }
    std::string out;
    char buf[512];
    while (size_t n = std::fread(buf, 1, sizeof(buf), p))
        out.append(buf, n);
    const int status = ::pclose(p);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 0)
        why_.clear();
    else if (code == 77) {
        why_ = "the test models cannot be made here: " + out;
        host_lacks_ = true;
    } else
        why_ = "making the test models failed (exit " + std::to_string(code) + "): " + out;
}

} // namespace edgetensor::test
