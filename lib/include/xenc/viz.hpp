// Figures in one include: #include <xenc/viz.hpp> (SVG heatmaps and line plots, notebook
// display), for a program that links xencoder::viz (pkg-config: xencoder-viz). Includes the math
// (xenc/xenc.hpp). viz/display.hpp needs nlohmann_json's headers.
#pragma once

#include "xenc/viz/display.hpp"
#include "xenc/viz/svg.hpp"
#include "xenc/xenc.hpp"
