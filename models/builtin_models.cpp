// The built-in model types: one registration line each. The registry
// (models/registry.cpp) loads this table on its first use, so the entries exist
// before any lookup, whatever the order of static initialisation.
#include "models/exprnn.hpp"
#include "models/lstm.hpp"
#include "models/osm_rnn.hpp"
#include "models/osmformer.hpp"
#include "models/registry.hpp"
#include "models/transformer.hpp"

namespace liegrad::models {

const std::vector<ModelSpec>& builtin_model_specs() {
  static const std::vector<ModelSpec> specs = {
      osmformer_spec(),
      osm_rnn_spec(),
      transformer_spec(),
      lstm_spec(),
      exprnn_spec(),
  };
  return specs;
}

}  // namespace liegrad::models
