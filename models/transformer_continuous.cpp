// The transformer's real-valued inputs (ContinuousInput, models/capabilities.hpp): each
// position's features times the embedding table, then the same blocks and head as tokens.
#include "models/continuous.hpp"
#include "models/transformer.hpp"

namespace liegrad::models {

template <class T>
ag::Var<T> Transformer<T>::forward_features(const Array<T>& features, int64_t B, int64_t T_, RecurrentState<T>*) {
  return blocks_and_head(embed_features(embed_, features, B, T_, "transformer"), B, T_);
}

template ag::Var<float> Transformer<float>::forward_features(const Array<float>&, int64_t, int64_t,
                                                             RecurrentState<float>*);
template ag::Var<double> Transformer<double>::forward_features(const Array<double>&, int64_t, int64_t,
                                                               RecurrentState<double>*);

}  // namespace liegrad::models
