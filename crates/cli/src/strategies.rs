//! `tunelab strategies`: the registry names with a line each.

pub fn main(_args: &[String]) -> Result<(), String> {
    for (name, about) in tunelab_search::strategies::STRATEGIES {
        println!("{name:<10} {about}");
    }
    Ok(())
}
