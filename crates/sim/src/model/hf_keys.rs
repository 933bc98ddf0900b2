//! The Hugging Face config keys and model types the reader knows: types read exactly, types
//! built, wrappers, the keys that shape the cost and the keys known not to (split from
//! `model/hf.rs`, unchanged).

/// Model types read exactly; anything else is read with the usual field names and a warning.
pub(super) const KNOWN: [&str; 25] = [
    "llama", "mistral", "qwen", "qwen2", "qwen3", "mixtral", "qwen2_moe", "qwen3_moe", "chatglm",
    "baichuan", "deepseek_v2", "deepseek_v3", "phi3", "qwen3_next", "qwen3_5_text", "qwen3_5_moe_text",
    // Vision-language and omni checkpoints: a Qwen2 / Qwen3 decoder (`super::vl`).
    "qwen2_5_vl", "qwen2_5_vl_text", "qwen3_vl", "qwen3_vl_text", "qwen2_5_omni_text", "qwen2_5_omni_thinker", "qwen2_vl",
    // Kimi K2 is DeepSeek-V3's layout (DeepseekV3ForCausalLM: MLA, shared + routed experts).
    "kimi_k2",
    // DeepSeek-V3.2: DeepSeek-V3's layout plus sparse attention (`index_*`).
    "deepseek_v32",
];

/// Model types `load_hf` builds (decoders, hybrid linear-attention decoders, multimodal
/// wrappers read for their language model, LLaVA, and bidirectional encoders).
pub const SUPPORTED_TYPES: [&str; 26] = [
    "llama", "mistral", "qwen", "qwen2", "qwen3", "mixtral", "qwen2_moe", "qwen3_moe", "chatglm",
    "baichuan", "deepseek_v2", "deepseek_v3", "deepseek_v32", "phi3", "qwen3_next", "qwen3_5", "qwen3_5_text",
    "qwen3_5_moe", "qwen3_5_moe_text", "llava", "bert", "xlm-roberta", "roberta",
    "qwen2_5_vl", "qwen3_vl", "qwen2_5_omni",
];

/// Encoder model types (BertModel and its relatives).
pub(super) const ENCODERS: [&str; 3] = ["bert", "xlm-roberta", "roberta"];

/// Model types that are a plain decoder's config wrapped with a vision tower: the language
/// model is read from `text_config` (text-only prompts; the vision tower is not costed).
pub(super) const TEXT_WRAPPERS: [&str; 2] = ["qwen3_5", "qwen3_5_moe"];

/// Config keys that shape the cost model (read below, under any of their aliases).
pub(super) const READ: &[&str] = &[
    "model_type", "hidden_size", "num_hidden_layers", "num_layers", "num_attention_heads",
    "num_key_value_heads", "multi_query_attention", "multi_query_group_num", "head_dim",
    "kv_channels", "intermediate_size", "ffn_hidden_size", "vocab_size", "padded_vocab_size",
    "max_position_embeddings", "seq_length", "model_max_length", "attention_bias", "add_qkv_bias", "qkv_bias",
    "tie_word_embeddings", "num_local_experts", "num_experts", "n_routed_experts",
    "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size",
    "n_shared_experts", "mlp_only_layers", "decoder_sparse_step", "first_k_dense_replace",
    "moe_layer_freq", "kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
    "v_head_dim", "sliding_window", "use_sliding_window", "max_window_layers", "hidden_act",
    "torch_dtype", "dtype", "rmsnorm", "no_bias", "num_nextn_predict_layers",
    "layer_types", "full_attention_interval", "linear_num_key_heads", "linear_num_value_heads",
    "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim", "attn_output_gate",
    "type_vocab_size", "mtp_num_hidden_layers", "index_topk", "index_n_heads", "index_head_dim",
];

/// Keys known not to change per-token cost or memory (numerics, tokens, training-time
/// regularisation, loading hints, routing rules that keep top-k fixed). Anything neither read nor
/// listed here is reported, so a size-bearing key is never silently defaulted.
pub(super) const IGNORED: &[&str] = &[
    "_name_or_path", "name", "architectures", "auto_map", "transformers_version", "_from_model_config",
    "bos_token_id", "eos_token_id", "pad_token_id", "use_cache", "initializer_range",
    "rms_norm_eps", "layer_norm_epsilon", "layernorm_epsilon", "layer_norm_eps", "rope_theta",
    "rope_scaling", "rotary_emb_base", "rotary_pct", "rope_ratio", "original_rope", "attention_dropout",
    "attn_dropout_prob", "emb_dropout_prob", "hidden_dropout", "hidden_dropout_prob", "pretraining_tp",
    "output_router_logits", "router_aux_loss_coef", "router_jitter_noise", "norm_topk_prob",
    "aux_loss_alpha", "seq_aux", "scoring_func", "topk_method", "n_group", "topk_group",
    "routed_scaling_factor", "ep_size", "tokenizer_class", "bf16", "fp16", "fp32", "onnx_safe",
    "scale_attn_weights", "softmax_in_fp32", "use_cache_kernel", "use_cache_quantization",
    "use_dynamic_ntk", "use_flash_attn", "use_logn_attn", "apply_query_key_layer_scaling",
    "apply_residual_connection_post_layernorm", "attention_softmax_in_fp32", "bias_dropout_fusion",
    "fp32_residual_connection", "post_layer_norm", "add_bias_linear", "gradient_checkpointing",
    "z_loss_weight", "quantization_config", "classifier_dropout", "mlp_bias", "partial_rotary_factor",
    "rope_type", "text_config", "vision_config", "image_token_index", "projector_hidden_act",
    "vision_feature_layer", "vision_feature_select_strategy", "image_seq_length", "ignore_index",
    "multi_query_group_num_is_kv", "prefix_projection", "pre_seq_len", "format", "tie_encoder_decoder",
    "resid_pdrop", "embd_pdrop", "original_max_position_embeddings", "attention_probs_dropout_prob",
    "position_embedding_type", "gradient_checkpointing", "lm_head_bias", "interleaved_sliding_window",
    "mamba_ssm_dtype", "mtp_use_dedicated_embeddings", "rope_parameters", "full_attn_mod", "interpolate_factor", "image_token_id", "video_token_id",
    // Qwen3-Coder: q/k norms, which the qwen3 model types already carry (a few vector elements).
    "use_qk_norm",
    // Read by the family readers (`super::readers`) or without effect on size and cost.
    "sliding_window_pattern", "no_rope_layers", "attention_chunk_size", "interleave_moe_layer_step", "intermediate_size_mlp",
    "moe_layer_start_index", "moe_layer_end_index", "moe_layer_interval", "num_shared_experts", "moe_shared_expert_intermediate_size",
    "hidden_activation", "query_pre_attn_scalar", "final_logit_softcapping", "attn_logit_softcapping", "rope_local_base_freq",
    "cache_implementation", "initial_context_length", "swiglu_limit", "experts_per_token", "no_rope_layer_interval",
    "attn_temperature_tuning", "floor_scale", "attn_scale", "router_bias", "moe_gate_dtype", "use_bias", "moe_use_aux_free",
    "moe_capacity", "use_qk_norm", "qk_norm", "head_dim_original", "num_experts_per_topk", "router_dtype", "router_aux_loss_factor",
    "use_mixed_mlp_moe", "use_cla", "cla_share_factor", "use_rotary_pos_emb", "norm_type", "mlp_act", "moe_random_routing_dropped_token",
    "enable_moe_fp32_combine", "use_flash_attention", "use_rmsnorm", "moe_router_enable_expert_bias",
    "moe_router_enable_shared_expert", "embedding_multiplier", "logits_scaling", "residual_multiplier",
    "attention_multiplier", "qk_layernorm", "time_step_limit", "add_qk_norm", "moe_router_dtype",
    // Qwen3.6: the activation of the Gated DeltaNet output gate (the gate's size is read).
    "output_gate_type",
    // GLM-5 / 5.1 / 5.2: RoPE layout of the MLA and indexer heads (numerics), the q/k head
    // width (qk_nope_head_dim + qk_rope_head_dim, read), and the indexer's sharing rules
    // (GLM-5.2; noted by the `glm_moe_dsa` reader).
    "rope_interleave", "indexer_rope_interleave", "qk_head_dim", "indexer_types", "index_topk_freq",
    "index_skip_topk_offset", "index_topk_pattern", "index_share_for_mtp_iteration", "mlp_layer_types",
];
