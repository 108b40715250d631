#include "to_python.hpp"

#include <cmath>
#include <string>

namespace tessera::python {

namespace py = pybind11;

py::object to_python(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null: return py::none();
    case nlohmann::json::value_t::boolean: return py::bool_(value.get<bool>());
    case nlohmann::json::value_t::number_integer: return py::int_(value.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: return py::int_(value.get<uint64_t>());
    case nlohmann::json::value_t::number_float: {
      // As the JSON text has it: a NaN or an infinity is written as null.
      const double number = value.get<double>();
      if (!std::isfinite(number)) return py::none();
      return py::float_(number);
    }
    case nlohmann::json::value_t::string: return py::str(value.get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      py::list list(value.size());
      for (size_t index = 0; index < value.size(); ++index) list[index] = to_python(value[index]);
      return list;
    }
    case nlohmann::json::value_t::object: {
      py::dict dict;
      for (const auto& [key, member] : value.items()) dict[py::str(key)] = to_python(member);
      return dict;
    }
    default: return py::none();  // binary and discarded values: the libraries write neither
  }
}

}  // namespace tessera::python
