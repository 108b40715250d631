#pragma once
// JSON values as plain Python objects: objects as dicts, arrays as lists, numbers as int or
// float, null (and a NaN or an infinity, which the JSON text writes as null) as None. What the
// libraries write as JSON (scenario/report_json.hpp, the schedule's JSON form) reaches Python
// as data that pandas.DataFrame(...) takes as it is.
#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>

namespace tessera::python {

pybind11::object to_python(const nlohmann::json& value);

}  // namespace tessera::python
