// Shape and configuration checks shared by every public entry point.
#include "xenc/core/error.hpp"

namespace xenc {

void check_shape(const std::string& where, const std::string& arg,
                 const std::vector<std::size_t>& shape, const std::vector<long>& expected,
                 const std::string& expected_text) {
  bool ok = shape.size() == expected.size();
  for (std::size_t i = 0; ok && i < shape.size(); ++i) {
    ok = expected[i] == any_dim || static_cast<long>(shape[i]) == expected[i];
  }
  if (!ok) {
    throw shape_error(where + ": " + arg + " has shape " + shape_str(shape) + ", expected " +
                      expected_text);
  }
}

void check_config(bool ok, const std::string& where, const std::string& message) {
  if (!ok) throw config_error(where + ": " + message);
}

}  // namespace xenc
