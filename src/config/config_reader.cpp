// Placeholder until the readers land.
#include "pgroups/config_reader.hpp"
#include "pgroups/error.hpp"
namespace pgroups {
std::optional<ConfigFormat> config_format_from_path(const std::filesystem::path&) { return std::nullopt; }
ParallelConfig parse_config(std::string_view, ConfigFormat, std::string_view) { throw ParseError("not implemented"); }
ParallelConfig read_config_file(const std::filesystem::path&) { throw ParseError("not implemented"); }
}  // namespace pgroups
