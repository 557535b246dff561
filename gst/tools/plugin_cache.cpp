// SPDX-License-Identifier: MIT
//
// edgetensor-plugin-cache: writes the plugin docs cache, a JSON description of every element
// of a plugin (metadata, hierarchy, pad templates, properties with ranges and defaults,
// signals) and of the enum types its properties use. Deterministic, so the committed cache
// can be compared byte for byte.
//
//   edgetensor-plugin-cache --plugin libgstedgetensor.so --output gst_plugins_cache.json
//   edgetensor-plugin-cache --plugin libgstedgetensor.so --check gst_plugins_cache-1.22.json
//
// --check exits 1 (and prints the first difference) when the cache has drifted from the
// plugin; regenerate with `meson compile -C <build> update-plugin-docs-cache`. Each GStreamer
// release has its own cache (gst/gst_plugins_cache-<release>.json): --skip-if-missing makes a
// missing one a skip (exit 77) instead of a failure, for releases CI does not test.

#include <gst/gst.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace
{

std::string quote(const std::string& s)
{
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof(buf), "\\u%04x", c);
                out += buf;
            } else {
                out += char(c);
            }
        }
    }
    return out + "\"";
}

std::string quote(const char* s)
{
    return s ? quote(std::string(s)) : "null";
}

// A tiny ordered JSON writer: objects keep insertion order, callers insert sorted.
class Json
{
public:
    void open(const std::string& key, char bracket)
    {
        sep(key);
        out_ << bracket;
        first_.push_back(true);
        ++depth_;
    }
    void close(char bracket)
    {
        --depth_;
        const bool empty = first_.back();
        first_.pop_back();
        if (!empty)
            out_ << '\n' << std::string(size_t(depth_) * 4, ' ');
        out_ << bracket;
    }
    void value(const std::string& key, const std::string& raw)
    {
        sep(key);
        out_ << raw;
    }
    std::string str() const { return out_.str() + "\n"; }

private:
    void sep(const std::string& key)
    {
        if (!first_.empty()) {
            if (!first_.back())
                out_ << ',';
            first_.back() = false;
            out_ << '\n' << std::string(size_t(depth_) * 4, ' ');
        }
        if (!key.empty())
            out_ << quote(key) << ": ";
    }
    std::ostringstream out_;
    std::vector<bool> first_;
    int depth_ = 0;
};

std::string value_string(const GValue* v)
{
    const GType t = G_VALUE_TYPE(v);
    if (G_TYPE_IS_ENUM(t)) {
        GEnumClass* ec = G_ENUM_CLASS(g_type_class_ref(t));
        GEnumValue* ev = g_enum_get_value(ec, g_value_get_enum(v));
        std::string s = ev ? ev->value_nick : std::to_string(g_value_get_enum(v));
        g_type_class_unref(ec);
        return quote(s);
    }
    if (t == G_TYPE_BOOLEAN)
        return g_value_get_boolean(v) ? "true" : "false";
    if (t == G_TYPE_STRING)
        return quote(g_value_get_string(v));
    if (G_TYPE_IS_OBJECT(t) || G_TYPE_IS_BOXED(t) || t == G_TYPE_POINTER)
        return "null";
    gchar* s = gst_value_serialize(v);
    if (!s)
        s = g_strdup_value_contents(v);
    std::string out = quote(s);
    g_free(s);
    return out;
}

std::string flags_list(GParamFlags f)
{
    std::vector<std::string> names;
    if (f & G_PARAM_READABLE)
        names.push_back("readable");
    if (f & G_PARAM_WRITABLE)
        names.push_back("writable");
    if (f & G_PARAM_CONSTRUCT)
        names.push_back("construct");
    if (f & G_PARAM_CONSTRUCT_ONLY)
        names.push_back("construct-only");
    if (f & GST_PARAM_CONTROLLABLE)
        names.push_back("controllable");
    if (f & GST_PARAM_MUTABLE_READY)
        names.push_back("mutable-ready");
    if (f & GST_PARAM_MUTABLE_PAUSED)
        names.push_back("mutable-paused");
    if (f & GST_PARAM_MUTABLE_PLAYING)
        names.push_back("mutable-playing");
    std::string out = "[";
    for (size_t i = 0; i < names.size(); ++i)
        out += (i ? ", " : "") + quote(names[i]);
    return out + "]";
}

template <typename Spec> void numeric_range(Json& j, GParamSpec* ps)
{
    auto* s = reinterpret_cast<Spec*>(ps);
    j.value("min", quote(std::to_string(s->minimum)));
    j.value("max", quote(std::to_string(s->maximum)));
}

void dump_properties(Json& j, GObjectClass* klass, std::set<GType>& enums)
{
    guint n = 0;
    GParamSpec** specs = g_object_class_list_properties(klass, &n);
    std::vector<GParamSpec*> sorted(specs, specs + n);
    g_free(specs);
    std::sort(sorted.begin(), sorted.end(),
              [](GParamSpec* a, GParamSpec* b) { return std::strcmp(a->name, b->name) < 0; });
    j.open("properties", '{');
    for (GParamSpec* ps : sorted) {
        j.open(ps->name, '{');
        j.value("blurb", quote(g_param_spec_get_blurb(ps)));
        j.value("nick", quote(g_param_spec_get_nick(ps)));
        j.value("owner", quote(g_type_name(ps->owner_type)));
        j.value("type", quote(g_type_name(G_PARAM_SPEC_VALUE_TYPE(ps))));
        j.value("flags", flags_list(ps->flags));
        const GValue* def = g_param_spec_get_default_value(ps);
        j.value("default", value_string(def));
        if (G_IS_PARAM_SPEC_UINT(ps))
            numeric_range<GParamSpecUInt>(j, ps);
        else if (G_IS_PARAM_SPEC_INT(ps))
            numeric_range<GParamSpecInt>(j, ps);
        else if (G_IS_PARAM_SPEC_UINT64(ps))
            numeric_range<GParamSpecUInt64>(j, ps);
        else if (G_IS_PARAM_SPEC_INT64(ps))
            numeric_range<GParamSpecInt64>(j, ps);
        else if (G_IS_PARAM_SPEC_ULONG(ps))
            numeric_range<GParamSpecULong>(j, ps);
        else if (G_IS_PARAM_SPEC_LONG(ps))
            numeric_range<GParamSpecLong>(j, ps);
        else if (G_IS_PARAM_SPEC_DOUBLE(ps))
            numeric_range<GParamSpecDouble>(j, ps);
        else if (G_IS_PARAM_SPEC_FLOAT(ps))
            numeric_range<GParamSpecFloat>(j, ps);
        if (G_TYPE_IS_ENUM(G_PARAM_SPEC_VALUE_TYPE(ps)))
            enums.insert(G_PARAM_SPEC_VALUE_TYPE(ps));
        j.close('}');
    }
    j.close('}');
}

void dump_signals(Json& j, GType type)
{
    std::map<std::string, std::string> entries;
    for (GType t = type; t && t != G_TYPE_INVALID; t = g_type_parent(t)) {
        guint n = 0;
        guint* ids = g_signal_list_ids(t, &n);
        for (guint i = 0; i < n; ++i) {
            GSignalQuery q;
            g_signal_query(ids[i], &q);
            std::string e = "{\"owner\": " + quote(g_type_name(t)) +
                            ", \"return-type\": " + quote(g_type_name(q.return_type)) +
                            ", \"args\": [";
            for (guint a = 0; a < q.n_params; ++a)
                e += (a ? ", " : "") +
                     quote(g_type_name(q.param_types[a] & ~G_SIGNAL_TYPE_STATIC_SCOPE));
            e += "], \"action\": ";
            e += (q.signal_flags & G_SIGNAL_ACTION) ? "true" : "false";
            e += "}";
            entries[q.signal_name] = e;
        }
        g_free(ids);
    }
    j.open("signals", '{');
    for (const auto& [name, e] : entries)
        j.value(name, e);
    j.close('}');
}

void dump_element(Json& j, GstElementFactory* f, std::set<GType>& enums)
{
    GstPluginFeature* feature = GST_PLUGIN_FEATURE(f);
    j.open(gst_plugin_feature_get_name(feature), '{');
    j.value("author", quote(gst_element_factory_get_metadata(f, GST_ELEMENT_METADATA_AUTHOR)));
    j.value("description",
            quote(gst_element_factory_get_metadata(f, GST_ELEMENT_METADATA_DESCRIPTION)));
    j.value("klass", quote(gst_element_factory_get_metadata(f, GST_ELEMENT_METADATA_KLASS)));
    j.value("long-name", quote(gst_element_factory_get_metadata(f, GST_ELEMENT_METADATA_LONGNAME)));
    j.value("rank", std::to_string(gst_plugin_feature_get_rank(feature)));

    GType type = gst_element_factory_get_element_type(f);
    j.open("hierarchy", '[');
    for (GType t = type; t; t = g_type_parent(t))
        j.value("", quote(g_type_name(t)));
    j.close(']');

    j.open("pad-templates", '{');
    std::vector<GstStaticPadTemplate*> templates;
    for (const GList* l = gst_element_factory_get_static_pad_templates(f); l; l = l->next)
        templates.push_back(static_cast<GstStaticPadTemplate*>(l->data));
    std::sort(templates.begin(), templates.end(),
              [](auto* a, auto* b) { return std::strcmp(a->name_template, b->name_template) < 0; });
    for (GstStaticPadTemplate* t : templates) {
        j.open(t->name_template, '{');
        GstCaps* caps = gst_static_caps_get(&t->static_caps);
        gchar* s = gst_caps_to_string(caps);
        j.value("caps", quote(s));
        g_free(s);
        gst_caps_unref(caps);
        j.value("direction", quote(t->direction == GST_PAD_SRC ? "src" : "sink"));
        j.value("presence", quote(t->presence == GST_PAD_ALWAYS      ? "always"
                                  : t->presence == GST_PAD_SOMETIMES ? "sometimes"
                                                                     : "request"));
        j.close('}');
    }
    j.close('}');

    GObjectClass* klass = G_OBJECT_CLASS(g_type_class_ref(type));
    dump_properties(j, klass, enums);
    g_type_class_unref(klass);
    dump_signals(j, type);
    j.close('}');
}

std::string dump(GstPlugin* plugin)
{
    Json j;
    j.open("", '{');
    // JSON has no comments; the licence line rides along as a key.
    j.value("SPDX-License-Identifier", quote("MIT"));
    j.open(gst_plugin_get_name(plugin), '{');
    j.value("description", quote(gst_plugin_get_description(plugin)));
    j.value("license", quote(gst_plugin_get_license(plugin)));
    j.value("package", quote(gst_plugin_get_package(plugin)));
    j.value("source", quote(gst_plugin_get_source(plugin)));
    j.value("version", quote(gst_plugin_get_version(plugin)));

    GList* features =
        gst_registry_get_feature_list_by_plugin(gst_registry_get(), gst_plugin_get_name(plugin));
    std::vector<GstElementFactory*> factories;
    for (GList* l = features; l; l = l->next)
        if (GST_IS_ELEMENT_FACTORY(l->data))
            factories.push_back(GST_ELEMENT_FACTORY(l->data));
    std::sort(factories.begin(), factories.end(), [](auto* a, auto* b) {
        return std::strcmp(gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(a)),
                           gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(b))) < 0;
    });
    std::set<GType> enums;
    j.open("elements", '{');
    for (GstElementFactory* f : factories) {
        // Loading the factory makes its GType (and property classes) available.
        GstPluginFeature* loaded = gst_plugin_feature_load(GST_PLUGIN_FEATURE(f));
        dump_element(j, loaded ? GST_ELEMENT_FACTORY(loaded) : f, enums);
        if (loaded)
            gst_object_unref(loaded);
    }
    j.close('}');
    gst_plugin_feature_list_free(features);

    std::map<std::string, GType> by_name;
    for (GType t : enums)
        by_name[g_type_name(t)] = t;
    j.open("types", '{');
    for (const auto& [name, t] : by_name) {
        j.open(name, '{');
        j.value("kind", quote("enum"));
        j.open("values", '[');
        GEnumClass* ec = G_ENUM_CLASS(g_type_class_ref(t));
        for (guint i = 0; i < ec->n_values; ++i)
            j.value("", "{\"name\": " + quote(ec->values[i].value_name) +
                            ", \"nick\": " + quote(ec->values[i].value_nick) +
                            ", \"value\": " + std::to_string(ec->values[i].value) + "}");
        g_type_class_unref(ec);
        j.close(']');
        j.close('}');
    }
    j.close('}');
    j.close('}');
    j.close('}');
    return j.str();
}

int usage()
{
    std::cerr << "usage: edgetensor-plugin-cache --plugin PATH [--output FILE | --check FILE "
                 "[--skip-if-missing]]\n";
    return 2;
}

} // namespace

int main(int argc, char** argv)
{
    std::string plugin_path, output, check;
    bool skip_if_missing = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--skip-if-missing") {
            skip_if_missing = true;
            continue;
        }
        if (i + 1 >= argc)
            return usage();
        if (a == "--plugin")
            plugin_path = argv[++i];
        else if (a == "--output")
            output = argv[++i];
        else if (a == "--check")
            check = argv[++i];
        else
            return usage();
    }
    if (plugin_path.empty())
        return usage();

    // Only the plugin under test: no system plugins, no registry file to go stale.
    g_setenv("GST_REGISTRY_DISABLE", "yes", TRUE);
    g_setenv("GST_PLUGIN_SYSTEM_PATH_1_0", "", TRUE);
    g_setenv("GST_PLUGIN_PATH_1_0", "", TRUE);
    g_setenv("GST_PLUGIN_PATH", "", TRUE);
    gst_init(nullptr, nullptr);

    GError* err = nullptr;
    GstPlugin* plugin = gst_plugin_load_file(plugin_path.c_str(), &err);
    if (!plugin) {
        std::cerr << "cannot load " << plugin_path << ": " << (err ? err->message : "?") << "\n";
        g_clear_error(&err);
        return 1;
    }
    const std::string json = dump(plugin);
    gst_object_unref(plugin);

    if (!check.empty()) {
        std::error_code ec;
        if (!std::filesystem::exists(check, ec) && !ec) {
            std::cerr << check << " does not exist: this GStreamer release has no docs cache yet; "
                      << "write it with meson compile -C <build> update-plugin-docs-cache\n";
            return skip_if_missing ? 77 : 1;
        }
        std::ifstream in(check, std::ios::binary);
        if (!in) {
            std::cerr << "cannot read " << check << "\n";
            return 1;
        }
        const std::string committed((std::istreambuf_iterator<char>(in)),
                                    std::istreambuf_iterator<char>());
        if (committed == json) {
            std::cout << check << " matches the plugin\n";
            return 0;
        }
        std::istringstream a(committed), b(json);
        std::string la, lb;
        int line = 0;
        while (true) {
            ++line;
            const bool ga = bool(std::getline(a, la));
            const bool gb = bool(std::getline(b, lb));
            if (!ga && !gb)
                break;
            if (!ga || !gb || la != lb) {
                std::cerr << check << ":" << line << ": the docs cache drifted from the plugin\n"
                          << "  committed: " << (ga ? la : "<end of file>") << "\n"
                          << "  plugin:    " << (gb ? lb : "<end of file>") << "\n";
                break;
            }
        }
        std::cerr << "regenerate it with: meson compile -C <build> update-plugin-docs-cache\n";
        return 1;
    }
    if (output.empty() || output == "-") {
        std::cout << json;
        return 0;
    }
    std::ofstream out(output, std::ios::binary | std::ios::trunc);
    out << json;
    if (!out) {
        std::cerr << "cannot write " << output << "\n";
        return 1;
    }
    std::cerr << "wrote " << output << "\n";
    return 0;
}
