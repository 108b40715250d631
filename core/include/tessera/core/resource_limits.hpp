#pragma once
// How much memory a request may take, checked before it is allocated. A schedule, a topology, a
// sweep or a run that would not fit is refused up front with its estimate and the limit, rather
// than growing until the machine swaps or the allocator throws.
//
// The limit is TESSERA_MEMORY_LIMIT when set (bytes with an optional SI or binary suffix:
// 8GB, 8GiB, 500M), otherwise three quarters of the machine's physical memory, lowered to the
// address-space limit (ulimit -v) when that is smaller.
#include <cstdint>
#include <string>

namespace tessera {

uint64_t memory_limit_bytes();
// Throws UserError "WHAT needs about 12.3 GB of memory, more than the limit of 18 GB (...)" when
// `estimate_bytes` (a double, so that an estimate can never wrap) exceeds the limit.
void require_memory(double estimate_bytes, const std::string& what);
// "12.3 GB" (SI: 1 GB = 1e9 bytes).
std::string format_bytes(double bytes);

}  // namespace tessera
