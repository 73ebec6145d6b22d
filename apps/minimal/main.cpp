// xenc-minimal: the smallest whole xencoder program, and the place to start reading.
//
// Two sentences become token ids, a 2-layer encoder (random, seeded weights) reads them, and the
// output has one D-vector per token. Where each step is written:
//   - the model's forward pass, step by step: lib/src/nn/encoder_model.cpp
//   - one encoder layer's math, loop by loop, in one file: lib/src/reference/encoder_layer.cpp
// Then apps/word_order/ asks this model whether it can tell the two sentences apart.
//
//     xenc-minimal
#include <iostream>

#include <xenc/xenc.hpp>

int main() {
  xenc::Vocabulary vocab = xenc::Vocabulary::from_texts({"cat chased mouse"});
  auto batch = vocab.encode_batch({"cat chased mouse", "mouse chased cat"});  // ids [2, 3]

  xenc::EncoderModelConfig config;
  config.vocab_size = vocab.size();
  config.layer.d_model = 16;          // D
  config.layer.nhead = 2;             // H
  config.layer.dim_feedforward = 32;  // F
  config.num_layers = 2;
  config.position = xenc::PositionKind::sinusoidal;
  config.seed = 42;

  xenc::EncoderModel model(config);                                // starts in evaluation mode
  xenc::Tensor3 y = model.forward(batch.ids, batch.padding_mask);  // [2, 3, 16]
  std::cout << "output [" << y.shape(0) << ", " << y.shape(1) << ", " << y.shape(2) << "]:\n"
            << y << "\n";
}
