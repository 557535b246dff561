// SPDX-License-Identifier: MIT
//
// tensorinfer's output names (tensorinfer_naming.hpp).

#include "tensorinfer_naming.hpp"

#include <gst/gst.h>

#include <algorithm>
#include <set>

namespace edgetensor::gst::tensorinfer
{

namespace
{

constexpr const char* kSsdGroup = "ssd-mobilenet-v1-variant-1-out";
constexpr const char* kYoloId = "yolo-v8-out";

// The TF-SSD outputs, matched by prefix as upstream's onnxinference does ("detection_boxes:0").
struct SsdRow {
    const char* prefix;
    const char* id126;
    const char* id128;
    bool boxes;
};
constexpr SsdRow kSsd[] = {
    {"detection_boxes", "Gst.Model.ObjectDetector.Boxes", "ssd-mobilenet-v1-variant-1-out-boxes",
     true},
    {"detection_scores", "Gst.Model.ObjectDetector.Scores", "ssd-mobilenet-v1-variant-1-out-scores",
     false},
    {"detection_classes", "Gst.Model.ObjectDetector.Classes",
     "ssd-mobilenet-v1-variant-1-out-classes", false},
    {"num_detections", "Gst.Model.ObjectDetector.NumDetections", "generic-variant-1-out-count",
     false},
};

std::string trim(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

bool starts_with(const std::string& s, const char* prefix)
{
    return s.rfind(prefix, 0) == 0;
}

// What an id means to the decoders that read it, whichever release spells it.
OutputName convention_of(const std::string& id)
{
    OutputName n;
    n.id = id;
    if (id == kYoloId) {
        n.order = TensorDimOrder::ColMajor;
        n.boxes = BoxFormat::YoloCxcywhPixels;
    }
    for (const SsdRow& r : kSsd) {
        if (id != r.id126 && id != r.id128)
            continue;
        if (r.boxes)
            n.boxes = BoxFormat::SsdNormalizedYxyx;
        if (std::string(r.prefix) != "num_detections")
            n.caps_any_dim = 1; // [1, N, 4], [1, N]: the detection count
    }
    return n;
}

// The decoders' id for output `info`, or its own name.
std::string default_id(const InferTensorInfo& info, size_t n_outputs, DecoderRelease release)
{
    for (const SsdRow& r : kSsd)
        if (starts_with(info.name, r.prefix))
            return release == DecoderRelease::Gst128 ? r.id128 : r.id126;
    // Ultralytics' YOLOv8 export: one output "output0" of [1, 4 + classes, candidates].
    if (n_outputs == 1 && info.name == "output0" && info.shape.size() == 3 &&
        (info.shape[1] < 0 || info.shape[1] >= 5))
        return kYoloId;
    return info.name;
}

std::string stem_of(const std::string& path)
{
    std::string base = path.substr(path.find_last_of('/') + 1);
    const auto dot = base.find_last_of('.');
    if (dot != std::string::npos && dot > 0)
        base.resize(dot);
    return base.empty() ? "model" : base;
}

} // namespace

DecoderRelease this_release() noexcept
{
#if GST_CHECK_VERSION(1, 27, 0)
    return DecoderRelease::Gst128;
#else
    return DecoderRelease::Gst126;
#endif
}

Result<std::vector<std::pair<std::string, std::string>>> parse_tensor_ids(const std::string& s)
{
    std::vector<std::pair<std::string, std::string>> out;
    std::set<std::string> seen;
    size_t pos = 0;
    while (pos <= s.size()) {
        const size_t comma = std::min(s.find(',', pos), s.size());
        const std::string piece = trim(s.substr(pos, comma - pos));
        pos = comma + 1;
        if (piece.empty())
            continue;
        const auto eq = piece.find('=');
        if (eq == std::string::npos)
            return make_error(ErrorCode::InvalidArgument,
                              "tensor-ids: '" + piece + "' is not output=id");
        std::string name = trim(piece.substr(0, eq));
        std::string id = trim(piece.substr(eq + 1));
        if (name.empty() || id.empty())
            return make_error(ErrorCode::InvalidArgument,
                              "tensor-ids: '" + piece + "' needs both an output name and an id");
        if (!seen.insert(name).second)
            return make_error(ErrorCode::InvalidArgument,
                              "tensor-ids: output '" + name + "' is given twice");
        out.emplace_back(std::move(name), std::move(id));
    }
    return out;
}

Result<OutputNaming> name_outputs(const std::vector<InferTensorInfo>& outputs,
                                  const std::string& model, const std::string& tensor_ids,
                                  const std::string& group, DecoderRelease release)
{
    auto mapping = parse_tensor_ids(tensor_ids);
    if (!mapping)
        return mapping.error();
    std::vector<std::string> ids;
    ids.reserve(outputs.size());
    for (const InferTensorInfo& o : outputs)
        ids.push_back(default_id(o, outputs.size(), release));
    for (const auto& [name, id] : *mapping) {
        auto it = std::find_if(outputs.begin(), outputs.end(),
                               [&](const InferTensorInfo& o) { return o.name == name; });
        if (it == outputs.end()) {
            std::string names;
            for (const InferTensorInfo& o : outputs)
                names += (names.empty() ? "" : ", ") + o.name;
            return make_error(ErrorCode::InvalidArgument, "tensor-ids: model '" + model +
                                                              "' has no output '" + name +
                                                              "' (its outputs: " + names + ")");
        }
        ids[size_t(it - outputs.begin())] = id;
    }
    OutputNaming naming;
    std::set<std::string> unique;
    bool all_ssd = !outputs.empty(), all_yolo = !outputs.empty();
    for (size_t i = 0; i < ids.size(); ++i) {
        if (!unique.insert(ids[i]).second)
            return make_error(ErrorCode::InvalidArgument, "tensor-ids: two outputs of model '" +
                                                              model + "' would be '" + ids[i] +
                                                              "'; give each its own id");
        naming.outputs.push_back(convention_of(ids[i]));
        bool ssd = false;
        for (const SsdRow& r : kSsd)
            ssd = ssd || ids[i] == r.id128 || ids[i] == r.id126;
        all_ssd = all_ssd && ssd;
        all_yolo = all_yolo && ids[i] == kYoloId;
    }
    naming.group = !group.empty() ? group
                   : all_ssd      ? std::string(kSsdGroup)
                   : all_yolo     ? std::string(kYoloId)
                                  : stem_of(model);
    return naming;
}

} // namespace edgetensor::gst::tensorinfer
