//! `strategies::check` (what a scenario's validation calls, without building a strategy) agrees
//! with `strategies::by_name` on every registry name, on refused options and on unknown names.

use serde_json::json;
use tunelab_search::strategies::{by_name, check, STRATEGIES};

#[test]
fn check_agrees_with_by_name() {
    let options = [json!({}), json!({"transform": "nope"}), json!({"acquisition": "nope"}), json!({"transform": "rank", "initial": 3}), json!(null)];
    let names: Vec<&str> = STRATEGIES.iter().map(|s| s.0).chain(["", "Bayes", "randm"]).collect();
    for name in names {
        for o in &options {
            let built = by_name(name, o).map(|_| ());
            assert_eq!(check(name, o), built, "{name} {o}");
        }
    }
    assert!(check("bayes", &json!({"transform": "nope"})).unwrap_err().contains("transform"));
    assert!(check("randm", &json!({})).unwrap_err().contains("unknown strategy"));
}
