// SPDX-License-Identifier: MIT
//
// tensorinfer's caps (tensorinfer_caps.hpp).

#include "tensorinfer_caps.hpp"

#include "glib_raii.hpp"
#include "gst_tensor_meta.hpp"
#include "tensor_caps.hpp"

#include <cctype>
#include <string>

namespace edgetensor::gst::tensorinfer
{

#define TENSORS_CAPS "other/tensors, num_tensors = (int) 1, format = (string) static"
#define VIDEO_CAPS "video/x-raw; video/x-raw(memory:DMABuf)"

GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(TENSORS_CAPS "; " VIDEO_CAPS));
GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS("other/tensors, format = (string) static; " VIDEO_CAPS));

namespace
{

#if GST_CHECK_VERSION(1, 27, 0)
// A GstStructure field name: a letter first, then letters, digits, '-', '_' and '.'.
std::string field_name(const std::string& s)
{
    std::string out;
    for (char c : s)
        out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')
                   ? c
                   : '-';
    if (out.empty() || !std::isalpha(static_cast<unsigned char>(out[0])))
        out = "model-" + out;
    return out;
}
#endif

bool static_shape(const std::vector<int64_t>& shape, Shape* out)
{
    out->clear();
    for (int64_t d : shape) {
        if (d <= 0)
            return false;
        out->push_back(size_t(d));
    }
    return true;
}

// The other/tensors caps the model's input is fed by (tried first upstream), when its shape is
// static.
GstStructure* model_input_structure(const ModelCaps& m)
{
    Shape shape;
    if (!static_shape(m.input.shape, &shape))
        return nullptr;
    GstStructure* s = gst_structure_new(kTensorsMediaType, "num_tensors", G_TYPE_INT, 1, "format",
                                        G_TYPE_STRING, "static", "types", G_TYPE_STRING,
                                        tensor_type_name(m.input.dtype), nullptr);
    GValue dims = G_VALUE_INIT;
    padded_dimensions_list(shape, &dims);
    gst_structure_take_value(s, "dimensions", &dims);
    return s;
}

void append(GstCaps* caps, GstStructure* s, const GstCapsFeatures* f)
{
    gst_caps_append_structure_full(caps, s, f ? gst_caps_features_copy(f) : nullptr);
}

} // namespace

size_t batch_of(const InferTensorInfo& input, const Shape& in_shape) noexcept
{
    if (!input.shape.empty() && input.shape[0] < 0 && in_shape.size() == input.shape.size() &&
        !in_shape.empty())
        return in_shape[0];
    return 1;
}

std::vector<std::optional<Shape>> output_shapes(const ModelCaps& m, size_t batch)
{
    const bool batch_dynamic = !m.input.shape.empty() && m.input.shape[0] < 0;
    std::vector<std::optional<Shape>> out;
    for (const InferTensorInfo& o : m.outputs) {
        Shape s;
        bool ok = true;
        for (size_t i = 0; i < o.shape.size() && ok; ++i) {
            if (o.shape[i] > 0)
                s.push_back(size_t(o.shape[i]));
            else if (i == 0 && batch_dynamic)
                s.push_back(batch);
            else
                ok = false;
        }
        if (s.empty() && ok)
            s.push_back(1); // a scalar output is one element
        out.push_back(ok ? std::optional<Shape>(std::move(s)) : std::nullopt);
    }
    return out;
}

GstCaps* output_tensors_caps(const ModelCaps& m, const std::vector<Shape>& shapes, int fps_n,
                             int fps_d)
{
    std::string types, dims;
    // Appended piecewise: `"," + std::string` makes GCC 12 at -O3 report a -Wrestrict overlap
    // that cannot happen (GCC bug 105329).
    for (size_t i = 0; i < m.outputs.size(); ++i) {
        if (i) {
            types += ',';
            dims += ',';
        }
        types += tensor_type_name(m.outputs[i].dtype);
        dims += dimensions_string(shapes[i]);
    }
    GstStructure* s =
        gst_structure_new(kTensorsMediaType, "num_tensors", G_TYPE_INT, int(m.outputs.size()),
                          "format", G_TYPE_STRING, "static", "types", G_TYPE_STRING, types.c_str(),
                          "dimensions", G_TYPE_STRING, dims.c_str(), nullptr);
    if (fps_d > 0)
        gst_structure_set(s, "framerate", GST_TYPE_FRACTION, fps_n, fps_d, nullptr);
    return gst_caps_new_full(s, nullptr);
}

void set_tensors_field(GstStructure* s, const ModelCaps& m)
{
#if GST_CHECK_VERSION(1, 27, 0)
    GValue list = G_VALUE_INIT;
    g_value_init(&list, GST_TYPE_UNIQUE_LIST);
    for (size_t i = 0; i < m.outputs.size(); ++i) {
        const InferTensorInfo& o = m.outputs[i];
        const OutputName& n = m.naming.outputs[i];
        GstStructure* d = gst_structure_new(
            "tensor/strided", "tensor-id", G_TYPE_STRING, n.id.c_str(), "dims-order", G_TYPE_STRING,
            n.order == TensorDimOrder::ColMajor ? "col-major" : "row-major", "type", G_TYPE_STRING,
            gst_tensor_type_name(o.dtype), nullptr);
        GValue dims = G_VALUE_INIT;
        gst_value_array_init(&dims, guint(o.shape.size()));
        for (size_t k = 0; k < o.shape.size(); ++k) {
            GValue v = G_VALUE_INIT;
            g_value_init(&v, G_TYPE_INT);
            // GStreamer's convention (onnxinference, tfliteinference): 0 = dynamic; a dimension
            // the decoder declares any size is said so, as its accept-caps wants a subset.
            const int64_t dim = int(k) == n.caps_any_dim ? 0 : o.shape[k];
            g_value_set_int(&v, dim > 0 ? int(dim) : 0);
            gst_value_array_append_and_take_value(&dims, &v);
        }
        gst_structure_take_value(d, "dims", &dims);
        GstCaps* c = gst_caps_new_full(d, nullptr);
        GValue cv = G_VALUE_INIT;
        g_value_init(&cv, GST_TYPE_CAPS);
        gst_value_set_caps(&cv, c);
        gst_caps_unref(c);
        gst_value_unique_list_append_and_take_value(&list, &cv);
    }
    GstStructure* groups = gst_structure_new_empty("tensorgroups");
    gst_structure_take_value(groups, field_name(m.naming.group).c_str(), &list);
    GValue gv = G_VALUE_INIT;
    g_value_init(&gv, GST_TYPE_STRUCTURE);
    gst_value_set_structure(&gv, groups);
    gst_structure_free(groups);
    gst_structure_take_value(s, "tensors", &gv);
#else
    (void)s;
    (void)m;
#endif
}

GstCaps* transform_caps(const ModelCaps* m, GstPadDirection direction, GstCaps* caps,
                        GstCaps* filter)
{
    GstCaps* out = gst_caps_new_empty();
    for (guint i = 0; i < gst_caps_get_size(caps); ++i) {
        const GstStructure* s = gst_caps_get_structure(caps, i);
        const GstCapsFeatures* f = gst_caps_get_features(caps, i);
        if (gst_structure_has_name(s, "video/x-raw")) {
            // The frame passes through; on 1.28 the src side describes the outputs.
            GstStructure* v = gst_structure_copy(s);
            gst_structure_remove_field(v, "tensors");
            if (direction == GST_PAD_SINK && m)
                set_tensors_field(v, *m);
            append(out, v, f);
            continue;
        }
        if (!gst_structure_has_name(s, kTensorsMediaType))
            continue;
        if (direction == GST_PAD_SINK) {
            // The outputs of an input of these caps, when they are fixed and static.
            if (m) {
                auto tc = parse_tensor_caps(s);
                if (tc) {
                    std::vector<Shape> shapes;
                    for (auto& shape : output_shapes(*m, batch_of(m->input, tc->shape))) {
                        if (!shape)
                            break;
                        shapes.push_back(*shape);
                    }
                    if (shapes.size() == m->outputs.size()) {
                        gst_caps_append(out, output_tensors_caps(*m, shapes, tc->fps_n, tc->fps_d));
                        continue;
                    }
                }
            }
            append(out,
                   gst_structure_new(kTensorsMediaType, "format", G_TYPE_STRING, "static", nullptr),
                   nullptr);
        } else {
            // What feeds the model, first; anything else is checked (and refused by name) at
            // set_caps.
            if (m)
                if (GstStructure* in = model_input_structure(*m))
                    append(out, in, nullptr);
            append(out,
                   gst_structure_new(kTensorsMediaType, "num_tensors", G_TYPE_INT, 1, "format",
                                     G_TYPE_STRING, "static", nullptr),
                   nullptr);
        }
    }
    if (filter) {
        GstCaps* tmp = gst_caps_intersect_full(filter, out, GST_CAPS_INTERSECT_FIRST);
        gst_caps_unref(out);
        out = tmp;
    }
    return out;
}

} // namespace edgetensor::gst::tensorinfer
