// SPDX-License-Identifier: MIT
//
// Model files: readable before a runtime is asked (so a missing file is one clear Io error
// whatever the backend), and the Auto backend decided by content, then by name.

#include "infer/model_file.hpp"

#include "edgetensor/unique_fd.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace edgetensor
{
namespace
{

bool ends_with(std::string_view s, std::string_view tail)
{
    if (s.size() < tail.size())
        return false;
    for (size_t i = 0; i < tail.size(); ++i) {
        char c = s[s.size() - tail.size() + i];
        if (c >= 'A' && c <= 'Z')
            c = char(c - 'A' + 'a');
        if (c != tail[i])
            return false;
    }
    return true;
}

/// Opens and checks `path`; reads up to 8 bytes of its head into `head`.
Result<size_t> read_head(const std::string& path, unsigned char (&head)[8])
{
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd)
        return unexpected(Error::io(errno, "model '" + path + "': cannot open it"));
    struct stat st {
    };
    if (::fstat(fd.get(), &st) != 0)
        return unexpected(Error::io(errno, "model '" + path + "': fstat failed"));
    if (!S_ISREG(st.st_mode))
        return make_error(ErrorCode::InvalidArgument, "model '" + path + "' is not a regular file");
    if (st.st_size == 0)
        return make_error(ErrorCode::InvalidArgument, "model '" + path + "' is empty");
    size_t got = 0;
    while (got < sizeof(head)) {
        const ssize_t n = ::read(fd.get(), head + got, sizeof(head) - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return unexpected(Error::io(errno, "model '" + path + "': cannot read it"));
        if (n == 0)
            break;
        got += size_t(n);
    }
    return got;
}

} // namespace

namespace detail::infer
{

Result<void> check_model_file(const std::string& path)
{
    unsigned char head[8];
    auto r = read_head(path, head);
    if (!r)
        return unexpected(std::move(r).error());
    return {};
}

} // namespace detail::infer

Result<InferBackend> infer_backend_for_file(std::string_view model_path)
{
    const std::string path(model_path);
    unsigned char head[8] = {};
    auto got = read_head(path, head);
    if (!got)
        return unexpected(std::move(got).error());
    // A TensorFlow Lite model is a flatbuffer whose file identifier (bytes 4..7) is "TFL3".
    if (*got >= 8 && std::memcmp(head + 4, "TFL3", 4) == 0)
        return InferBackend::TfLite;
    if (ends_with(path, ".tflite"))
        return InferBackend::TfLite;
    if (ends_with(path, ".onnx"))
        return InferBackend::OnnxRuntime;
    // An ONNX ModelProto is a protobuf whose first field is ir_version (field 1, varint): tag
    // byte 0x08. Writers emit it first, so a nameless ONNX file still starts with it.
    if (head[0] == 0x08)
        return InferBackend::OnnxRuntime;
    return make_error(ErrorCode::InvalidArgument,
                      "cannot tell which runtime reads model '" + path +
                          "': it is no TensorFlow Lite flatbuffer (no \"TFL3\" identifier), "
                          "does not look like ONNX, and its name ends in neither .onnx nor "
                          ".tflite; name the backend (onnxruntime or tflite)");
}

} // namespace edgetensor
