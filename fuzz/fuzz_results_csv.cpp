// Fuzzes the results CSV reader (sweep/results.hpp parse_csv) and what `tessera plot` does with
// the table: pick columns, aggregate, draw the SVG. The first 5 bytes choose the figure (kind,
// log scale, aggregate) and its columns among the table's own, so that the fuzzer reaches the
// chart code with every column; the rest is the CSV text.
#include <map>

#include "fuzz_common.hpp"
#include "tessera/plot/chart.hpp"
#include "tessera/plot/figure.hpp"
#include "tessera/sweep/results.hpp"

using namespace tessera;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::limit_memory();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kChoiceBytes = 5;
  if (size < kChoiceBytes) return 0;
  const uint8_t* choice = data;
  return fuzz::expect_user_errors_only([&] {
    const sweep::Table table = sweep::parse_csv(fuzz::text_of(data + kChoiceBytes, size - kChoiceBytes), "fuzz.csv");
    if (table.columns.empty()) return;
    const size_t columns = table.columns.size();
    auto column = [&](uint8_t byte) { return table.columns[byte % columns]; };
    static const char* const kinds[] = {"line", "bar", "heatmap", "winner"};
    static const char* const aggregates[] = {"min", "max", "mean"};
    std::map<std::string, std::string> options = {
        {"kind", kinds[choice[0] % 4]},
        {"x", column(choice[1])},
        {"y", column(choice[2])},
        {"series", choice[3] % 4 == 0 ? std::string() : column(choice[3])},
        {"value", column(choice[4])},
        {"aggregate", aggregates[(choice[0] >> 2) % 3]},
        {"logy", (choice[0] & 0x40) != 0 ? "true" : "false"}};
    if ((choice[0] & 0x80) != 0) options["where"] = column(choice[4]) + "=" + (table.rows.empty() || table.rows[0].empty() ? "" : table.rows[0][0]);
    const plot::PlotRequest request = plot::request_from_options(options);
    (void)plot::render_svg(plot::make_figure(table, request));
  });
}
