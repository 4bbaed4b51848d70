// What a consumer of the pure layout writes: it includes only the umbrella header
// pgroups/pgroups.hpp and links only pgroups::layout (or `pkg-config pgroups`), so it
// builds without MPI's include paths, CUDA or NCCL. Prints "consumer OK" and exits 0
// when the layout is the documented one.

#include <cstdint>
#include <cstdio>
#include <string_view>
#include <vector>

#include "pgroups/pgroups.hpp"

int main() {
  using pgroups::ParallelMode;
  try {
    pgroups::ParallelConfig config;
    config.world_size = 8;
    config.pipeline = 2;
    config.tensor_size = 4;
    config.tensor_mode = pgroups::TensorMode::tensor_2d;
    const pgroups::Layout layout(config);
    // README's `pgroups plan -w 8 -p 2 -t 4 -m 2d`: rank 5 is in pipe [1, 5],
    // 2d_row [4, 5] and 2d_col [5, 7].
    const bool ok = layout.data_parallel_size() == 1 && layout.tensor_grid_dim() == 2 &&
                    layout.group_of(5, ParallelMode::pipe) == std::vector<std::int64_t>{1, 5} &&
                    layout.group_of(5, ParallelMode::tensor_2d_row) == std::vector<std::int64_t>{4, 5} &&
                    layout.group_of(5, ParallelMode::tensor_2d_col) == std::vector<std::int64_t>{5, 7};
    // An error message goes through the library too (and its internal spelling helper).
    bool rejected = false;
    try {
      (void)pgroups::parse_tensor_mode("2D");
    } catch (const pgroups::ConfigError& error) {
      rejected = std::string_view(error.what()).find("(did you mean 2d?)") != std::string_view::npos;
    }
    std::printf("%s\n", ok && rejected ? "consumer OK" : "consumer: WRONG LAYOUT OR MESSAGE");
    return ok && rejected ? 0 : 1;
  } catch (const pgroups::Error& error) {
    std::fprintf(stderr, "consumer: %s\n", error.what());
    return static_cast<int>(error.exit_code());
  }
}
