// A dense (or mixture-of-experts) decoder-only transformer, described by the numbers that decide its
// parameter count, FLOPs and memory. Loaded from a preset, a tally config object or a Hugging Face
// config.json (hf_config.h).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace tally {

enum class MlpKind { Gelu, SwiGlu, GeGlu };  // GELU: 2 matrices (up, down); gated: 3 (gate, up, down)
enum class NormKind { LayerNorm, RmsNorm };  // LayerNorm: weight + bias; RMSNorm: weight only
// Learned absolute table (max_positions x h), RoPE (no params) or T5's relative bias (its tables are
// counted through relative_attention_buckets).
enum class PositionKind { Learned, Rotary, Relative };
// Decoder: causal self-attention layers only (GPT, Llama). Encoder: bidirectional self-attention layers
// (BERT, RoBERTa). EncoderDecoder: an encoder stack, then a decoder stack whose layers add
// cross-attention over the encoder output (T5; Raffel et al. 2020, sec. 2.1).
enum class Architecture { Decoder, Encoder, EncoderDecoder };
// A hybrid's linear-attention mixer: gated DeltaNet (Qwen3-Next: one fused qkvz projection, a scalar decay per head)
// or Kimi Delta Attention (Kimi Linear, arXiv:2510.26692: separate q/k/v, a per-channel decay and an output gate each
// through a rank-d_v bottleneck). Both hold a d_k x d_v state per head and convolve Q, K and V.
enum class LinearKind { GatedDeltaNet, Kda };

struct ModelConfig {
    std::string name;
    std::int64_t vocab_size = 0;
    std::int64_t hidden_size = 0;      // h (d_model)
    std::int64_t num_layers = 0;       // L
    std::int64_t num_heads = 0;        // a, query heads
    std::int64_t num_kv_heads = 0;     // key/value heads: = a (MHA), < a (GQA), 1 (MQA)
    std::int64_t head_dim = 0;         // d; usually h / a
    std::int64_t ffn_hidden_size = 0;  // f, width of the MLP's inner layer (per expert for MoE)
    MlpKind mlp = MlpKind::Gelu;
    NormKind norm = NormKind::LayerNorm;
    PositionKind position = PositionKind::Rotary;
    std::int64_t max_positions = 0;       // rows of the learned position table (0 for rotary)
    bool qkv_bias = false;                // bias on the Q, K, V projections
    bool attn_out_bias = false;           // bias on the attention output projection
    bool mlp_bias = false;                // biases on the MLP matrices
    bool tied_embeddings = false;         // LM head shares the token embedding matrix
    std::int64_t num_experts = 0;         // MoE: routed experts per layer (0 = dense)
    std::int64_t experts_per_token = 0;   // MoE: routed experts each token visits (top-k)
    std::int64_t num_shared_experts = 0;  // MoE: experts every token visits (DeepSeek-style)
    // Dropout probabilities the model was trained with (0 = no dropout layer, so no mask is stored).
    double attention_dropout = 0;  // on the attention probabilities (HF attn_pdrop / attention_dropout)
    double residual_dropout = 0;   // after the attention output projection and the MLP (HF resid_pdrop)
    double embedding_dropout = 0;  // on the summed embeddings (HF embd_pdrop)
    Architecture architecture = Architecture::Decoder;
    // EncoderDecoder: how many of the num_layers layers form the decoder stack (each with a
    // cross-attention block); the other num_layers - num_decoder_layers form the encoder. 0 otherwise.
    std::int64_t num_decoder_layers = 0;
    std::int64_t type_vocab_size = 0;  // BERT token-type (segment) embedding rows (0 = none)
    bool embedding_norm = false;       // a norm on the summed embeddings (BERT's embeddings.LayerNorm)
    bool final_norm = true;            // a norm after the last layer (false for post-LN BERT)
    bool pooler = false;               // BERT pooler: dense h x h + bias on the first token
    // BertForMaskedLM's head (cls.predictions): transform dense h x h + bias, LayerNorm, then a decoder tied to
    // the word embeddings with a bias of its own (V) (transformers modeling_bert.py, BertLMPredictionHead).
    bool mlm_head = false;
    bool nsp_head = false;                        // BertForPreTraining's next-sentence classifier: Linear(h, 2)
    std::int64_t relative_attention_buckets = 0;  // T5: buckets x heads bias table, one per stack (0 = none)

    // Multi-head latent attention (DeepSeek-AI 2024, DeepSeek-V2, sec. 2.1): K and V are rebuilt per head from
    // one compressed latent of kv_lora_rank values, plus one RoPE key of qk_rope_head_dim shared by all heads;
    // the KV cache holds only those (kv_lora_rank + qk_rope_head_dim per layer). head_dim is then the Q/K head
    // width qk_nope_head_dim + qk_rope_head_dim. 0 = standard attention.
    std::int64_t kv_lora_rank = 0;
    std::int64_t q_lora_rank = 0;       // MLA: Q through a rank-q_lora_rank bottleneck (0: one q matrix)
    std::int64_t qk_rope_head_dim = 0;  // MLA: the decoupled RoPE part of each Q/K head
    std::int64_t v_head_dim = 0;        // width of one value head (0: head_dim)
    // DeepSeek-style MoE: the first num_dense_layers layers have a dense MLP of width dense_ffn_hidden_size
    // (config.json first_k_dense_replace, intermediate_size); the others are MoE layers.
    std::int64_t num_dense_layers = 0;
    std::int64_t dense_ffn_hidden_size = 0;
    bool router_bias =
        false;  // a bias per expert on the router (gpt-oss router.bias, DeepSeek e_score_correction_bias)
    // Multi-token prediction modules (DeepSeek-V3, sec. 2.2): counted apart, never in total or active.
    std::int64_t mtp_modules = 0;
    // Sliding-window attention: num_sliding_layers of the layers attend to the last sliding_window tokens
    // only (their KV cache stops growing there); the others attend globally.
    std::int64_t sliding_window = 0;
    std::int64_t num_sliding_layers = 0;
    // DeepSeek Sparse Attention (DeepSeek-V3.2-Exp): in every MLA layer a lightning indexer scores each query
    // against every earlier key with index_n_heads small heads of index_head_dim (its Q from the q_lora latent,
    // one shared key from h with a LayerNorm, a weight per head from h), and the query attends to the
    // index_topk best keys only. The indexer caches its key per token per layer in FP8 with an FP32 scale per
    // 128 values. 0 = dense attention.
    std::int64_t index_topk = 0;
    std::int64_t index_n_heads = 0;
    std::int64_t index_head_dim = 0;
    bool attention_sinks = false;  // a learned sink logit per head per layer (gpt-oss): a params per layer
    bool qk_norm = false;          // RMSNorm over each Q and K head (Qwen3, Gemma 3): 2·head_dim params per layer
    // With qk_norm: one RMSNorm over the whole Q and the whole K projection instead (OLMo 2/3): a·d + kv·d per layer.
    bool qk_norm_full = false;
    bool sandwich_norm = false;  // norms after attention and after the MLP too (Gemma 2/3): 4 norms per layer
    // A multimodal model's vision tower and projector (Gemma 3's SigLIP): counted apart in ParamCount::vision, never
    // in total or active; its FLOPs and memory are not modelled (the counts are the language model's).
    std::int64_t vision_params = 0;

    // Hybrid models: of the num_layers layers, num_linear_layers mix tokens with gated DeltaNet linear attention
    // (Yang, Kautz & Hatamizadeh 2024, "Gated Delta Networks", arXiv:2412.06464; Qwen3-Next) and num_mamba_layers
    // with a Mamba-2 SSM (Dao & Gu 2024, "Transformers are SSMs", arXiv:2405.21060; Granite 4.0-H); the other
    // num_attention_layers() keep softmax attention and its KV cache. Either kind holds a per-sequence recurrent
    // state of a fixed size instead of a cache that grows with the context. Every layer keeps its MLP and norms,
    // unless the block fields below say otherwise. Layer order changes no count, FLOP or byte, so the kinds are
    // counted, not listed.
    std::int64_t num_linear_layers = 0;
    std::int64_t linear_key_heads = 0;       // gated DeltaNet: query/key heads (config linear_num_key_heads)
    std::int64_t linear_value_heads = 0;     // value heads; a multiple of the key heads (each key head serves some)
    std::int64_t linear_key_head_dim = 0;    // d_k of one head
    std::int64_t linear_value_head_dim = 0;  // d_v of one head: the state of a head is d_k x d_v
    std::int64_t linear_conv_kernel = 0;     // width of the causal depthwise conv over Q, K, V
    LinearKind linear_kind = LinearKind::GatedDeltaNet;
    std::int64_t num_mamba_layers = 0;
    std::int64_t mamba_heads = 0;        // Mamba-2 heads (nheads); d_inner = mamba_heads · mamba_head_dim
    std::int64_t mamba_head_dim = 0;     // P, channels of one head
    std::int64_t mamba_d_state = 0;      // N, the SSM state size
    std::int64_t mamba_groups = 0;       // G: heads share B and C in G groups (divides the heads)
    std::int64_t mamba_conv_kernel = 0;  // width of the causal depthwise conv over x, B, C
    bool mamba_conv_bias = false;        // a bias on that conv
    bool mamba_proj_bias = false;        // biases on in_proj and out_proj
    bool mamba_norm = true;              // the gated RMSNorm over d_inner before out_proj (Falcon-H1 may drop it)
    // Mamba-1 (Gu & Dao 2023, arXiv:2312.00752; Jamba) instead of Mamba-2: no heads or groups (mamba_heads,
    // mamba_head_dim, mamba_groups 0), d_inner channels each with its own N-wide state row, Δ through a rank-dt_rank
    // projection (x_proj, dt_proj), and no gated norm (mamba_norm stays at its default).
    std::int64_t mamba_version = 2;
    std::int64_t mamba_inner = 0;    // Mamba-1: d_inner (Jamba: mamba_expand · h); Mamba-2 derives it from its heads
    std::int64_t mamba_dt_rank = 0;  // Mamba-1: rank of Δ's projection
    bool mamba_dt_norms = false;     // Jamba: RMSNorms over Δ (dt_rank), B and C (d_state each) inside the mixer
    // Parallel hybrid (Falcon-H1, arXiv:2507.22448 sec. 2.1): every layer runs softmax attention and a Mamba-2 mixer
    // side by side on the same normed input and adds their outputs, so num_mamba_layers = num_layers and
    // num_attention_layers() counts every layer as well; each layer caches K and V and holds a Mamba-2 state.
    bool parallel_hybrid = false;
    // Qwen3-Next gated attention: q_proj also yields a per-channel output gate (a·d more rows), and its shared
    // expert is scaled by a learned sigmoid gate (a 1 x h matrix per MoE layer).
    bool attn_output_gate = false;
    bool shared_expert_gate = false;
    // Single-module blocks (Nemotron-H, arXiv:2504.03624): num_mlp_layers of the num_layers blocks are a
    // norm and an MLP with no token mixer; with mixer_blocks_without_mlp the other blocks (attention, Mamba-2,
    // linear attention) are a norm and their mixer with no MLP. num_attention_layers() leaves the MLP-only blocks out.
    std::int64_t num_mlp_layers = 0;
    bool mixer_blocks_without_mlp = false;

    bool is_encoder_decoder() const { return architecture == Architecture::EncoderDecoder; }

    bool is_hybrid() const { return num_linear_layers > 0 || num_mamba_layers > 0; }
    std::int64_t num_attention_layers() const {
        return num_layers - num_linear_layers - (parallel_hybrid ? 0 : num_mamba_layers) - num_mlp_layers;
    }
    // Blocks of one module each (see num_mlp_layers): their norms and MLPs sit in some layers only.
    bool single_module_blocks() const { return num_mlp_layers > 0 || mixer_blocks_without_mlp; }
    std::int64_t num_mixer_layers() const { return num_layers - num_mlp_layers; }  // blocks with a token mixer
    // Blocks holding an MLP: every layer, or the MLP-only blocks plus the mixer blocks that keep one.
    std::int64_t num_mlp_blocks() const { return (mixer_blocks_without_mlp ? 0 : num_mixer_layers()) + num_mlp_layers; }
    bool is_mamba1() const { return mamba_version == 1; }
    std::int64_t mamba_d_inner() const { return is_mamba1() ? mamba_inner : mamba_heads * mamba_head_dim; }
    // Channels of the Mamba-2 conv: x plus B and C of each group (transformers modeling_bamba.py, conv_dim); Mamba-1
    // (no groups) convolves x only.
    std::int64_t mamba_conv_dim() const { return mamba_d_inner() + 2 * mamba_groups * mamba_d_state; }
    std::int64_t linear_key_dim() const { return linear_key_heads * linear_key_head_dim; }
    std::int64_t linear_value_dim() const { return linear_value_heads * linear_value_head_dim; }
    // Channels of gated DeltaNet's and KDA's conv: Q, K and V (transformers modeling_qwen3_next.py, conv_dim).
    std::int64_t linear_conv_dim() const { return 2 * linear_key_dim() + linear_value_dim(); }
    bool is_moe() const { return num_experts > 0; }
    bool is_mla() const { return kv_lora_rank > 0; }
    bool has_indexer() const { return index_topk > 0; }  // DeepSeek Sparse Attention's lightning indexer
    std::int64_t num_moe_layers() const { return is_moe() ? num_layers - num_dense_layers : 0; }
    std::int64_t v_dim_per_head() const { return v_head_dim > 0 ? v_head_dim : head_dim; }
    std::int64_t o_dim() const { return num_heads * v_dim_per_head(); }  // attention output width (a·d_v)
    std::int64_t v_dim() const { return num_kv_heads * v_dim_per_head(); }
    bool has_dropout() const { return attention_dropout > 0 || residual_dropout > 0 || embedding_dropout > 0; }
    std::int64_t q_dim() const { return num_heads * head_dim; }      // width of Q (and of attention output)
    std::int64_t kv_dim() const { return num_kv_heads * head_dim; }  // width of K (and of V unless v_head_dim)
    int mlp_matrices() const { return mlp == MlpKind::Gelu ? 2 : 3; }
    bool operator==(const ModelConfig&) const = default;  // every field: the key of params.cpp's tensor memo
};

// Limits the engine accepts (far beyond any real model; larger values are errors, not wraps).
inline constexpr std::int64_t kMaxVocab = 100'000'000;
inline constexpr std::int64_t kMaxHidden = 10'000'000;
inline constexpr std::int64_t kMaxLayers = 100'000;
// Longest training sequence accepted (2^30 tokens): far beyond any context window, and s² stays exact in a
// double. The FLOP count, the memory budget and the API all check against it.
inline constexpr std::int64_t kMaxSeq = std::int64_t{1} << 30;
inline constexpr std::int64_t kMaxFfn = 100'000'000;
inline constexpr std::int64_t kMaxExperts = 100'000;
inline constexpr std::int64_t kMaxPositions = 100'000'000;
inline constexpr std::int64_t kMaxVision = 1'000'000'000'000;  // a vision tower's parameters

// The BERT classes an encoder's heads make: "model" (BertModel: pooler), "masked_lm" (BertForMaskedLM: MLM
// head, no pooler), "pretraining" (BertForPreTraining: pooler, MLM head, next-sentence head). Sets pooler,
// mlm_head and nsp_head; InputError "encoder_head" for another name or a model that is not an encoder.
void apply_encoder_head(ModelConfig& config, const std::string& head);

// Checks ranges and divisibility (heads | hidden when head_dim is derived, kv heads | heads,
// top-k <= experts); throws InputError naming the field.
void validate(const ModelConfig& config);

const char* to_string(MlpKind kind);
const char* to_string(NormKind kind);
const char* to_string(PositionKind kind);
const char* to_string(Architecture kind);  // "decoder", "encoder", "encoder_decoder"
const char* to_string(LinearKind kind);    // "gated_deltanet", "kda"

// The tally config object (docs/API.md "Model argument"); fills defaults, validates.
ModelConfig model_from_json(const nlohmann::json& object);
nlohmann::json model_to_json(const ModelConfig& config);
// A model preset of content/presets/models by id; InputError "model" naming the known ids otherwise.
ModelConfig model_from_preset(const std::string& id);

// Reads a whole number field of a JSON object; used by the loaders. Rejects fractions, booleans,
// strings, non-finite and out-of-range values with an error naming `field`.
std::int64_t json_integer(const nlohmann::json& value, const std::string& field, std::int64_t low, std::int64_t high);

}  // namespace tally
