#pragma once
// Pictures of a plan (`plan --svg FILE`, `--html FILE`), rendered as text; the plan
// command writes the files. One panel per mode, every rank a labelled cell placed by its
// coordinates and coloured by its group in that mode, nodes outlined when the plan knows
// them, a legend. Self-contained: no script, font or image is fetched, so the files open
// offline.
//
// Placement: the coordinates fastest first (the tensor ones, then pipe, then data) are
// split into columns (a prefix of them, the one whose product is closest to sqrt(2W)) and
// rows (the rest), so a rank's column is its position in the fast coordinates and its
// row its position in the slow ones, and ranks read left to right, top to bottom.
//
// Markup the tests rely on: each panel is <g class="panel" data-mode="NAME">; each cell
// a <rect class="cell" data-rank="R" data-group="G" data-node="N"> holding a <title>
// ("rank R ..."), with a <text class="label">R</text> beside it while cells are large
// enough to read one (otherwise the colour and the title carry it).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pgroups/layout/layout.hpp"
#include "pgroups/report/locality_report.hpp"

namespace pgroups::cli {

using report::LocalityReport;

/// Largest world drawn: the picture holds O(W * modes) elements.
inline constexpr std::int64_t kMaxPictureWorldSize = 16384;
/// What one rank in one kind's panel costs the picture (a rect and its label, about 150
/// bytes, and the HTML copy's share); W x kinds x this is checked against
/// report::kMaxOutputBytes (pgroups/report/output_size.hpp) before drawing.
inline constexpr std::int64_t kPictureBytesPerCell = 256;

/// A level of the cluster above the node (`pgroups place --svg`): the unit each rank is in.
/// Drawn as an outline around each unit, nested around the nodes' (thicker, in the level's
/// colour), and a bar in that colour across the foot of each cell whose group spans more
/// than one of the level's units (`<rect class="crossing" data-level="NAME">`).
struct PictureLevel {
  std::string name;
  std::vector<std::int64_t> unit_of_rank;
};

/// The picture as an SVG document. Throws ConfigError above kMaxPictureWorldSize.
[[nodiscard]] std::string plan_svg(const Layout& layout, const std::optional<LocalityReport>& locality,
                                   const std::vector<PictureLevel>& levels = {});

/// The same picture in a self-contained HTML page (the SVG inline, scaled to the window).
[[nodiscard]] std::string plan_html(const Layout& layout, const std::optional<LocalityReport>& locality,
                                    const std::vector<PictureLevel>& levels = {});

}  // namespace pgroups::cli
