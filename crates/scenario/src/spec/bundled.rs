//! The bundled scenarios (assets/scenarios/*.json), compiled in so the browser needs no files.

use crate::spec::scenario::Scenario;

/// (file stem, JSON text) of every bundled scenario, in the order the app lists them.
pub const BUNDLED_SCENARIOS: &[(&str, &str)] = &[
    ("llama2-7b-910B2-deployment", tunelab_sim::json_asset!("../../../../assets/scenarios/llama2-7b-910B2-deployment.json")),
    ("qwen2.5-7b-910B2-operator", tunelab_sim::json_asset!("../../../../assets/scenarios/qwen2.5-7b-910B2-operator.json")),
    ("operator-autotune-llama2-7b", tunelab_sim::json_asset!("../../../../assets/scenarios/operator-autotune-llama2-7b.json")),
    ("llama2-7b-910B2-compare", tunelab_sim::json_asset!("../../../../assets/scenarios/llama2-7b-910B2-compare.json")),
    ("llama2-7b-8x910B2-training", tunelab_sim::json_asset!("../../../../assets/scenarios/llama2-7b-8x910B2-training.json")),
    ("deepseek-v2-lite-8x910B2-training", tunelab_sim::json_asset!("../../../../assets/scenarios/deepseek-v2-lite-8x910B2-training.json")),
    ("qwen2.5-7b-910B2-runtime", tunelab_sim::json_asset!("../../../../assets/scenarios/qwen2.5-7b-910B2-runtime.json")),
    ("mixtral-8x7b-910B2-deployment", tunelab_sim::json_asset!("../../../../assets/scenarios/mixtral-8x7b-910B2-deployment.json")),
    ("sd15-unet-310P3-operator", tunelab_sim::json_asset!("../../../../assets/scenarios/sd15-unet-310P3-operator.json")),
    ("llava-1.5-7b-910B2-deployment", tunelab_sim::json_asset!("../../../../assets/scenarios/llava-1.5-7b-910B2-deployment.json")),
    ("sd2.1-910B2-diffusion", tunelab_sim::json_asset!("../../../../assets/scenarios/sd2.1-910B2-diffusion.json")),
    ("qwen-image-910B2-diffusion", tunelab_sim::json_asset!("../../../../assets/scenarios/qwen-image-910B2-diffusion.json")),
    ("wan2.2-a14b-8x910B2-diffusion", tunelab_sim::json_asset!("../../../../assets/scenarios/wan2.2-a14b-8x910B2-diffusion.json")),
    ("flux.1-kontext-910B2-edit", tunelab_sim::json_asset!("../../../../assets/scenarios/flux.1-kontext-910B2-edit.json")),
    ("flux.2-dev-8x910B2-fsdp", tunelab_sim::json_asset!("../../../../assets/scenarios/flux.2-dev-8x910B2-fsdp.json")),
    ("flux.2-dev-8x910B2-lora-training", tunelab_sim::json_asset!("../../../../assets/scenarios/flux.2-dev-8x910B2-lora-training.json")),
    ("flux.1-kontext-8x910B2-lora-training", tunelab_sim::json_asset!("../../../../assets/scenarios/flux.1-kontext-8x910B2-lora-training.json")),
    ("sana-1600m-910B2-diffusion", tunelab_sim::json_asset!("../../../../assets/scenarios/sana-1600m-910B2-diffusion.json")),
    ("hunyuanvideo-8x910B2-diffusion", tunelab_sim::json_asset!("../../../../assets/scenarios/hunyuanvideo-8x910B2-diffusion.json")),
    ("sana-1600m-8x910B2-lora-training", tunelab_sim::json_asset!("../../../../assets/scenarios/sana-1600m-8x910B2-lora-training.json")),
    ("hunyuanvideo-8x910B2-lora-training", tunelab_sim::json_asset!("../../../../assets/scenarios/hunyuanvideo-8x910B2-lora-training.json")),
    ("sdxl-8x910B2-lora-training", tunelab_sim::json_asset!("../../../../assets/scenarios/sdxl-8x910B2-lora-training.json")),
    ("deepseek-v3-2xA3-deployment", tunelab_sim::json_asset!("../../../../assets/scenarios/deepseek-v3-2xA3-deployment.json")),
    ("qwen3-235b-2xA3-pd-compare", tunelab_sim::json_asset!("../../../../assets/scenarios/qwen3-235b-2xA3-pd-compare.json")),
    ("qwen3-32b-4x910B2-eagle3-w8a8", tunelab_sim::json_asset!("../../../../assets/scenarios/qwen3-32b-4x910B2-eagle3-w8a8.json")),
    ("qwen3.5-9b-910B2-hybrid-eager-graph", tunelab_sim::json_asset!("../../../../assets/scenarios/qwen3.5-9b-910B2-hybrid-eager-graph.json")),
    ("bge-large-910B4-embedding", tunelab_sim::json_asset!("../../../../assets/scenarios/bge-large-910B4-embedding.json")),
    ("phi4-mini-910B2-sharegpt", tunelab_sim::json_asset!("../../../../assets/scenarios/phi4-mini-910B2-sharegpt.json")),
    ("qwen2.5-vl-7b-910B2-vision", tunelab_sim::json_asset!("../../../../assets/scenarios/qwen2.5-vl-7b-910B2-vision.json")),
];

/// Every bundled scenario, parsed: (id, scenario or the error that stops it loading).
pub fn bundled_scenarios() -> Vec<(&'static str, Result<Scenario, String>)> {
    BUNDLED_SCENARIOS.iter().map(|(id, text)| (*id, Scenario::from_json(text))).collect()
}

/// One bundled scenario by id.
pub fn bundled_scenario(id: &str) -> Result<Scenario, String> {
    let (_, text) = BUNDLED_SCENARIOS
        .iter()
        .find(|(n, _)| *n == id)
        .ok_or_else(|| format!("unknown bundled scenario '{id}'; bundled: {}", BUNDLED_SCENARIOS.iter().map(|b| b.0).collect::<Vec<_>>().join(", ")))?;
    Scenario::from_json(text)
}
