// summa_hybrid: real work over the groups of a ParallelContext, each result compared
// with a serial computation of the same numbers.
//
//   mpirun -np 8 summa_hybrid                  pipeline 2, tensor 4 (2d, q = 2)
//   mpirun -np 16 summa_hybrid 2 4 3           pipeline, tensor size, block size
//
//  1. 2D SUMMA: every pipeline stage of every data replica multiplies its own n x n
//     matrices C = A B, distributed as q x q blocks over its tensor group. A rank's
//     block row is its index in `2d_col` and its block column its index in `2d_row`,
//     so a `2d_row` group holds one block row and a `2d_col` group one block column.
//     Step k broadcasts A(I,k) along each block row and B(k,J) along each block column.
//  2. Data parallelism: a "gradient" differing per rank is summed over `data`.
//  3. Pipeline: each stage adds its C block to an activation received from the previous
//     stage over `pipe` and sends it on; the last stage holds the sum over all stages.
//
// Exit status 0 only if every rank's results equal the serial ones.

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "pgroups/common/error.hpp"
#include "pgroups/context/parallel_context.hpp"
#include "pgroups/mpi/check.hpp"
#include "pgroups/mpi/session.hpp"

namespace {

using pgroups::ParallelContext;
using pgroups::ParallelMode;
using pgroups::mpi::check;
using Matrix = std::vector<double>;  // row-major

// Small integers, so that every sum below is exact in double and results compare with ==.
double a_entry(std::int64_t stage, std::int64_t i, std::int64_t j) {
  return static_cast<double>((3 * i + 5 * j + 7 * stage) % 11 - 5);
}
double b_entry(std::int64_t stage, std::int64_t i, std::int64_t j) {
  return static_cast<double>((2 * i + 7 * j + 3 * stage) % 9 - 4);
}

struct Grid {
  std::int64_t q = 1;      // blocks per side
  std::int64_t block = 1;  // block side
  std::int64_t row = 0;    // this rank's block row I
  std::int64_t col = 0;    // this rank's block column J
  [[nodiscard]] std::int64_t n() const { return q * block; }
};

Matrix block_of(double (*entry)(std::int64_t, std::int64_t, std::int64_t), std::int64_t stage, const Grid& g,
                std::int64_t block_row, std::int64_t block_col) {
  Matrix m(static_cast<std::size_t>(g.block * g.block));
  for (std::int64_t i = 0; i < g.block; ++i) {
    for (std::int64_t j = 0; j < g.block; ++j) {
      m[static_cast<std::size_t>(i * g.block + j)] = entry(stage, block_row * g.block + i, block_col * g.block + j);
    }
  }
  return m;
}

void multiply_add(const Matrix& a, const Matrix& b, Matrix& c, std::int64_t side) {
  for (std::int64_t i = 0; i < side; ++i) {
    for (std::int64_t k = 0; k < side; ++k) {
      const double aik = a[static_cast<std::size_t>(i * side + k)];
      for (std::int64_t j = 0; j < side; ++j) {
        c[static_cast<std::size_t>(i * side + j)] += aik * b[static_cast<std::size_t>(k * side + j)];
      }
    }
  }
}

// The serial reference: block (I, J) of the full product A B of one stage.
Matrix serial_block(std::int64_t stage, const Grid& g) {
  Matrix c(static_cast<std::size_t>(g.block * g.block), 0.0);
  for (std::int64_t k = 0; k < g.q; ++k) {
    multiply_add(block_of(a_entry, stage, g, g.row, k), block_of(b_entry, stage, g, k, g.col), c, g.block);
  }
  return c;
}

// SUMMA over the live 2d_row / 2d_col communicators.
Matrix summa(const ParallelContext& context, std::int64_t stage, const Grid& g) {
  const MPI_Comm row_comm = context.get_group(ParallelMode::tensor_2d_row).mpi();
  const MPI_Comm col_comm = context.get_group(ParallelMode::tensor_2d_col).mpi();
  const Matrix a = block_of(a_entry, stage, g, g.row, g.col);
  const Matrix b = block_of(b_entry, stage, g, g.row, g.col);
  const int count = static_cast<int>(a.size());
  Matrix c(a.size(), 0.0);
  Matrix a_k(a.size());
  Matrix b_k(b.size());
  for (std::int64_t k = 0; k < g.q; ++k) {
    // In a block row, the rank of block column k is local rank k of 2d_row; in a block
    // column, the rank of block row k is local rank k of 2d_col.
    if (g.col == k) a_k = a;
    if (g.row == k) b_k = b;
    check(MPI_Bcast(a_k.data(), count, MPI_DOUBLE, static_cast<int>(k), row_comm), "MPI_Bcast(2d_row)");
    check(MPI_Bcast(b_k.data(), count, MPI_DOUBLE, static_cast<int>(k), col_comm), "MPI_Bcast(2d_col)");
    multiply_add(a_k, b_k, c, g.block);
  }
  return c;
}

std::vector<double> gradient_of(std::int64_t rank, std::size_t length) {
  std::vector<double> g(length);
  for (std::size_t k = 0; k < length; ++k)
    g[k] = static_cast<double>((rank + 1) * static_cast<std::int64_t>(k + 1) % 13);
  return g;
}

bool data_parallel_allreduce(const ParallelContext& context) {
  constexpr std::size_t kLength = 16;
  std::vector<double> gradient = gradient_of(context.global_rank(), kLength);
  check(MPI_Allreduce(MPI_IN_PLACE, gradient.data(), static_cast<int>(kLength), MPI_DOUBLE, MPI_SUM,
                      context.get_group(ParallelMode::data).mpi()),
        "MPI_Allreduce(data)");
  std::vector<double> expected(kLength, 0.0);
  for (std::int64_t member : context.ranks_in_group(ParallelMode::data)) {
    const std::vector<double> g = gradient_of(member, kLength);
    for (std::size_t k = 0; k < kLength; ++k) expected[k] += g[k];
  }
  return gradient == expected;
}

// Stage s receives the sum of the C blocks of stages 0..s-1, adds its own and passes it
// on; the last stage checks the total against the serial one.
bool pipeline_pass(const ParallelContext& context, const Matrix& own, const Grid& g) {
  Matrix activation(own.size(), 0.0);
  const int count = static_cast<int>(own.size());
  const bool has_pipe = context.is_initialized(ParallelMode::pipe);
  const MPI_Comm pipe = has_pipe ? context.get_group(ParallelMode::pipe).mpi() : MPI_COMM_NULL;
  const int stage = has_pipe ? static_cast<int>(context.local_rank(ParallelMode::pipe)) : 0;
  constexpr int kTag = 17;
  if (!context.is_pipeline_first_stage()) {
    check(MPI_Recv(activation.data(), count, MPI_DOUBLE, stage - 1, kTag, pipe, MPI_STATUS_IGNORE), "MPI_Recv(pipe)");
  }
  for (std::size_t k = 0; k < own.size(); ++k) activation[k] += own[k];
  if (!context.is_pipeline_last_stage()) {
    check(MPI_Send(activation.data(), count, MPI_DOUBLE, stage + 1, kTag, pipe), "MPI_Send(pipe)");
    return true;
  }
  Matrix expected(own.size(), 0.0);
  for (std::int64_t s = 0; s <= stage; ++s) {
    const Matrix c = serial_block(s, g);
    for (std::size_t k = 0; k < c.size(); ++k) expected[k] += c[k];
  }
  return activation == expected;
}

bool on_every_rank(bool ok) {
  int local = ok ? 1 : 0;
  int all = 0;
  check(MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  return all == 1;
}

std::int64_t argument(int argc, char** argv, int index, std::int64_t fallback) {
  return argc > index ? std::strtoll(argv[index], nullptr, 10) : fallback;
}

int run(int argc, char** argv) {
  pgroups::ParallelConfig config;
  config.pipeline = argument(argc, argv, 1, 2);
  config.tensor_size = argument(argc, argv, 2, 4);
  config.tensor_mode = pgroups::TensorMode::tensor_2d;
  const ParallelContext context(config, MPI_COMM_WORLD);
  const bool leader = context.global_rank() == 0;

  Grid grid;
  grid.q = context.layout().tensor_grid_dim();
  grid.block = std::max<std::int64_t>(1, argument(argc, argv, 3, 3));
  grid.row = context.local_rank(ParallelMode::tensor_2d_col);
  grid.col = context.local_rank(ParallelMode::tensor_2d_row);
  const std::int64_t stage = context.is_initialized(ParallelMode::pipe) ? context.local_rank(ParallelMode::pipe) : 0;

  if (leader) {
    fmt::print("summa_hybrid: {} (data {}, q={}, block {}x{}, n={})\n", pgroups::describe(context.config()),
               context.layout().data_parallel_size(), grid.q, grid.block, grid.block, grid.n());
  }
  const Matrix c = summa(context, stage, grid);
  const bool summa_ok = on_every_rank(c == serial_block(stage, grid));
  const bool data_ok = on_every_rank(data_parallel_allreduce(context));
  const bool pipe_ok = on_every_rank(pipeline_pass(context, c, grid));
  if (leader) {
    auto verdict = [](bool ok) { return ok ? "OK" : "MISMATCH"; };
    fmt::print("  2D SUMMA over 2d_row / 2d_col           {}\n", verdict(summa_ok));
    fmt::print("  gradient all-reduce over data ({} ranks) {}\n", context.world_size(ParallelMode::data),
               verdict(data_ok));
    fmt::print("  activations through {} pipeline stages   {}\n", context.layout().pipeline_size(), verdict(pipe_ok));
  }
  return summa_ok && data_ok && pipe_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  pgroups::mpi::Session session(argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    return run(argc, argv);
  } catch (const pgroups::ConfigError& error) {
    // Thrown on every rank alike (the context agrees on the configuration first).
    if (rank == 0) fmt::print(stderr, "summa_hybrid: {}\n", error.what());
    return static_cast<int>(error.exit_code());
  } catch (const pgroups::MismatchError& error) {
    if (rank == 0) fmt::print(stderr, "summa_hybrid: {}\n", error.what());
    return static_cast<int>(error.exit_code());
  } catch (const std::exception& error) {
    // Possibly on this rank only: others may wait in a collective, so end the job.
    fmt::print(stderr, "summa_hybrid: rank {}: {}\n", rank, error.what());
    pgroups::mpi::abort_job(MPI_COMM_WORLD, 1);
  }
}
