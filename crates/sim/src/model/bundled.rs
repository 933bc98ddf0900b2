//! Models compiled into the binary (`json_asset!`: include_str! without layout whitespace, so they work in WebAssembly without fetching).

use super::{load_model, LoadedModel};

/// The bundled model descriptions as (id, JSON), compiled in so they work in WebAssembly.
pub fn bundled_models() -> Vec<(&'static str, &'static str)> {
    vec![
        ("llama-2-7b", crate::json_asset!("../../../../assets/models/llama-2-7b.config.json")),
        ("qwen2.5-7b", crate::json_asset!("../../../../assets/models/qwen2.5-7b.config.json")),
        ("mixtral-8x7b", crate::json_asset!("../../../../assets/models/mixtral-8x7b.config.json")),
        ("sd15-unet", crate::json_asset!("../../../../assets/models/sd15-unet.graph.json")),
        ("llava-1.5-7b", crate::json_asset!("../../../../assets/models/llava-1.5-7b.config.json")),
        ("llama-2-13b", crate::json_asset!("../../../../assets/models/llama-2-13b.config.json")),
        ("llama-2-70b", crate::json_asset!("../../../../assets/models/llama-2-70b.config.json")),
        ("llama-3-8b", crate::json_asset!("../../../../assets/models/llama-3-8b.config.json")),
        ("llama-3-70b", crate::json_asset!("../../../../assets/models/llama-3-70b.config.json")),
        ("mistral-7b", crate::json_asset!("../../../../assets/models/mistral-7b.config.json")),
        ("qwen-7b", crate::json_asset!("../../../../assets/models/qwen-7b.config.json")),
        ("qwen-72b", crate::json_asset!("../../../../assets/models/qwen-72b.config.json")),
        ("qwen1.5-7b", crate::json_asset!("../../../../assets/models/qwen1.5-7b.config.json")),
        ("qwen2-7b", crate::json_asset!("../../../../assets/models/qwen2-7b.config.json")),
        ("qwen2-72b", crate::json_asset!("../../../../assets/models/qwen2-72b.config.json")),
        ("qwen2.5-32b", crate::json_asset!("../../../../assets/models/qwen2.5-32b.config.json")),
        ("qwen2-57b-a14b", crate::json_asset!("../../../../assets/models/qwen2-57b-a14b.config.json")),
        ("qwen3-32b", crate::json_asset!("../../../../assets/models/qwen3-32b.config.json")),
        ("qwen3-235b-a22b", crate::json_asset!("../../../../assets/models/qwen3-235b-a22b.config.json")),
        ("baichuan2-13b", crate::json_asset!("../../../../assets/models/baichuan2-13b.config.json")),
        ("chatglm3-6b", crate::json_asset!("../../../../assets/models/chatglm3-6b.config.json")),
        ("deepseek-v2-lite", crate::json_asset!("../../../../assets/models/deepseek-v2-lite.config.json")),
        ("deepseek-v3", crate::json_asset!("../../../../assets/models/deepseek-v3.config.json")),
        ("qwen3.5-2b", crate::json_asset!("../../../../assets/models/qwen3.5-2b.config.json")),
        ("qwen3.5-9b", crate::json_asset!("../../../../assets/models/qwen3.5-9b.config.json")),
        ("qwen3-next-80b-a3b", crate::json_asset!("../../../../assets/models/qwen3-next-80b-a3b.config.json")),
        ("phi-4-mini-instruct", crate::json_asset!("../../../../assets/models/phi-4-mini-instruct.config.json")),
        ("bge-large-zh-v1.5", crate::json_asset!("../../../../assets/models/bge-large-zh-v1.5.config.json")),
        ("xlm-roberta-large", crate::json_asset!("../../../../assets/models/xlm-roberta-large.config.json")),
        ("kimi-k2", crate::json_asset!("../../../../assets/models/kimi-k2.config.json")),
        ("qwen3-coder-480b-a35b", crate::json_asset!("../../../../assets/models/qwen3-coder-480b-a35b.config.json")),
        ("qwen2.5-vl-7b", crate::json_asset!("../../../../assets/models/qwen2.5-vl-7b.config.json")),
        // deepseek-ai/DeepSeek-V3.2-Exp config.json (DeepSeek-V3.2 keeps its architecture): the
        // DeepSeek-V3 layout plus index_n_heads 64, index_head_dim 128, index_topk 2048, written
        // as published on Hugging Face and cross-checked against the inference config in the
        // DeepSeek-V3.2-Exp repository (inference/config_671B_v3.2.json, public mirrors) and the
        // DeepseekV32Config defaults of LMDeploy / torchtitan-npu (64 / 128 / 2048).
        ("deepseek-v3.2", crate::json_asset!("../../../../assets/models/deepseek-v3.2.config.json")),
        // Qwen/Qwen3-VL-4B-Instruct config.json, copied from a verbatim vendored copy in a public
        // repository (ViT depth 24, hidden 1024, 16-pixel patches merged 2 x 2, DeepStack at
        // blocks 5 / 11 / 17).
        ("qwen3-vl-4b", crate::json_asset!("../../../../assets/models/qwen3-vl-4b.config.json")),
        // Set 3 (assets/models/SOURCES.md): verbatim public copies. Qwen3.5-397B-A17B and
        // Qwen3-VL-8B-Instruct from NVIDIA aiconfigurator's model_configs.
        ("qwen3.5-397b-a17b", crate::json_asset!("../../../../assets/models/qwen3.5-397b-a17b.config.json")),
        ("qwen3-vl-8b", crate::json_asset!("../../../../assets/models/qwen3-vl-8b.config.json")),
        // Set 3's ModelLink rows (assets/models/SOURCES.md): the config.json pages of the model
        // repositories on Hugging Face at a pinned revision, transcribed key by key.
        ("yi-34b", crate::json_asset!("../../../../assets/models/yi-34b.config.json")),
        ("qwen1.5-14b", crate::json_asset!("../../../../assets/models/qwen1.5-14b.config.json")),
    ]
}

/// Display names of the bundled models (Hugging Face configs carry none).
const BUNDLED_NAMES: [(&str, &str); 38] = [
    ("llama-2-7b", "Llama-2-7B"),
    ("qwen2.5-7b", "Qwen2.5-7B"),
    ("mixtral-8x7b", "Mixtral-8x7B"),
    ("sd15-unet", "Stable Diffusion 1.5 UNet"),
    ("llava-1.5-7b", "LLaVA-1.5-7B"),
    ("llama-2-13b", "Llama-2-13B"),
    ("llama-2-70b", "Llama-2-70B"),
    ("llama-3-8b", "Llama-3-8B"),
    ("llama-3-70b", "Llama-3-70B"),
    ("mistral-7b", "Mistral-7B"),
    ("qwen-7b", "Qwen-7B"),
    ("qwen-72b", "Qwen-72B"),
    ("qwen1.5-7b", "Qwen1.5-7B"),
    ("qwen2-7b", "Qwen2-7B"),
    ("qwen2-72b", "Qwen2-72B"),
    ("qwen2.5-32b", "Qwen2.5-32B"),
    ("qwen2-57b-a14b", "Qwen2-57B-A14B"),
    ("qwen3-32b", "Qwen3-32B"),
    ("qwen3-235b-a22b", "Qwen3-235B-A22B"),
    ("baichuan2-13b", "Baichuan2-13B"),
    ("chatglm3-6b", "ChatGLM3-6B"),
    ("deepseek-v2-lite", "DeepSeek-V2-Lite"),
    ("deepseek-v3", "DeepSeek-V3"),
    ("qwen3.5-2b", "Qwen3.5-2B"),
    ("qwen3.5-9b", "Qwen3.5-9B"),
    ("qwen3-next-80b-a3b", "Qwen3-Next-80B-A3B"),
    ("phi-4-mini-instruct", "Phi-4-mini-instruct"),
    ("bge-large-zh-v1.5", "BGE-large-zh-v1.5"),
    ("xlm-roberta-large", "XLM-RoBERTa-large"),
    ("kimi-k2", "Kimi-K2-Instruct"),
    ("qwen3-coder-480b-a35b", "Qwen3-Coder-480B-A35B-Instruct"),
    ("qwen2.5-vl-7b", "Qwen2.5-VL-7B-Instruct"),
    ("deepseek-v3.2", "DeepSeek-V3.2"),
    ("qwen3-vl-4b", "Qwen3-VL-4B-Instruct"),
    ("qwen3.5-397b-a17b", "Qwen3.5-397B-A17B"),
    ("qwen3-vl-8b", "Qwen3-VL-8B-Instruct"),
    ("yi-34b", "Yi-34B"),
    ("qwen1.5-14b", "Qwen1.5-14B"),
];

/// The ids of the bundled models, without their texts: the page's model picker links only these
/// (its first-load module reads no model; the engine worker reads the texts). Same order as
/// `bundled_models()`; a test checks the two lists agree.
pub fn bundled_model_ids() -> Vec<&'static str> {
    BUNDLED_NAMES.iter().map(|(id, _)| *id).collect()
}

/// The text of one bundled model by id (case-insensitive), as `bundled_models()` has it.
pub fn bundled_model_text(id: &str) -> Option<&'static str> {
    let want = id.trim().to_ascii_lowercase();
    bundled_models().into_iter().find(|(i, _)| *i == want).map(|(_, t)| t)
}

/// Loads a bundled model by id, with its display name.
pub fn load_bundled(id: &str) -> Result<LoadedModel, String> {
    let json = bundled_models()
        .into_iter()
        .find(|(i, _)| *i == id)
        .map(|(_, j)| j)
        .ok_or_else(|| {
            let ids: Vec<&str> = bundled_models().iter().map(|(i, _)| *i).collect();
            format!("no bundled model '{id}' (have: {})", ids.join(", "))
        })?;
    let mut loaded = load_model(json)?;
    if let Some((_, name)) = BUNDLED_NAMES.iter().find(|(i, _)| *i == id) {
        loaded.model.name = (*name).to_string();
    }
    Ok(loaded)
}

#[cfg(test)]
mod ids_tests {
    #[test]
    fn the_id_list_names_every_bundled_model_in_order() {
        let ids: Vec<&str> = super::bundled_models().iter().map(|(i, _)| *i).collect();
        assert_eq!(super::bundled_model_ids(), ids);
        assert!(super::bundled_model_text("Llama-2-7B").is_some());
    }
}
