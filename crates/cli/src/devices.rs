//! `tunelab devices [--json] [--show CHIP]`: the bundled device profiles with key figures.
//! Figures marked derived are computed from the sourced ones (see assets/devices/*.json).

use tunelab_sim::device::{bundled, bundled_device, Arch};

/// Arguments of `tunelab devices`.
#[derive(clap::Args)]
pub struct Args {
    /// Print every profile as JSON.
    #[arg(long)]
    json: bool,
    /// Print one chip's profile (with the source of every figure), e.g. 910B2.
    #[arg(long, value_name = "CHIP")]
    show: Option<String>,
}

pub fn main(a: Args) -> Result<(), String> {
    if let Some(name) = &a.show {
        println!("{}", bundled_device(name)?.to_json());
        return Ok(());
    }
    let devices = bundled();
    if a.json {
        let v: Vec<serde_json::Value> = devices.iter().map(|d| serde_json::to_value(d).unwrap_or_default()).collect();
        println!("{}", serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?);
        return Ok(());
    }
    println!(
        "{:<9} {:<7} {:>10} {:>6} {:>9} {:>9} {:>9} {:>7} {:>7} {:>6}",
        "chip", "arch", "cube/vec", "MHz", "FP16 TF", "INT8 TOP", "mem GB/s", "L2 MiB", "mem GiB", "TDP W"
    );
    for d in &devices {
        let arch = match d.arch {
            Arch::Split => "split",
            Arch::Coupled => "coupled",
        };
        println!(
            "{:<9} {:<7} {:>10} {:>6.0} {:>9.1} {:>9.1} {:>9.0} {:>7.0} {:>7.1} {:>6.0}",
            d.name,
            arch,
            format!("{}/{}", d.cube_cores, d.vector_cores),
            d.cube_clock_mhz,
            d.derived.peak_tflops_fp16,
            d.derived.peak_tops_int8,
            d.derived.hbm_gbs,
            d.l2_bytes as f64 / 1048576.0,
            d.memory_bytes as f64 / 1073741824.0,
            d.power_tdp_w,
        );
    }
    println!("\nTFLOPS/TOPS and mem GB/s (peak x achievable fraction) are derived; `--show CHIP` prints a profile with every source.");
    Ok(())
}
