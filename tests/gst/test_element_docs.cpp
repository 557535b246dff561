// SPDX-License-Identifier: MIT
//
// docs/elements/<element>.md agree with what gst-inspect-1.0 prints about the element: the
// Klass, every property of its own (type, read-only, when it may change, range, default), each
// pad template and the media types it carries, and for tensorimport every field of the stats
// structure. gst-inspect reads exactly these (the factory metadata and the GParamSpecs), so a
// page that drifts from the code fails here.

#include "gst_test_util.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace edgetensor::test
{
namespace
{

std::string read_page(const std::string& element)
{
    const char* dir = std::getenv("EDGETENSOR_DOCS_DIR");
    if (!dir) {
        ADD_FAILURE() << "EDGETENSOR_DOCS_DIR is not set";
        return {};
    }
    std::ifstream f(std::string(dir) + "/" + element + ".md");
    std::stringstream ss;
    ss << f.rdbuf();
    if (ss.str().empty())
        ADD_FAILURE() << "no page docs/elements/" << element << ".md";
    return ss.str();
}

std::string trim(std::string s)
{
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string> cells(const std::string& line)
{
    std::vector<std::string> out;
    std::string cur;
    for (size_t i = 1; i < line.size(); ++i) {
        if (line[i] == '|') {
            out.push_back(trim(cur));
            cur.clear();
        } else {
            cur += line[i];
        }
    }
    return out;
}

/// Rows of the first table whose header starts with `header`, keyed by the unquoted first cell.
std::map<std::string, std::vector<std::string>> table(const std::string& page,
                                                      const std::string& header)
{
    std::map<std::string, std::vector<std::string>> rows;
    std::istringstream in(page);
    std::string line;
    bool inside = false;
    while (std::getline(in, line)) {
        if (!inside) {
            inside = line.rfind(header, 0) == 0;
            continue;
        }
        if (line.rfind("|---", 0) == 0)
            continue;
        if (line.rfind("| `", 0) != 0)
            break;
        auto c = cells(line);
        std::string name = c[0];
        name.erase(std::remove(name.begin(), name.end(), '`'), name.end());
        rows[name] = c;
    }
    return rows;
}

/// The `quoted` words of a cell.
std::set<std::string> quoted(const std::string& cell)
{
    std::set<std::string> out;
    size_t p = 0;
    while ((p = cell.find('`', p)) != std::string::npos) {
        const size_t e = cell.find('`', p + 1);
        if (e == std::string::npos)
            break;
        out.insert(cell.substr(p + 1, e - p - 1));
        p = e + 1;
    }
    return out;
}

std::string type_word(GParamSpec* p)
{
    const GType t = G_PARAM_SPEC_VALUE_TYPE(p);
    if (t == G_TYPE_UINT)
        return "uint";
    if (t == G_TYPE_INT)
        return "int";
    if (t == G_TYPE_UINT64)
        return "uint64";
    if (t == G_TYPE_INT64)
        return "int64";
    if (t == G_TYPE_DOUBLE)
        return "double";
    if (t == G_TYPE_BOOLEAN)
        return "bool";
    if (t == G_TYPE_STRING)
        return "string";
    if (G_TYPE_IS_ENUM(t))
        return "enum";
    if (t == GST_TYPE_STRUCTURE)
        return "structure";
    return g_type_name(t);
}

std::string changeable(GParamSpec* p)
{
    if (!(p->flags & G_PARAM_WRITABLE))
        return "—";
    if (p->flags & GST_PARAM_MUTABLE_PLAYING)
        return "PLAYING";
    if (p->flags & GST_PARAM_MUTABLE_PAUSED)
        return "PAUSED";
    if (p->flags & GST_PARAM_MUTABLE_READY)
        return "READY";
    return "any";
}

// A number as the page writes it: decimal, 0x hex, or a double.
bool number(const std::string& s, long double* out)
{
    errno = 0;
    char* end = nullptr;
    if (s.rfind("0x", 0) == 0 || s.rfind("0X", 0) == 0) {
        *out = (long double)std::strtoull(s.c_str(), &end, 16);
    } else {
        *out = std::strtold(s.c_str(), &end);
    }
    return errno == 0 && end && *end == '\0' && !s.empty();
}

void expect_number(const std::string& what, const std::string& doc, long double code)
{
    long double v = 0;
    ASSERT_TRUE(number(doc, &v)) << what << ": \"" << doc << "\" is not a number";
    EXPECT_LE(std::fabs(v - code), std::fabs(code) * 1e-12L) << what << ": page says " << doc;
}

void check_numeric(GParamSpec* p, const std::vector<std::string>& row)
{
    long double lo = 0, hi = 0, def = 0;
    const GType t = G_PARAM_SPEC_VALUE_TYPE(p);
    if (t == G_TYPE_UINT) {
        lo = G_PARAM_SPEC_UINT(p)->minimum, hi = G_PARAM_SPEC_UINT(p)->maximum;
        def = G_PARAM_SPEC_UINT(p)->default_value;
    } else if (t == G_TYPE_INT) {
        lo = G_PARAM_SPEC_INT(p)->minimum, hi = G_PARAM_SPEC_INT(p)->maximum;
        def = G_PARAM_SPEC_INT(p)->default_value;
    } else if (t == G_TYPE_UINT64) {
        lo = G_PARAM_SPEC_UINT64(p)->minimum, hi = G_PARAM_SPEC_UINT64(p)->maximum;
        def = G_PARAM_SPEC_UINT64(p)->default_value;
    } else if (t == G_TYPE_DOUBLE) {
        lo = G_PARAM_SPEC_DOUBLE(p)->minimum, hi = G_PARAM_SPEC_DOUBLE(p)->maximum;
        def = G_PARAM_SPEC_DOUBLE(p)->default_value;
    } else {
        return;
    }
    const std::string& range = row[2];
    const auto dots = range.find("..");
    ASSERT_NE(dots, std::string::npos) << p->name << ": range \"" << range << "\" is not A..B";
    expect_number(std::string(p->name) + " minimum", range.substr(0, dots), lo);
    expect_number(std::string(p->name) + " maximum", range.substr(dots + 2), hi);
    expect_number(std::string(p->name) + " default", row[3], def);
}

void check_default(GParamSpec* p, const std::vector<std::string>& row)
{
    const GType t = G_PARAM_SPEC_VALUE_TYPE(p);
    const std::string& def = row[3];
    if (G_TYPE_IS_ENUM(t)) {
        GEnumClass* k = G_ENUM_CLASS(g_type_class_ref(t));
        const GEnumValue* v = g_enum_get_value(k, G_PARAM_SPEC_ENUM(p)->default_value);
        EXPECT_EQ(def, std::string("`") + v->value_nick + "`") << p->name << " default";
        std::set<std::string> nicks;
        for (guint i = 0; i < k->n_values; ++i)
            nicks.insert(k->values[i].value_nick);
        EXPECT_EQ(quoted(row[2]), nicks) << p->name << ": the range lists the enum's values";
        g_type_class_unref(k);
    } else if (t == G_TYPE_BOOLEAN) {
        EXPECT_EQ(def, G_PARAM_SPEC_BOOLEAN(p)->default_value ? "true" : "false") << p->name;
    } else if (t == G_TYPE_STRING) {
        const char* d = G_PARAM_SPEC_STRING(p)->default_value;
        EXPECT_EQ(def, std::string("`\"") + (d ? d : "") + "\"`") << p->name << " default";
    } else {
        check_numeric(p, row);
    }
}

void check_page(const char* element)
{
    SCOPED_TRACE(element);
    const std::string page = read_page(element);
    ASSERT_FALSE(page.empty());
    GstElementFactory* f = gst_element_factory_find(element);
    ASSERT_TRUE(f);
    const std::string klass = gst_element_factory_get_metadata(f, GST_ELEMENT_METADATA_KLASS);
    EXPECT_NE(page.find("- Klass: `" + klass + "`"), std::string::npos)
        << "gst-inspect says Klass " << klass;

    // Pad templates: named, and every media type they carry mentioned.
    for (const GList* l = gst_element_factory_get_static_pad_templates(f); l; l = l->next) {
        auto* t = static_cast<GstStaticPadTemplate*>(l->data);
        EXPECT_NE(page.find(std::string("**") + t->name_template + "**"), std::string::npos)
            << "pad " << t->name_template;
        CapsPtr caps(gst_static_caps_get(&t->static_caps));
        for (guint i = 0; i < gst_caps_get_size(caps.get()); ++i) {
            const char* media = gst_structure_get_name(gst_caps_get_structure(caps.get(), i));
            EXPECT_NE(page.find(std::string("`") + media), std::string::npos)
                << "pad " << t->name_template << " carries " << media;
        }
    }

    // Properties of its own (the base classes' are gst-inspect's usual ones).
    GstElement* e = gst_element_factory_create(f, nullptr);
    ASSERT_TRUE(e);
    auto rows = table(page, "| Property | Type | Range | Default | Changeable |");
    guint n = 0;
    GParamSpec** specs = g_object_class_list_properties(G_OBJECT_GET_CLASS(e), &n);
    std::set<std::string> own, documented;
    for (const auto& [name, row] : rows)
        documented.insert(name);
    for (guint i = 0; i < n; ++i) {
        GParamSpec* p = specs[i];
        if (p->owner_type != G_OBJECT_TYPE(e))
            continue;
        own.insert(p->name);
        auto it = rows.find(p->name);
        if (it == rows.end())
            continue;
        SCOPED_TRACE(p->name);
        const auto& row = it->second;
        ASSERT_GE(row.size(), 6u);
        EXPECT_EQ(row[1].substr(0, row[1].find(',')), type_word(p)) << "type";
        EXPECT_EQ(row[1].find("read-only") != std::string::npos, !(p->flags & G_PARAM_WRITABLE))
            << "read-only";
        EXPECT_EQ(row[4], changeable(p)) << "changeable";
        if (G_PARAM_SPEC_VALUE_TYPE(p) != GST_TYPE_STRUCTURE)
            check_default(p, row);
    }
    g_free(specs);
    EXPECT_EQ(documented, own) << "the page's property table lists exactly the element's own";

    if (std::string(element) == "tensorimport") {
        // Every field of the stats structure has a row in the Statistics table.
        auto stats_rows = table(page, "| Field | Type | Meaning |");
        GstStructure* s = nullptr;
        g_object_get(e, "stats", &s, nullptr);
        ASSERT_TRUE(s);
        std::set<std::string> fields, rows_named;
        for (gint i = 0; i < gst_structure_n_fields(s); ++i)
            fields.insert(gst_structure_nth_field_name(s, guint(i)));
        for (const auto& [name, row] : stats_rows)
            rows_named.insert(name);
        EXPECT_EQ(rows_named, fields) << "the Statistics table lists every stats field";
        EXPECT_NE(page.find(std::string("`") + gst_structure_get_name(s) + "`"), std::string::npos);
        gst_structure_free(s);
    }
    gst_object_unref(e);
    gst_object_unref(f);
}

// Every element of the plugin, so a new one comes with its page.
TEST(ElementDocs, EveryElementsPageAgreesWithGstInspect)
{
    GList* features = gst_registry_get_feature_list_by_plugin(gst_registry_get(), "edgetensor");
    std::set<std::string> elements;
    for (GList* l = features; l; l = l->next)
        if (GST_IS_ELEMENT_FACTORY(l->data))
            elements.insert(GST_OBJECT_NAME(l->data));
    gst_plugin_feature_list_free(features);
    for (const char* known : {"tensortestsrc", "tensorimport", "tensorconvert"})
        EXPECT_TRUE(elements.count(known)) << known;
    for (const std::string& e : elements)
        check_page(e.c_str());
}

} // namespace
} // namespace edgetensor::test
