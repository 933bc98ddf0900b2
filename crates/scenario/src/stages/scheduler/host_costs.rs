//! A scenario's own host costs (`deployment.serving.host_costs`, `spec::options::host_costs`)
//! applied to the engine's: every serving number is priced with them through
//! `ServingSpec::host`.

use super::host::HostCosts;
use std::collections::BTreeMap;

/// Sets one named host cost on `h` (the names `fields` lists). False for a name the pricing
/// has no place for (none of the bundled engines' fittable fields).
pub fn set(h: &mut HostCosts, name: &str, v: f64) -> bool {
    let slot = match name {
        "step_host_us" => &mut h.step_host_us,
        "step_host_us_per_seq" => &mut h.step_host_us_per_seq,
        "eager_host_us_per_collective" => &mut h.eager_host_us_per_collective,
        "piecewise_host_us_per_layer" => &mut h.piecewise_host_us_per_layer,
        "frontend_us_per_request" => &mut h.frontend_us_per_request,
        "triton_launch_host_us" => &mut h.triton_launch_host_us,
        "linear_prefill_python_us" => &mut h.linear_prefill_python_us,
        "mamba2_prefill_python_us" => &mut h.mamba2_prefill_python_us,
        "offline_call_host_us" => &mut h.offline_call_host_us,
        "float_nz_linear_factor" => &mut h.float_nz_linear_factor,
        "eager_ep_serial_share" => &mut h.eager_ep_serial_share,
        _ => return false,
    };
    *slot = v;
    true
}

/// Applies a scenario's host costs to the engine's (checked first, so a bad link fails by name
/// wherever it is priced).
pub fn apply(engine: &str, h: &mut HostCosts, costs: &BTreeMap<String, f64>) -> Result<(), String> {
    crate::spec::options::host_costs::validate(engine, costs)?;
    for (name, v) in costs {
        if !set(h, name, *v) {
            return Err(format!("deployment.serving.host_costs.{name}: the pricing has no place for it"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fittable_field_has_a_place_in_the_pricing() {
        let mut h = HostCosts::bundled("vllm-ascend").unwrap();
        for e in super::super::host::engines() {
            for f in crate::spec::options::host_costs::fields(&e).unwrap() {
                assert!(set(&mut h, &f.name, f.value), "{e}.{}", f.name);
            }
        }
    }
}
