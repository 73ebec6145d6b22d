// Files in one include: #include <xenc/io.hpp> (NumPy .npy/.npz, PyTorch state_dicts), for a
// program that links xencoder::io (pkg-config: xencoder-io). Includes the math (xenc/xenc.hpp).
#pragma once

#include "xenc/io/checkpoint.hpp"
#include "xenc/io/npy.hpp"
#include "xenc/io/npz.hpp"
#include "xenc/io/state_dict.hpp"
#include "xenc/xenc.hpp"
