#pragma once
// What each operation reads and writes, derived from the op itself (compute ops from their
// blocks, collectives from their transfers). The single definition every analysis uses.
#include <vector>

#include "tessera/core/schedule.hpp"

namespace tessera {

// Accumulator kinds live in two places on a GPU: the local partial sum that compute adds
// into, and the inbox that receives partials from peers until a merge folds them in. Keeping
// them apart keeps an arriving partial from waiting on local compute of the same rows.
struct OpData {
  std::vector<DataItem> reads;
  std::vector<DataItem> writes;
  std::vector<DataItem> inbox_reads;   // merge: partials received earlier
  std::vector<DataItem> inbox_writes;  // recv / collective: partials arriving
};

// Fills `out` (cleared first). Items are deduplicated and sorted.
void op_data(const Schedule& schedule, const Op& op, OpData& out);

}  // namespace tessera
