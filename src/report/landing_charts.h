// The landing charts of SPEC section 3.3 as inline SVG: the map of events and
// attention edges, and the token heat strip of one root. (The layer profile is
// a grouped_bar_chart; see report_charts.h.)
#pragma once

#include <string>

#include "report/report_data.h"

namespace eventkv::report {

// Events as boxes left to right in history order, the source and the roots
// marked, each with its transplant shift; edges as arcs over them whose width
// is the edge's effect, reference edges in vermillion with their effect. ""
// without events.
std::string landing_map_chart(const LandingMap& map);

// The tokens of map.heat_event as boxes with their text, wrapped into rows and
// coloured by effect on a diverging scale, each with its effect below. ""
// without tokens.
std::string token_heat_chart(const LandingMap& map);

}  // namespace eventkv::report
