#pragma once
// A sweep spec: a commented YAML file naming the fields every point shares, the axes to vary
// (cartesian products, and zipped axes that advance together), filters, the outputs wanted
// and the figures to draw. The format, with every key:
//
//   name: mesh-volume                # optional; default: the file's stem
//   fixed:                           # values every point shares (any field below)
//     seq: 1M
//     mask: causal
//   axes:                            # the cartesian product; the first entry varies slowest
//     - gpus: [16, 32, 64, 128, 256] # one field: one axis
//     - algo: [ring, mesh]
//     - {gpus: [32, 64], seq: [512K, 724K]}   # several fields: zipped (equal lengths)
//   skip:                            # drop the points that match every field of a rule
//     - {algo: ulysses, gpus: [128, 256]}
//   not_applicable: record           # record (a row whose status is 'skipped: reason') or drop
//   outputs: [csv, jsonl]            # default: both
//   figures:                         # drawn from the results after the run (tessera plot)
//     - {name: volume, kind: line, x: gpus, y: recv_bytes_max, series: algo}
//
// Fields (the command-line flags of `tessera cost` / `simulate`, underscores for dashes):
// problem gpus seq batch heads kv_heads head_dim head_dim_v dtype mask window documents layout
// pass; schedule algo (a generator, or `all`: every applicable schedule and tile shape, as
// `tessera plan` ranks them) tile (AxB, or `all`: every factor pair of gpus) variant; network
// topology (preset or file) placement; model fidelity (analytic, alpha-beta or flow) gpu
// (profile for the simulator) peak_tflops efficiency hbm_bandwidth bandwidth latency_us
// channels overhead_us chunk. Bandwidths carry their unit (core/units.hpp): `bandwidth: 400Gb/s`,
// `hbm_bandwidth: 3.35TB/s`; their result columns keep the names hbm_gbps and bandwidth_gbps and
// hold GB/s (bytes), and those names still work as fields taking a number of GB/s (deprecated: a
// note says so, once). Every value is checked when the spec is read; every error reads
// "FILE:LINE: field: what was wrong (what was expected)".
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessera::sweep {

enum class Field : uint8_t {
  gpus, seq, batch, heads, kv_heads, head_dim, head_dim_v, dtype, mask, window, documents, layout, pass,
  algo, tile, variant, topology, placement, fidelity, gpu, peak_tflops, efficiency, hbm_gbps, bandwidth_gbps,
  latency_us, channels, overhead_us, chunk
};
inline constexpr int kFieldCount = 28;

const std::string& field_name(Field field);
const std::string& field_default(Field field);
// Nullptr-free lookup: false when `name` is not a field (a column name: bandwidth_gbps, not the
// spec's `bandwidth`, which parse_spec reads).
bool parse_field(const std::string& name, Field& field);
std::string field_list();  // "gpus, seq, ..., bandwidth, hbm_bandwidth" for error messages
// Throws UserError (without file or line) when `value` is not valid for `field`.
void validate_value(Field field, const std::string& value);

// One entry of `axes`: one field (an axis) or several zipped fields with equal-length lists.
struct AxisGroup {
  std::vector<Field> fields;
  std::vector<std::vector<std::string>> values;  // values[f][k]: field f's k-th value
  int line = 0;
  size_t size() const { return values.empty() ? 0 : values.front().size(); }
};

// A `skip` rule: a point matching every listed field (its value among the listed) is dropped.
struct SkipRule {
  std::vector<std::pair<Field, std::vector<std::string>>> match;
};

// A figure request, kept as the key/value text of the spec (the plot library reads it).
struct FigureRequest {
  std::map<std::string, std::string> options;  // name, kind, x, y, series, title, ...
  int line = 0;
};

struct Spec {
  std::string source;  // file name, for messages
  std::string text;    // the spec as read (it is part of the inputs hash)
  std::string name;
  std::array<std::string, kFieldCount> fixed;  // the defaults overridden by `fixed`
  std::vector<AxisGroup> axes;
  std::vector<SkipRule> skip;
  bool drop_not_applicable = false;
  bool write_csv = true;
  bool write_jsonl = true;
  std::vector<FigureRequest> figures;
};

// The keys a figure request may have, and checks its values (UserError without FILE:LINE).
const std::vector<std::string>& figure_keys();

Spec parse_spec(const std::string& text, const std::string& source);
Spec load_spec(const std::string& path);  // UserError when unreadable

}  // namespace tessera::sweep
