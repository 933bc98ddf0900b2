//! `tunelab strategies`: the registry names with a line each.

/// `tunelab strategies` takes no arguments.
#[derive(clap::Args)]
pub struct Args {}

pub fn main(_args: Args) -> Result<(), String> {
    for (name, about) in tunelab_search::strategies::STRATEGIES {
        println!("{name:<10} {about}");
    }
    Ok(())
}
