#pragma once
// The versioned JSON form of a schedule ("format": "tessera-schedule", "version": 1).
// Reading validates every field and throws UserError naming the field, e.g.
//   "ops[17].peer: GPU 9 does not exist (the schedule has 8 GPUs)".
#include <string>

#include <nlohmann/json.hpp>

#include "tessera/core/schedule.hpp"

namespace tessera::schedules {

inline constexpr int kScheduleFormatVersion = 1;

nlohmann::json problem_to_json(const Problem& problem);
Problem problem_from_json(const nlohmann::json& json, const std::string& where);

nlohmann::json schedule_to_json(const Schedule& schedule);
Schedule schedule_from_json(const nlohmann::json& json);
// Reads a file; errors name the file.
Schedule read_schedule_file(const std::string& path);
void write_schedule_file(const Schedule& schedule, const std::string& path);

}  // namespace tessera::schedules
