#include "tessera/backend/link_fit.hpp"

#include <cmath>

#include "tessera/core/error.hpp"

namespace tessera::backend {

namespace {

std::string file_list(const std::vector<NcclTestsTable>& tables) {
  std::string list;
  for (const NcclTestsTable& table : tables) list += (list.empty() ? "" : ", ") + table.path;
  return list;
}

}  // namespace

LinkFit fit_link(const std::vector<NcclTestsTable>& tables) {
  // Normal equations of t = a x steps + b x bytes (a: latency, b: 1 / bandwidth). Bytes are
  // scaled to GB so that the sums stay well conditioned.
  constexpr double kScale = 1e9;
  double ss = 0, sb = 0, bb = 0, st = 0, bt = 0;
  int samples = 0;
  for (const NcclTestsTable& table : tables) {
    const double factor = bus_factor(table.test, table.ranks);
    const double steps = sequential_steps(table.test, table.ranks);
    for (const NcclTestsRow& row : table.rows)
      for (double time_s : row.times_s) {
        const double bytes = static_cast<double>(row.size_bytes) * factor / kScale;
        ss += steps * steps;
        sb += steps * bytes;
        bb += bytes * bytes;
        st += steps * time_s;
        bt += bytes * time_s;
        ++samples;
      }
  }
  const double determinant = ss * bb - sb * sb;
  // Zero (up to rounding) when every point has the same bytes-to-steps ratio: one size only.
  if (!(determinant > 1e-12 * ss * bb))
    throw UserError(file_list(tables) + ": the rows cannot separate latency from bandwidth (expected at least two "
                                        "message sizes, e.g. nccl-tests -b 8 -e 8G -f 2)");
  const double latency_s = (bb * st - sb * bt) / determinant;
  const double seconds_per_gb = (ss * bt - sb * st) / determinant;
  if (!(seconds_per_gb > 0))
    throw UserError(file_list(tables) + ": the fitted time does not grow with the message size (a bandwidth of " +
                    std::to_string(seconds_per_gb > 0 ? kScale / seconds_per_gb : 0) + " B/s); check the tables");
  LinkFit fit;
  fit.bytes_per_s = kScale / seconds_per_gb;
  fit.latency_s = latency_s;
  fit.samples = samples;
  double squares = 0;
  for (const NcclTestsTable& table : tables) {
    const double factor = bus_factor(table.test, table.ranks);
    const double steps = sequential_steps(table.test, table.ranks);
    for (const NcclTestsRow& row : table.rows)
      for (double time_s : row.times_s) {
        const double predicted = steps * latency_s + static_cast<double>(row.size_bytes) * factor / fit.bytes_per_s;
        squares += (predicted - time_s) * (predicted - time_s) / (time_s * time_s);
      }
  }
  fit.rms_relative_error = std::sqrt(squares / samples);
  return fit;
}

}  // namespace tessera::backend
