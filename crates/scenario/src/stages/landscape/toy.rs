//! The 2-D toy functions a landscape can be (standard test functions of optimisation) and the
//! grid they are sampled on.

/// A toy function: its name, a one-line description, and its domain (x range, y range).
pub struct ToyFunction {
    pub name: &'static str,
    pub description: &'static str,
    pub x: (f64, f64),
    pub y: (f64, f64),
    pub(super) f: fn(f64, f64) -> f64,
}

/// The toy landscapes, each on the domain it is usually drawn on. These are mathematical
/// definitions (the standard test functions of optimisation), not physical parameters.
pub const TOY_FUNCTIONS: &[ToyFunction] = &[
    ToyFunction { name: "branin", description: "Branin-Hoo: three equal minima (0.3979) in a curved valley; smooth", x: (-5.0, 10.0), y: (0.0, 15.0), f: branin },
    ToyFunction { name: "rastrigin", description: "Rastrigin: a bowl covered in a regular grid of local minima; global minimum 0 at the origin", x: (-5.12, 5.12), y: (-5.12, 5.12), f: rastrigin },
    ToyFunction { name: "rosenbrock", description: "Rosenbrock: a long, flat, curved valley; minimum 0 at (1, 1); values span four decades", x: (-2.0, 2.0), y: (-1.0, 3.0), f: rosenbrock },
    ToyFunction { name: "himmelblau", description: "Himmelblau: four equal minima (0) in four basins", x: (-5.0, 5.0), y: (-5.0, 5.0), f: himmelblau },
    ToyFunction { name: "ackley", description: "Ackley: a nearly flat, bumpy plateau around one narrow funnel; minimum 0 at the origin", x: (-5.0, 5.0), y: (-5.0, 5.0), f: ackley },
    ToyFunction { name: "schwefel", description: "Schwefel: deceptive; the best minimum (0 at 420.97, 420.97) lies in a far corner, away from the next-best basins, so following the broad trend leads away from it", x: (-500.0, 500.0), y: (-500.0, 500.0), f: schwefel },
];

/// A toy function by name.
pub fn toy_function(name: &str) -> Option<&'static ToyFunction> {
    TOY_FUNCTIONS.iter().find(|t| t.name == name)
}

const PI: f64 = std::f64::consts::PI;

/// Branin-Hoo: a (y - b x^2 + c x - r)^2 + s (1 - t) cos x + s with the standard constants.
fn branin(x: f64, y: f64) -> f64 {
    let (a, b, c, r, s, t) = (1.0, 5.1 / (4.0 * PI * PI), 5.0 / PI, 6.0, 10.0, 1.0 / (8.0 * PI));
    let q = y - b * x * x + c * x - r;
    a * q * q + s * (1.0 - t) * libm::cos(x) + s
}

/// Rastrigin in two dimensions: 20 + sum (v^2 - 10 cos 2 pi v).
fn rastrigin(x: f64, y: f64) -> f64 {
    20.0 + x * x - 10.0 * libm::cos(2.0 * PI * x) + y * y - 10.0 * libm::cos(2.0 * PI * y)
}

/// Rosenbrock: (1 - x)^2 + 100 (y - x^2)^2.
fn rosenbrock(x: f64, y: f64) -> f64 {
    let (u, v) = (1.0 - x, y - x * x);
    u * u + 100.0 * v * v
}

/// Himmelblau: (x^2 + y - 11)^2 + (x + y^2 - 7)^2.
fn himmelblau(x: f64, y: f64) -> f64 {
    let (u, v) = (x * x + y - 11.0, x + y * y - 7.0);
    u * u + v * v
}

/// Ackley in two dimensions: -20 exp(-0.2 sqrt((x^2+y^2)/2)) - exp((cos 2 pi x + cos 2 pi y)/2) + e + 20.
fn ackley(x: f64, y: f64) -> f64 {
    let r = libm::sqrt(0.5 * (x * x + y * y));
    let c = 0.5 * (libm::cos(2.0 * PI * x) + libm::cos(2.0 * PI * y));
    -20.0 * libm::exp(-0.2 * r) - libm::exp(c) + std::f64::consts::E + 20.0
}

/// Schwefel in two dimensions: 418.9829 d - sum v sin(sqrt |v|) (Schwefel 1981; the standard
/// form in Surjanovic and Bingham's test-function library).
fn schwefel(x: f64, y: f64) -> f64 {
    2.0 * 418.982_887_272_433_8 - x * libm::sin(libm::sqrt(libm::fabs(x))) - y * libm::sin(libm::sqrt(libm::fabs(y)))
}

/// The grid coordinates of one axis: `n` points from `lo` to `hi`, rounded to 6 decimals so the
/// values shown are the values evaluated.
pub(super) fn axis(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let x = lo + (hi - lo) * i as f64 / (n - 1) as f64;
            let r = libm::round(x * 1e6) / 1e6;
            // No negative zero on the axis: it would print as "-0".
            if r == 0.0 { 0.0 } else { r }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specification_names_every_toy_function() {
        let names: Vec<&str> = TOY_FUNCTIONS.iter().map(|t| t.name).collect();
        assert_eq!(names, crate::spec::options::landscape::TOY_FUNCTION_NAMES);
    }
}
