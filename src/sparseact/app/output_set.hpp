#pragma once
// A run's outputs (JSON, CSV tables, figures) appear in --out all together or not at all
// (docs/DESIGN.md, the analysis contract): they are written into a staging folder beside --out, then
// published in one step.
//
//   --out does not exist yet:            rename(staging, out)
//   --out holds only an earlier run of   renameat2(RENAME_EXCHANGE) swaps the two folders in one
//     the same analysis (its JSON lists   step, then the old one is removed; a kill at any moment
//     its files) or nothing               leaves the old complete set or the new one
//   --out is shared with other files     those files stay: the old run's files are removed, the
//                                         new ones renamed in one by one, the JSON last (each file
//                                         atomic; the set is complete once its JSON is there)
// Staging folders of killed runs (".<out>.sparseact-<pid>" whose process is gone) are removed at
// the next run's start.
#include <filesystem>
#include <string>
#include <vector>

namespace sparseact::app {

/// --out made absolute, without a trailing separator.
std::filesystem::path normalise_out(const std::filesystem::path& out);

/// Removes staging folders that killed runs left beside `out`. Returns how many it removed.
int remove_stale_staging(const std::filesystem::path& out);

/// A fresh staging folder beside `out` (its parent is created if needed).
std::filesystem::path make_staging(const std::filesystem::path& out);

/// Publishes `staging` (holding `json_name` and the files it lists) as `out`; see above.
void publish(const std::filesystem::path& staging, const std::filesystem::path& out, const std::string& json_name);

}  // namespace sparseact::app
