// A module that sets the threading itself (what issue #28 moved into ops/ and kernels/): the nn
// layering rules must reject this file (tests/kernels/CMakeLists.txt).
inline void with_own_threads() { const GemmThreadsScope scope(true); }
