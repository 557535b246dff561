// SPDX-License-Identifier: MIT

#include "gl/import_cache.hpp"

#include "gl/gl_worker.hpp"
#include "log.hpp"

#include <vector>

namespace edgetensor::detail::gl
{
namespace
{
constexpr const char* kCat = "gl";

} // namespace

std::string import_key_string(const ImportKey& k)
{
    char b[160];
    std::snprintf(b, sizeof b, "identity %llu %s offset %llu %ux%u stride %u %s",
                  static_cast<unsigned long long>(k.identity),
                  k.buffer == kDirectBuffer ? "direct"
                  : k.buffer                ? "buffer 1"
                                            : "buffer 0",
                  static_cast<unsigned long long>(k.offset), k.width, k.height, k.stride,
                  fourcc_string(k.fourcc).c_str());
    return b;
}

void ImportCache::sweep()
{
    for (auto it = lru_.begin(); it != lru_.end();) {
        if (it->alive.expired()) {
            ET_LOG_TRACE(kCat, "import cache: sweeping %s (its tensors are gone)",
                         import_key_string(it->key).c_str());
            importer_.destroy(it->img);
            it = lru_.erase(it);
            ++stats_.swept;
        } else {
            ++it;
        }
    }
    stats_.entries = lru_.size();
}

void ImportCache::clear()
{
    for (auto& e : lru_)
        importer_.destroy(e.img);
    lru_.clear();
    stats_.entries = 0;
}

Result<ImportedImage> ImportCache::acquire(const ImportRequest& req)
{
    sweep();
    for (auto it = lru_.begin(); it != lru_.end(); ++it) {
        if (!(it->key == req.key))
            continue;
        if (it != lru_.begin())
            lru_.splice(lru_.begin(), lru_, it);
        Entry& e = lru_.front();
        if (!e.declined.empty())
            return make_error(ErrorCode::NotSupported, e.declined);
        if (req.render_target && !e.img.framebuffer)
            return make_error(ErrorCode::NotSupported, "the import of " + import_key_string(e.key) +
                                                           " cannot be rendered into");
        ++stats_.hits;
        return e.img;
    }

    ++stats_.misses;
    // A buffer re-keyed to a new geometry (a pooled tensor reconfigured) drops its old import
    // first: it is stale. (Mesa 22's kms_swrast still hands back the old pitch for a buffer it
    // has imported before; the importer's pixel check catches that and the buffer is uploaded.)
    for (auto it = lru_.begin(); it != lru_.end();) {
        if (it->key.identity == req.key.identity && it->key.buffer == req.key.buffer) {
            ET_LOG_TRACE(kCat, "import cache: %s replaced by a new geometry",
                         import_key_string(it->key).c_str());
            importer_.destroy(it->img);
            it = lru_.erase(it);
            ++stats_.evictions;
        } else {
            ++it;
        }
    }
    while (lru_.size() >= capacity_ && !lru_.empty()) {
        ET_LOG_TRACE(kCat, "import cache: evicting %s", import_key_string(lru_.back().key).c_str());
        importer_.destroy(lru_.back().img);
        lru_.pop_back();
        ++stats_.evictions;
    }
    lru_.push_front(Entry{req.key, req.alive, {}, {}});
    Entry& e = lru_.front();
    stats_.entries = lru_.size();
    auto r = importer_.create(req, e.img);
    if (!r) {
        importer_.destroy(e.img);
        // Remembered, so the buffer goes straight to the upload path on its next frames.
        e.declined = r.error().message();
        if (req.external)
            ET_LOG_WARNING(kCat,
                           "direct YUV import declined: %s; the converter imports its planes as "
                           "byte grids and converts them itself (counted in direct_declines)",
                           e.declined.c_str());
        else
            ET_LOG_WARNING(kCat, "%s; uploading it instead (counted as a zero-copy decline)",
                           e.declined.c_str());
        return unexpected(std::move(r).error());
    }
    ET_LOG_DEBUG(kCat, "import cache: imported %s", import_key_string(req.key).c_str());
    return e.img;
}

} // namespace edgetensor::detail::gl
