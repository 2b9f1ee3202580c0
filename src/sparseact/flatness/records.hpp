#pragma once
// Paper 001's training measurements as sweep records (app/sweep.hpp), and back: the per-block
// statistics (layer_stats.hpp), a sparsity log over training (sparsity_log.hpp) and the
// checkpoints of §4.3–4.4 (checkpoint.hpp). A work item that trains one network returns them; the
// reduction on rank 0 reads them back. Every double travels as its bits, so what is read back
// equals what was measured, and the analyses' tables do not depend on where an item ran.
//
// Layout: under a key prefix, one array per field over all entries in order (ragged lists carry
// a ".sizes" array), e.g. "log.steps", "log.blocks.sizes", "log.blocks.flat_fraction".
//
//   Record r;  put_sparsity_log(r, "log", log);            // in the item
//   const SparsityLog back = get_sparsity_log(records[k], "log");  // in the reduction
#include <string>
#include <vector>

#include <sparseact/core/record.hpp>
#include <sparseact/flatness/checkpoint.hpp>
#include <sparseact/flatness/layer_stats.hpp>
#include <sparseact/flatness/sparsity_log.hpp>

namespace sparseact::flatness {

/// rows[i][l]: every field of BlockStats (zeroth_bias as 0/1), rows of any lengths.
void put_blocks(Record& record, const std::string& key, const std::vector<std::vector<BlockStats>>& rows);
std::vector<std::vector<BlockStats>> get_blocks(const Record& record, const std::string& key);

void put_sparsity_log(Record& record, const std::string& key, const SparsityLog& log);
SparsityLog get_sparsity_log(const Record& record, const std::string& key);

/// Everything of each checkpoint except stats.batch_gradient (θ-sized, no analysis reads it
/// after measure_checkpoint): it comes back empty.
void put_checkpoints(Record& record, const std::string& key, const std::vector<Checkpoint>& checkpoints);
std::vector<Checkpoint> get_checkpoints(const Record& record, const std::string& key);

}  // namespace sparseact::flatness
