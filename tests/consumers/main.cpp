// What a consumer of pgroups writes, built by both consumer projects: a layout check
// that needs no MPI at run time, and one call into pgroups::context so that the
// context library and its MPI dependency must link too. Prints "consumer OK" and
// exits 0 when the layout is the documented one.

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "pgroups/context/parallel_context.hpp"
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
    const std::string agreed = pgroups::agreement_text(config, pgroups::ContextOptions{});
    std::printf("%s\n%s\n", agreed.c_str(), ok ? "consumer OK" : "consumer: WRONG LAYOUT");
    return ok ? 0 : 1;
  } catch (const pgroups::Error& error) {
    std::fprintf(stderr, "consumer: %s\n", error.what());
    return static_cast<int>(error.exit_code());
  }
}
