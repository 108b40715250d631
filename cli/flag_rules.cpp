#include "flag_rules.hpp"

#include <string>

#include "tessera/core/error.hpp"
#include "tessera/scenario/field_rules.hpp"

namespace tessera::cli {

void refuse_meaningless_flags(const CLI::App& command, const ProblemFlags& problem, const CommonFlags& common) {
  // The option of `flag`, or none where the command does not have it (CLI11 throws for an unknown name).
  auto option = [&command](const char* flag) -> const CLI::Option* {
    for (const CLI::Option* candidate : command.get_options())
      if (candidate->check_name(flag)) return candidate;
    return nullptr;
  };
  scenario::FieldRequest request;
  request.command = command.get_name();
  request.given = [&option](const char* flag) {
    const CLI::Option* given = option(flag);
    return given != nullptr && given->count() > 0;
  };
  request.value = [&option, &problem](const char* flag) -> std::string {
    if (std::string(flag) == "--mask") return problem.mask;
    const CLI::Option* given = option(flag);
    return given != nullptr && given->count() > 0 ? given->as<std::string>() : "";
  };
  request.json = common.json;
  request.model = common.model;
  scenario::refuse_meaningless_fields(request);
  if (request.command == "plan" && common.top < 0)
    throw UserError("--top: expected a number of schedules (0: all), got " + std::to_string(common.top));
}

}  // namespace tessera::cli
