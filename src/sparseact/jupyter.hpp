#pragma once
// Inline figures in xeus-cling (docs/DESIGN.md, Notebooks): `xcpp::display(fig)` finds
// sparseact::plot::mime_bundle_repr by argument-dependent lookup.
#include <sparseact/plot/jupyter.hpp>
