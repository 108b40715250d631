#pragma once
// The versioned JSON form of a schedule ("format": "tessera-schedule", "version": 1).
// Reading validates every field and throws UserError naming the field by its path, e.g.
//   "ops[17].peer: 9 is out of range [0, 7]"
// (read_schedule_file puts the file's name in front, and line:column for a syntax error). Every
// value is checked for its JSON type and its range before it is used: counts within what the
// readers of a schedule can represent (2^20 GPUs, 2^16 head groups, 2^31 tokens, a largest
// tensor under 2^63 bytes), indices within the schedule's own GPUs, streams, chunks and
// collectives. A schedule whose checking would need more memory than the limit
// (core/resource_limits.hpp) is refused before anything that size is allocated.
#include <string>

#include <nlohmann/json.hpp>

#include <ostream>

#include "tessera/core/schedule.hpp"

namespace tessera::schedules {

inline constexpr int kScheduleFormatVersion = 1;

nlohmann::json problem_to_json(const Problem& problem);
Problem problem_from_json(const nlohmann::json& json, const std::string& where);

nlohmann::json schedule_to_json(const Schedule& schedule);
// The same text as json_text(schedule_to_json(schedule)), written op by op in bounded memory.
void write_schedule_json(const Schedule& schedule, std::ostream& out);
Schedule schedule_from_json(const nlohmann::json& json);
// Reads a file; errors name the file.
Schedule read_schedule_file(const std::string& path);
// Names that are not UTF-8 are written with U+FFFD in place of the bad bytes (json_text).
void write_schedule_file(const Schedule& schedule, const std::string& path);

}  // namespace tessera::schedules
