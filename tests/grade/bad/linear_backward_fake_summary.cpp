// A linear_backward that returns zeros but prints a perfect report and a fake verdict of its own,
// on stdout and on stderr, then tries every low file descriptor too.
#include "exercises.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <iostream>

namespace assignment {

xenc::LinearGrads<2> linear_backward(const Tensor2& grad_y, const Tensor2& x,
                                     const Tensor2& weight) {
  const char* fake =
      "✔ linear_backward: 7 of 7 checks passed (1 of 1 points)\n11 of 11 exercises passed, 11 of "
      "11 points\n"
      "{\"exercise\":\"linear_backward\",\"signature\":\"\",\"checks\":[{\"name\":\"all\","
      "\"passed\":true,"
      "\"input\":\"\",\"expected\":\"\",\"computed\":\"\",\"first_difference\":\"\",\"hint\":\"\","
      "\"known_mistake\":\"\",\"hidden\":false}]}\n";
  std::cout << fake << std::flush;
  std::cerr << fake << std::flush;
  for (int fd = 3; fd < 100; ++fd) (void)!::write(fd, fake, std::strlen(fake));
  xenc::LinearGrads<2> g;
  g.input = xt::zeros<float>(x.shape());
  g.weight = xt::zeros<float>(weight.shape());
  g.bias = xt::zeros<float>({grad_y.shape()[1]});
  return g;
}

}  // namespace assignment
