// SPDX-License-Identifier: MIT
//
// What the vivid tests share: the system plugins they load, a pipeline run to EOS with
// tensorimport's statistics kept, and the DMA-BUF inode that identifies a V4L2 buffer.

#pragma once

#include <gst/gst.h>

#include <initializer_list>
#include <memory>
#include <set>
#include <string>

namespace edgetensor::test::v4l2
{

/// The inode behind `fd` (0 when fstat fails): the same for every fd of one DMA-BUF.
guint64 inode_of(int fd);

/// Loads `files` (such as "libgstvideo4linux2.so") from GStreamer's system plugin directory,
/// which the test environment leaves out. Empty on success, else what could not be loaded.
std::string load_system_plugins(std::initializer_list<const char*> files);

struct StructureFree {
    void operator()(GstStructure* s) const noexcept { gst_structure_free(s); }
};
using StructurePtr = std::unique_ptr<GstStructure, StructureFree>;

/// How a pipeline's run ended.
struct RunEnd {
    std::string error;  ///< empty when EOS came; else the error message and its debug text
    StructurePtr stats; ///< tensorimport's edgetensor-stats message (null when none came)
    double seconds = 0; ///< from PLAYING to EOS or the error
};

/// Sets `pipeline` to PLAYING and waits for EOS or an error, at most 120 s. The pipeline stays
/// in PLAYING, so elements that count per run (tensorconvert) can still be read.
RunEnd run_to_eos(GstElement* pipeline);

/// A guint64 field of `stats` (`fallback` when it is missing).
guint64 stat_u64(const GstStructure* stats, const char* field, guint64 fallback = 0);

/// The `inodes` array of tensorimport's statistics: the cached tensors' own fds' inodes.
std::set<guint64> cached_inodes(const GstStructure* stats);

} // namespace edgetensor::test::v4l2
