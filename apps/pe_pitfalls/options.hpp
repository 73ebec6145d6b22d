// xenc-pe-pitfalls' one option, as a record (apps/common/options.hpp). main.cpp reads this list.
#pragma once

#include <vector>

#include "../common/options.hpp"

namespace pe_pitfalls {

struct CommandLine {
  int only = 0;  ///< the exhibit to show (1-5), 0: all
};

inline std::vector<xenc_app::OptionRecord<CommandLine>> option_records() {
  using namespace xenc_app;
  return {{"--only", "only", nullptr, "show one exhibit (1-5); 0 = all", whole(0, 5), absent(),
           XENC_FIELD(CommandLine, only)}};
}

}  // namespace pe_pitfalls
