// Exact parameter counts: every weight tensor of the model, grouped by component.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tally/model/model.h"

namespace tally {

enum class Component {
    Embedding,
    PositionEmbedding,
    Attention,
    Mlp,
    Norms,
    FinalNorm,
    LmHead,
    EmbeddingExtras,  // token-type table, embedding norm, T5 relative-position bias tables
    CrossAttention,   // an encoder-decoder's decoder layers: norm, Q, K, V, output over the encoder output
    Pooler,           // BERT pooler (dense h x h + bias on the first token)
    MlmHead,          // BertForMaskedLM's head: transform h x h + bias, LayerNorm, output bias V (weights tied)
    NspHead,          // BertForPreTraining's next-sentence classifier: 2 x h + 2
    Mtp,              // multi-token prediction modules (DeepSeek-V3): apart from total and active
    LinearAttention,  // gated DeltaNet mixers of a hybrid's linear-attention layers (Qwen3-Next)
    Mamba,            // Mamba-2 mixers of a hybrid's SSM layers (Granite 4.0-H)
};
// Which of a model's layers hold a per-layer tensor: all, the first num_dense_layers (dense MLP) or the rest (MoE).
// A hybrid's layers by token mixer: Attention (softmax attention, num_attention_layers()), Linear
// (num_linear_layers) or Mamba (num_mamba_layers); the MLP and the norms sit in every layer, except in single-module
// blocks (ModelConfig::single_module_blocks): the mixer's norm in the Mixer blocks (num_mixer_layers), the MLP and its
// norm in the MlpBlocks (num_mlp_blocks).
enum class LayerSet { All, Dense, Moe, Attention, Linear, Mamba, Mixer, MlpBlocks };
const char* component_id(Component component);    // "embedding", "position_embedding", ...
const char* component_name(Component component);  // "token embedding", ...
// The count of a component as a formula in the model's symbols ("L·3·h·f", "V·h"), for this model's shape.
const char* component_formula(Component component, const ModelConfig& model);

// How tensor parallelism (Megatron-LM, Shoeybi et al. 2019) splits a tensor across t GPUs.
enum class TpSplit {
    Replicated,  // every GPU holds all of it (norms, position table, row-parallel biases, router)
    Rows,        // split along the first dimension (column-parallel outputs, vocab-parallel embedding)
    Cols,        // split along the second dimension (row-parallel inputs)
};

// One weight tensor (a vector is rows = 1). Per-layer tensors appear once with per_layer = true.
struct Tensor {
    std::string name;  // "layers.*.attn.q.weight"
    Component component;
    std::int64_t rows = 1, cols = 0;
    bool per_layer = false;
    bool expert = false;  // one routed expert's tensor: repeated num_experts times per layer
    TpSplit split = TpSplit::Replicated;
    // Rows per indivisible unit of the split: head_dim for Q, K, V (a head is never cut in two; when
    // tp exceeds the KV heads, each GPU holds a whole KV head, replicated as in Megatron-LM).
    std::int64_t split_unit = 1;
    bool cross = false;  // per-layer tensor of the decoder layers only (num_decoder_layers of them)
    LayerSet layer_set = LayerSet::All;
    std::uint64_t count() const;  // rows * cols (per instance)
};

// The tensors of a model, in the order of a forward pass. The LM head is listed only when untied. The
// multi-token prediction modules' own tensors (Component::Mtp) come last; each module's transformer block
// has the shape of a MoE layer and is counted in ParamCount::mtp, not listed again.
std::vector<Tensor> model_tensors(const ModelConfig& config);
// Layers that hold a per-layer tensor (cross: the decoder layers; Dense / Moe: the two kinds of MoE-model layers).
std::int64_t tensor_layers(const ModelConfig& config, const Tensor& tensor);

struct ParamCount {
    std::uint64_t embedding = 0;           // V·h
    std::uint64_t position_embedding = 0;  // max_positions·h (learned) or 0
    std::uint64_t attention = 0;           // all layers
    std::uint64_t mlp = 0;                 // all layers, every expert and the router
    std::uint64_t norms = 0;               // all layers' norms
    std::uint64_t final_norm = 0;
    std::uint64_t lm_head = 0;           // 0 when tied
    std::uint64_t embedding_extras = 0;  // token types, embedding norm, relative-position bias tables
    std::uint64_t cross_attention = 0;   // all decoder layers (encoder-decoder only)
    std::uint64_t pooler = 0;
    std::uint64_t mlm_head = 0;
    std::uint64_t nsp_head = 0;
    std::uint64_t per_decoder_layer_cross_attention = 0;  // one decoder layer's cross-attention block
    std::uint64_t per_layer_attention = 0, per_layer_mlp = 0, per_layer_norms = 0, per_layer = 0;
    std::uint64_t per_layer_mlp_active = 0;  // MoE: router + top-k + shared experts
    // per_layer_* describe a MoE layer of a MoE model; its first num_dense_layers layers have this MLP instead.
    std::uint64_t per_dense_layer_mlp = 0;
    // Multi-token prediction modules (DeepSeek-V3 sec. 2.2): each a MoE-shaped block, two norms, a 2h→h
    // projection and a final norm; embedding and output head shared with the main model. Not in total or active.
    std::uint64_t mtp = 0;
    // A multimodal model's vision tower and projector (ModelConfig::vision_params): apart from total and active.
    std::uint64_t vision = 0;
    // Hybrids: the mixers of the linear-attention and Mamba-2 layers, all layers of each kind (in total and active);
    // attention and per_layer_attention then cover the num_attention_layers() softmax-attention layers only.
    std::uint64_t linear_attention = 0, per_linear_layer = 0;
    std::uint64_t mamba = 0, per_mamba_layer = 0;
    std::uint64_t total = 0;
    std::uint64_t active = 0;  // used per token (MoE: only the visited experts); = total when dense
};

// Exact integer counts; overflow of 64 bits is an InputError. Validates the config.
ParamCount count_params(const ModelConfig& config);

// Parameters held by one GPU (an encoder-decoder's cross-attention is counted on min(layers,
// num_decoder_layers) of the stage's layers: the stage holding the most decoder layers): tensor parallel degree tp (ceil of the split dimension, as Megatron
// pads), `layers` transformer layers, plus the embedding / head if this pipeline stage has them.
// When the embeddings are tied and the head sits on another stage (pp > 1), the last stage keeps
// its own copy of the embedding matrix (Megatron-LM does this and all-reduces their gradients).
struct ShardSpec {
    std::int64_t tp = 1;
    std::int64_t layers = 0;
    bool has_embedding = true;
    bool has_head = true;
    bool head_copy_of_tied_embedding = false;
    std::int64_t ep = 1;   // expert parallel degree: the GPU holds num_experts / ep routed experts
    std::int64_t etp = 0;  // expert tensor parallel degree: routed experts' matrices split over etp (0: tp)
};
std::uint64_t shard_params(const ModelConfig& config, const ShardSpec& spec);
struct ShardSplit {
    std::uint64_t total = 0;   // shard_params
    std::uint64_t expert = 0;  // the routed experts' share of total (sharded over ep, and by ZeRO over dp/ep)
};
ShardSplit shard_params_split(const ModelConfig& config, const ShardSpec& spec);

// Parameters of the largest single module (a linear layer's weight and bias, an embedding, a norm)
// on one of tp GPUs: what DeepSpeed's ZeRO-3 estimator calls the largest layer.
std::uint64_t largest_module_params(const ModelConfig& config, std::int64_t tp);

// Adafactor's factored second moment for the same shard (Shazeer & Stern 2018, "Adafactor: Adaptive
// Learning Rates with Sublinear Memory Cost", sec. 3): rows + cols values per matrix, n per vector.
std::uint64_t shard_factored_state(const ModelConfig& config, const ShardSpec& spec);

}  // namespace tally
