// xenc-pe-pitfalls' exhibits: each puts a published mistake next to the correct formula,
// prints its numeric consequence, and names the test in tests/apps/test_pitfalls.cpp that
// catches it. The buggy code is the library's museum (xenc/grade/pitfalls.hpp).
#pragma once

namespace pe_pitfalls {

void exhibit_doubled_exponent();  ///< 1. exponent 2·i when i already steps by 2
void exhibit_batch_axis();        ///< 2. positions added along the batch axis
void exhibit_odd_d();             ///< 3. the crash on odd D
void exhibit_layer_norm();        ///< 4. unbiased std and eps outside the root
void exhibit_mask();              ///< 5. a padding mask with the opposite truth convention

}  // namespace pe_pitfalls
