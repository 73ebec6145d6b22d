// Uses the installed io and viz libraries: a [3, 4] sinusoidal table goes through an .npy file
// unchanged, its heatmap has one cell per value (12), and its notebook table has an HTML part.
// Usage: consumer_io_viz <scratch directory>
#include <cstdio>
#include <string>

#include <xenc/io.hpp>
#include <xenc/viz.hpp>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const xenc::Tensor2 pe = xenc::sinusoidal_encoding(3, 4);
  const std::string path = std::string(argv[1]) + "/pe.npy";
  xenc::save_npy(path, pe);
  const xt::xarray<float> back = xenc::load_npy(path);
  const bool same = back == pe;

  const std::string svg = xenc::viz::heatmap_svg(pe, {});
  int cells = 0;
  for (std::size_t at = svg.find("class=\"cell\""); at != std::string::npos;
       at = svg.find("class=\"cell\"", at + 1))
    ++cells;
  const bool html = xenc::viz::mime_bundle_repr(xenc::viz::table(pe)).contains("text/html");

  std::printf(".npy round trip %s, heatmap cells %d (expected 12), table HTML %s\n",
              same ? "equal" : "DIFFERENT", cells, html ? "present" : "MISSING");
  return same && cells == 12 && html ? 0 : 1;
}
