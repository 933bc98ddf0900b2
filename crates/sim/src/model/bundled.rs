//! Models compiled into the binary (include_str!, so they work in WebAssembly without fetching).

use super::{load_model, LoadedModel};

/// The bundled model descriptions as (id, JSON), compiled in so they work in WebAssembly.
pub fn bundled_models() -> Vec<(&'static str, &'static str)> {
    vec![
        ("llama-2-7b", include_str!("../../../../assets/models/llama-2-7b.config.json")),
        ("qwen2.5-7b", include_str!("../../../../assets/models/qwen2.5-7b.config.json")),
        ("mixtral-8x7b", include_str!("../../../../assets/models/mixtral-8x7b.config.json")),
        ("sd15-unet", include_str!("../../../../assets/models/sd15-unet.graph.json")),
        ("llava-1.5-7b", include_str!("../../../../assets/models/llava-1.5-7b.config.json")),
    ]
}

/// Display names of the bundled models (Hugging Face configs carry none).
const BUNDLED_NAMES: [(&str, &str); 5] = [
    ("llama-2-7b", "Llama-2-7B"),
    ("qwen2.5-7b", "Qwen2.5-7B"),
    ("mixtral-8x7b", "Mixtral-8x7B"),
    ("sd15-unet", "Stable Diffusion 1.5 UNet"),
    ("llava-1.5-7b", "LLaVA-1.5-7B"),
];

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
