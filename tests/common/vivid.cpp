// SPDX-License-Identifier: MIT

#include "vivid.hpp"

#include <fcntl.h>
#include <linux/videodev2.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace edgetensor::test
{

std::optional<std::string> find_vivid_capture()
{
    for (int i = 0; i < 64; ++i) {
        const std::string path = "/dev/video" + std::to_string(i);
        const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
            continue;
        v4l2_capability cap{};
        const bool ok = ::ioctl(fd, VIDIOC_QUERYCAP, &cap) == 0;
        ::close(fd);
        if (!ok || std::strcmp(reinterpret_cast<const char*>(cap.driver), "vivid") != 0)
            continue;
        const __u32 caps =
            (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
        if ((caps & V4L2_CAP_VIDEO_CAPTURE) && (caps & V4L2_CAP_STREAMING))
            return path;
    }
    return std::nullopt;
}

bool vivid_required()
{
    const char* v = std::getenv("EDGETENSOR_TEST_REQUIRE_VIVID");
    return v && std::strcmp(v, "1") == 0;
}

} // namespace edgetensor::test
