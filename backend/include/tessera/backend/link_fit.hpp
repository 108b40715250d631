#pragma once
// A link's bandwidth and latency fitted to nccl-tests tables (nccl_tests_table.hpp), for the
// calibration file. Each row's time is modelled as the ring algorithm runs it over identical
// links:  time = steps x latency + bus_bytes / bandwidth,  with bus_bytes = size x bus_factor
// (the bytes each rank moves over its own link, nccl-tests' busbw convention) and steps the
// messages each rank sends one after another. Ordinary least squares of time on (steps,
// bus_bytes) over every row and every time column (out-of-place and in-place) of the tables.
#include <vector>

#include "tessera/backend/nccl_tests_table.hpp"

namespace tessera::backend {

struct LinkFit {
  double bytes_per_s = 0;
  double latency_s = 0;              // per message; a fit below zero is reported as fitted
  int samples = 0;                   // times fitted
  double rms_relative_error = 0;     // of the fitted times against the measured ones
};

// UserError when the rows cannot determine both figures (fewer than two distinct (steps,
// bytes) points, or a fitted bandwidth that is not positive), naming the files.
LinkFit fit_link(const std::vector<NcclTestsTable>& tables);

}  // namespace tessera::backend
