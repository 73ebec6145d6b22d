// Named parameter views (see parameter.hpp).
#include "xenc/core/parameter.hpp"

namespace xenc {

std::size_t ParameterRef::size() const {
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string join_name(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

}  // namespace xenc
