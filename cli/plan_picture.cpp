#include "plan_picture.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <utility>
#include <vector>

#include "output_file.hpp"
#include "pgroups/common/error.hpp"
#include "pgroups/report/elided_list.hpp"
#include "pgroups/report/output_size.hpp"

namespace pgroups::cli {
namespace {

constexpr double kPageWidth = 1400;
constexpr double kPad = 20;
constexpr double kGap = 28;
constexpr double kTitleHeight = 74;
constexpr double kPanelHeader = 66;
constexpr double kMaxCell = 46;

struct Dim {
  std::string name;
  std::int64_t size = 1;
};

// The dimensions fastest first, as the layout computes on them: a mesh's own, or the
// presets' tensor (or 2d/2.5d/3d sub-dimensions), pipe, data.
std::vector<Dim> dims_fastest_first(const Layout& layout) {
  std::vector<Dim> dims;
  for (const MeshDim& dim : layout.mesh().dims()) dims.push_back({dim.name, dim.size});
  return dims;
}

// Short names for the row labels.
std::string short_name(const std::string& name) {
  if (name == "data") return "dp";
  if (name == "pipe") return "pp";
  if (name == "tensor") return "tp";
  return name;
}

std::string escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

// ColorBrewer's Set3: light, distinct, dark text stays readable on each.
constexpr std::array<std::string_view, 12> kPalette = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072",
                                                       "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
                                                       "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};

std::string group_colour(std::int64_t group, std::int64_t count) {
  if (count <= static_cast<std::int64_t>(kPalette.size())) {
    return std::string(kPalette[static_cast<std::size_t>(group)]);
  }
  // Golden-angle hues: neighbouring group numbers get far-apart colours.
  const double hue = std::fmod(static_cast<double>(group) * 137.508, 360.0);
  const int lightness = 68 + static_cast<int>(group % 3) * 7;
  return fmt::format("hsl({:.0f},{}%,{}%)", hue, 55 + static_cast<int>(group % 2) * 15, lightness);
}

struct Geometry {
  std::int64_t columns = 1;
  std::int64_t rows = 1;
  std::size_t column_dims = 1;  // dims[0..column_dims) are the columns
  double cell = 20;
  double font = 0;  // 0: no labels in cells
  double row_label_width = 40;
  int panels_per_line = 1;
  double panel_width = 0;
  double panel_height = 0;
};

Geometry geometry(const std::vector<Dim>& dims, std::int64_t world, std::size_t panels) {
  Geometry g;
  // Columns: the prefix of the fast coordinates whose product is closest to sqrt(2W) on a
  // log scale (ties to the wider, screens are wider than tall).
  const double target = 0.5 * std::log(2.0 * static_cast<double>(world));
  double best = 1e300;
  std::int64_t product = 1;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    product *= dims[k].size;
    const double distance = std::abs(std::log(static_cast<double>(product)) - target);
    if (distance <= best + 1e-9) {
      best = distance;
      g.columns = product;
      g.column_dims = k + 1;
    }
  }
  g.rows = world / g.columns;
  // Row labels: "n12 dp3 pp1" at most.
  std::size_t longest = 4;
  for (std::size_t k = g.column_dims; k < dims.size(); ++k) {
    longest += short_name(dims[k].name).size() + std::to_string(dims[k].size - 1).size() + 1;
  }
  g.row_label_width = 10 + 6.2 * static_cast<double>(longest);

  // As many panels side by side as keep cells large enough for a label.
  const int most = static_cast<int>(std::min<std::size_t>(4, std::max<std::size_t>(1, panels)));
  for (int k = most; k >= 1; --k) {
    const double available = (kPageWidth - 2 * kPad - (k - 1) * kGap) / k - g.row_label_width;
    const double cell = std::min(kMaxCell, std::floor(available / static_cast<double>(g.columns)));
    if (cell >= 26 || k == 1) {
      g.panels_per_line = k;
      g.cell = std::max(3.0, cell);
      break;
    }
  }
  const double digits = static_cast<double>(std::to_string(world - 1).size());
  const double font = std::min({13.0, g.cell * 0.45, (g.cell - 3) / (0.62 * digits)});
  g.font = font >= 6.5 ? font : 0;
  g.panel_width = g.row_label_width + static_cast<double>(g.columns) * g.cell;
  g.panel_height = kPanelHeader + static_cast<double>(g.rows) * g.cell;
  return g;
}

// The levels' colours, innermost first (the node's outline is black).
constexpr std::array<std::string_view, 4> kLevelColours = {"#1b6ac9", "#2e9e44", "#c96a1b", "#8e3bb0"};

std::string level_colour(std::size_t level) { return std::string(kLevelColours[level % kLevelColours.size()]); }

// The outline of every unit of one partition of the ranks, in grid coordinates: an edge
// wherever two neighbouring cells sit in different units, and around the grid.
template <class UnitOf>
std::string unit_outline(UnitOf unit_of, const Geometry& g) {
  std::string path;
  const std::int64_t world = g.rows * g.columns;
  for (std::int64_t r = 0; r < world; ++r) {
    const std::int64_t col = r % g.columns;
    const std::int64_t row = r / g.columns;
    const double x = static_cast<double>(col) * g.cell;
    const double y = static_cast<double>(row) * g.cell;
    const std::int64_t unit = unit_of(r);
    if (col == 0) path += fmt::format("M{:g} {:g}v{:g}", x, y, g.cell);
    if (row == 0) path += fmt::format("M{:g} {:g}h{:g}", x, y, g.cell);
    if (col == g.columns - 1 || unit_of(r + 1) != unit) path += fmt::format("M{:g} {:g}v{:g}", x + g.cell, y, g.cell);
    if (row == g.rows - 1 || unit_of(r + g.columns) != unit) {
      path += fmt::format("M{:g} {:g}h{:g}", x, y + g.cell, g.cell);
    }
  }
  return path;
}

std::string row_label(const std::vector<Dim>& dims, const Geometry& g, std::int64_t row,
                      const std::optional<LocalityReport>& locality) {
  std::string label;
  // Node numbers label rows when nodes are whole rows.
  if (locality && *locality->nodes.gpus_per_node() % g.columns == 0) {
    label = fmt::format("n{} ", locality->nodes.node_of(row * g.columns));
  }
  std::vector<std::string> parts;
  std::int64_t rest = row;
  for (std::size_t k = g.column_dims; k < dims.size(); ++k) {
    if (dims[k].size > 1) parts.push_back(fmt::format("{}{}", short_name(dims[k].name), rest % dims[k].size));
    rest /= dims[k].size;
  }
  std::reverse(parts.begin(), parts.end());  // slowest first
  return label + fmt::format("{}", fmt::join(parts, " "));
}

// The legend of a panel: the first groups' colours and members, as many as the width allows.
void panel_legend(std::string& out, const Layout& layout, std::size_t mode, const Geometry& g, double legend_y) {
  const std::int64_t count = layout.group_count(mode);
  const std::int64_t size = layout.group_size(mode);
  double x = 0;
  for (std::int64_t group = 0; group < count; ++group) {
    const std::int64_t leader = layout.group_leader(mode, group);
    const std::string members =
        report::elided_list(size, [&](std::int64_t i) { return layout.group_member(leader, mode, i); }, 3);
    const double width = 16 + 6.1 * static_cast<double>(members.size()) + 12;
    if (x + width > g.panel_width - 60 && group > 0) {
      out +=
          fmt::format("<text x=\"{:g}\" y=\"{:g}\" class=\"legend\">+{} more</text>", x, legend_y + 9, count - group);
      break;
    }
    out += fmt::format(
        "<rect x=\"{:g}\" y=\"{:g}\" width=\"11\" height=\"11\" fill=\"{}\" stroke=\"#555\" "
        "stroke-width=\"0.5\"/><text x=\"{:g}\" y=\"{:g}\" class=\"legend\">{}</text>",
        x, legend_y, group_colour(group, count), x + 15, legend_y + 9, members);
    x += width;
  }
  out += '\n';
}

// Entry [level][group]: whether the kind's group spans more than one unit of the level;
// once per group, not per rank.
std::vector<std::vector<bool>> level_crossings(const Layout& layout, std::size_t mode,
                                               const std::vector<PictureLevel>& levels) {
  const std::int64_t count = layout.group_count(mode);
  std::vector<std::vector<bool>> crosses(levels.size(), std::vector<bool>(static_cast<std::size_t>(count), false));
  for (std::size_t l = 0; l < levels.size(); ++l) {
    for (std::int64_t group = 0; group < count; ++group) {
      const std::int64_t leader = layout.group_leader(mode, group);
      const std::int64_t unit = levels[l].unit_of_rank[static_cast<std::size_t>(leader)];
      const std::int64_t members = static_cast<std::int64_t>(layout.group_of(leader, mode).size());
      for (std::int64_t i = 1; i < members; ++i) {
        if (levels[l].unit_of_rank[static_cast<std::size_t>(layout.group_member(leader, mode, i))] != unit) {
          crosses[l][static_cast<std::size_t>(group)] = true;
          break;
        }
      }
    }
  }
  return crosses;
}

void panel(std::string& out, const Layout& layout, std::size_t mode, const std::vector<Dim>& dims, const Geometry& g,
           double left, double top, const std::optional<LocalityReport>& locality, const std::string& outline,
           const std::vector<PictureLevel>& levels, const std::vector<std::string>& level_outlines) {
  const std::string& name = layout.group_kinds()[mode].name;
  const std::int64_t count = layout.group_count(mode);
  const std::int64_t size = layout.group_size(mode);
  const KindLocality* counted = nullptr;
  if (locality) {
    for (const KindLocality& m : locality->modes) {
      if (m.name == name) counted = &m;
    }
  }
  const bool flagged = counted != nullptr && counted->bandwidth_hungry && counted->groups_across_nodes > 0;
  out +=
      fmt::format("<g class=\"panel\" data-mode=\"{}\" transform=\"translate({:g},{:g})\">\n", escape(name), left, top);
  const std::string heading =
      fmt::format("{} group{} of {} rank{}", count, count == 1 ? "" : "s", size, size == 1 ? "" : "s");
  out += fmt::format("<text x=\"0\" y=\"15\" class=\"mode\">{}</text>", escape(name));
  out += fmt::format("<text x=\"{:g}\" y=\"15\" class=\"heading\">{}</text>\n",
                     14 + 9.6 * static_cast<double>(name.size()), escape(heading));
  if (counted != nullptr) {
    out += fmt::format("<text x=\"0\" y=\"33\" class=\"{}\">{} within a node, {} across nodes</text>\n",
                       flagged ? "heading warn" : "heading", counted->groups_within_node, counted->groups_across_nodes);
  }

  const double gx = g.row_label_width;
  const double gy = kPanelHeader - 8;
  const double legend_y = counted != nullptr ? 41 : 25;
  panel_legend(out, layout, mode, g, legend_y);

  // Row labels.
  const std::int64_t every = g.cell >= 11 ? 1 : static_cast<std::int64_t>(std::ceil(11 / g.cell));
  for (std::int64_t row = 0; row < g.rows; row += every) {
    out += fmt::format("<text x=\"{:g}\" y=\"{:g}\" class=\"row\">{}</text>", gx - 6,
                       gy + (static_cast<double>(row) + 0.5) * g.cell, escape(row_label(dims, g, row, locality)));
  }
  out += '\n';

  const std::vector<std::vector<bool>> crosses = level_crossings(layout, mode, levels);
  out += fmt::format("<g transform=\"translate({:g},{:g})\">\n", gx, gy);
  for (std::int64_t rank = 0; rank < layout.world_size(); ++rank) {
    const double cx = static_cast<double>(rank % g.columns) * g.cell;
    const double cy = static_cast<double>(rank / g.columns) * g.cell;
    if (!layout.is_member(rank, mode)) {
      // A partial kind (Megatron's embedding groups): this rank is in none of its groups.
      out += fmt::format(
          "<rect class=\"cell\" x=\"{:g}\" y=\"{:g}\" width=\"{:g}\" height=\"{:g}\" fill=\"#eeeeee\" "
          "data-rank=\"{}\" data-group=\"none\"><title>rank {}: in no {} group</title></rect>",
          cx, cy, g.cell, g.cell, rank, rank, escape(name));
      if (g.font > 0) {
        out += fmt::format("<text class=\"label\" x=\"{:g}\" y=\"{:g}\">{}</text>", cx + g.cell / 2, cy + g.cell / 2,
                           rank);
      }
      out += '\n';
      continue;
    }
    const std::int64_t group = layout.group_index(rank, mode);
    std::string where;
    std::int64_t node = 0;
    if (locality) {
      node = locality->nodes.node_of(rank);
      where = fmt::format(", node {} local {}", node, locality->nodes.local_index(rank));
    }
    out += fmt::format(
        "<rect class=\"cell\" x=\"{:g}\" y=\"{:g}\" width=\"{:g}\" height=\"{:g}\" fill=\"{}\" data-rank=\"{}\" "
        "data-group=\"{}\" data-node=\"{}\"><title>rank {}: {} group {} of {}, local rank {}{}</title></rect>",
        cx, cy, g.cell, g.cell, group_colour(group, count), rank, group, node, rank, escape(name), group, count,
        layout.local_rank(rank, mode), where);
    if (flagged) {
      const std::int64_t leader = layout.group_leader(mode, group);
      if (locality->nodes.node_of(leader) != locality->nodes.node_of(layout.group_member(leader, mode, size - 1))) {
        out += fmt::format("<rect class=\"across\" x=\"{:g}\" y=\"{:g}\" width=\"{:g}\" height=\"{:g}\"/>", cx, cy,
                           g.cell, g.cell);
      }
    }
    const double bar = std::max(1.5, g.cell / 8);
    for (std::size_t l = 0; l < levels.size(); ++l) {
      if (!crosses[l][static_cast<std::size_t>(group)]) continue;
      out += fmt::format(
          "<rect class=\"crossing\" data-level=\"{}\" x=\"{:g}\" y=\"{:g}\" width=\"{:g}\" "
          "height=\"{:g}\" fill=\"{}\"/>",
          escape(levels[l].name), cx, cy + g.cell - bar * static_cast<double>(l + 1), g.cell, bar, level_colour(l));
    }
    if (g.font > 0) {
      out +=
          fmt::format("<text class=\"label\" x=\"{:g}\" y=\"{:g}\">{}</text>", cx + g.cell / 2, cy + g.cell / 2, rank);
    }
    out += '\n';
  }
  if (!outline.empty()) out += fmt::format("<path class=\"node\" d=\"{}\"/>\n", outline);
  for (std::size_t l = 0; l < levels.size(); ++l) {
    out += fmt::format("<path class=\"level\" data-level=\"{}\" stroke=\"{}\" stroke-width=\"{:g}\" d=\"{}\"/>\n",
                       escape(levels[l].name), level_colour(l), 3.6 + 1.4 * static_cast<double>(l), level_outlines[l]);
  }
  out += "</g>\n</g>\n";
}

std::string title_of(const Layout& layout, const std::optional<LocalityReport>& locality) {
  std::string title = fmt::format("pgroups plan: {}", describe(layout.config()));
  if (locality) {
    title += fmt::format(", {} nodes of {} GPUs", locality->nodes.node_count(), *locality->nodes.gpus_per_node());
  }
  return title;
}

}  // namespace

std::string plan_svg(const Layout& layout, const std::optional<LocalityReport>& locality,
                     const std::vector<PictureLevel>& levels) {
  const std::int64_t world = layout.world_size();
  if (world > kMaxPictureWorldSize) {
    throw ConfigError(
        fmt::format("world size {} is too large to draw (at most {} ranks); use --format json, or "
                    "`pgroups explain --rank R` for one rank",
                    world, kMaxPictureWorldSize));
  }
  // A cell (a rect and its label) per rank in every panel, one panel per kind.
  report::check_output_estimate("the picture", world, static_cast<std::int64_t>(layout.group_kinds().size()),
                                kPictureBytesPerCell);
  const std::vector<Dim> dims = dims_fastest_first(layout);
  const auto modes = layout.group_kinds();
  const Geometry g = geometry(dims, world, modes.size());
  const auto lines = static_cast<std::int64_t>((modes.size() + static_cast<std::size_t>(g.panels_per_line) - 1) /
                                               static_cast<std::size_t>(g.panels_per_line));
  const double width = std::max(640.0, 2 * kPad + g.panels_per_line * g.panel_width + (g.panels_per_line - 1) * kGap);
  const double height = kTitleHeight + static_cast<double>(lines) * (g.panel_height + kGap) + kPad;

  std::vector<std::string> column_names;
  for (std::size_t k = 0; k < g.column_dims; ++k) column_names.push_back(dims[k].name);
  std::vector<std::string> row_names;
  for (std::size_t k = dims.size(); k-- > g.column_dims;) row_names.push_back(dims[k].name);
  const std::string outline =
      locality ? unit_outline([&](std::int64_t r) { return locality->nodes.node_of(r); }, g) : std::string();
  std::vector<std::string> level_outlines;
  for (const PictureLevel& level : levels) {
    if (static_cast<std::int64_t>(level.unit_of_rank.size()) != world) {
      throw ConfigError(
          fmt::format("level {} gives units for {} ranks, not {}", level.name, level.unit_of_rank.size(), world));
    }
    level_outlines.push_back(
        unit_outline([&](std::int64_t r) { return level.unit_of_rank[static_cast<std::size_t>(r)]; }, g));
  }

  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:g}\" height=\"{:g}\" viewBox=\"0 0 {:g} {:g}\" "
      "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
      width, height, width, height);
  out += fmt::format("<title>{}</title>\n", escape(title_of(layout, locality)));
  out += fmt::format(
      "<style>\n"
      ".title{{font-size:19px;font-weight:bold;fill:#111}}\n"
      ".note{{font-size:12.5px;fill:#444}}\n"
      ".mode{{font-size:15px;font-weight:bold;fill:#111}}\n"
      ".heading{{font-size:12.5px;fill:#333}}\n"
      ".warn{{fill:#b00020;font-weight:bold}}\n"
      ".legend{{font-size:10.5px;fill:#333}}\n"
      ".row{{font-size:10px;fill:#555;text-anchor:end;dominant-baseline:central}}\n"
      ".cell{{stroke:#ffffff;stroke-width:{:g}}}\n"
      ".label{{font-size:{:.1f}px;fill:#111;text-anchor:middle;dominant-baseline:central;pointer-events:none}}\n"
      ".node{{fill:none;stroke:#111;stroke-width:2.6;stroke-linecap:square}}\n"
      ".level{{fill:none;stroke-linecap:square;stroke-opacity:0.8}}\n"
      ".crossing{{pointer-events:none}}\n"
      ".across{{fill:url(#across);pointer-events:none}}\n"
      "</style>\n"
      "<defs><pattern id=\"across\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
      "patternTransform=\"rotate(45)\"><rect width=\"2\" height=\"6\" fill=\"#b00020\" fill-opacity=\"0.55\"/>"
      "</pattern></defs>\n",
      g.cell >= 8 ? 1.0 : 0.4, g.font);
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  out += fmt::format("<text x=\"{:g}\" y=\"28\" class=\"title\">{}</text>\n", kPad, escape(title_of(layout, locality)));
  std::string note = fmt::format(
      "Each cell is a rank: columns run over {}, rows over {}. Colour: the rank's group in the panel's kind.",
      fmt::join(column_names, " \u00d7 "),
      row_names.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(row_names, " \u00d7 ")));
  out += fmt::format("<text x=\"{:g}\" y=\"48\" class=\"note\">{}</text>\n", kPad, escape(note));
  std::string note2 =
      locality ? fmt::format("Thick outline: a node of {} GPUs (consecutive ranks).", *locality->nodes.gpus_per_node())
               : std::string("Nodes are not drawn: give --gpus-per-node G to outline them.");
  out += fmt::format("<text x=\"{:g}\" y=\"65\" class=\"note\">{}", kPad, escape(note2));
  if (locality) {
    out += " <tspan fill=\"#b00020\">Hatched red: a tensor-parallel group across nodes.</tspan>";
  }
  for (std::size_t l = 0; l < levels.size(); ++l) {
    out += fmt::format(" <tspan fill=\"{}\">{} outline; a {} bar: the group crosses {}.</tspan>", level_colour(l),
                       escape(levels[l].name), escape(levels[l].name), escape(levels[l].name));
  }
  out += "</text>\n";

  for (std::size_t i = 0; i < modes.size(); ++i) {
    const auto line = static_cast<double>(i / static_cast<std::size_t>(g.panels_per_line));
    const auto slot = static_cast<double>(i % static_cast<std::size_t>(g.panels_per_line));
    panel(out, layout, i, dims, g, kPad + slot * (g.panel_width + kGap), kTitleHeight + line * (g.panel_height + kGap),
          locality, outline, levels, level_outlines);
  }
  out += "</svg>\n";
  return out;
}

std::string plan_html(const Layout& layout, const std::optional<LocalityReport>& locality,
                      const std::vector<PictureLevel>& levels) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n"
      "<style>\nbody{{margin:0;background:#fff}}\nsvg{{display:block;width:100%;height:auto}}\n"
      "rect.cell:hover{{stroke:#000;stroke-width:2}}\n</style>\n</head>\n<body>\n{}</body>\n</html>\n",
      escape(title_of(layout, locality)), plan_svg(layout, locality, levels));
}

}  // namespace pgroups::cli
