//! Each ticked strategy's hyper-parameters as labelled controls (population, mutation,
//! temperature schedule, acquisition, exploration ...), from the options each strategy reads
//! (`tunelab_search::strategies::*::from_options`). An empty field is the strategy's own default;
//! a value out of range is refused beside its field; a key no strategy reads (from an old link
//! or typed JSON) is shown as a warning with a button that removes it, never silently kept.

use crate::state::Ctx;
use leptos::prelude::*;
use serde_json::Value as Json;

/// What kind of value an option takes.
#[derive(Clone, Copy)]
pub enum Kind {
    /// A whole number in [min, max].
    Int(i64, i64),
    /// A number in [min, max].
    Num(f64, f64),
    /// On or off.
    Bool,
    /// One of these words.
    Choice(&'static [&'static str]),
}

/// (key, label, kind, the strategy's default as shown, what it does).
pub type Opt = (&'static str, &'static str, Kind, &'static str, &'static str);

/// The options a strategy reads, in the order shown.
pub fn options_of(strategy: &str) -> &'static [Opt] {
    match strategy {
        "genetic" => &[
            ("population", "Population", Kind::Int(2, 4096), "from the space", "Configurations per generation."),
            ("mutation_rate", "Mutation rate", Kind::Num(0.0, 1.0), "1 / parameters", "Chance that each parameter of a child moves one step."),
            ("crossover_rate", "Crossover rate", Kind::Num(0.0, 1.0), "0.8", "Chance that a child mixes two parents rather than copying one."),
            ("tournament", "Tournament size", Kind::Int(1, 64), "2", "Parents are the best of this many drawn at random: larger is greedier."),
            ("patience_generations", "Patience (generations)", Kind::Int(1, 1000), "3", "Generations without the minimum gain before it stops."),
            ("min_gain", "Minimum gain", Kind::Num(0.0, 1.0), "0.02", "Relative improvement a generation must bring to count as progress."),
        ],
        "annealing" => &[
            ("t_start", "Start temperature", Kind::Num(1e-6, 100.0), "0.3", "How much worse a move may be and still be accepted at first (relative)."),
            ("t_end", "End temperature", Kind::Num(1e-9, 100.0), "0.003", "The temperature at the end of the budget (geometric schedule)."),
            ("restart_after", "Restart after", Kind::Int(1, 1_000_000), "never", "Evaluations without acceptance before it restarts from the best."),
        ],
        "local" => &[
            ("intensity", "Intensity", Kind::Num(1.0, 16.0), "1", "How many neighbours it tries around the incumbent before moving on."),
            ("init", "Random start", Kind::Int(1, 1_000_000), "from the space", "Random configurations tried before the local moves."),
        ],
        "nsga2" => &[
            ("population", "Population", Kind::Int(2, 4096), "from the space", "Configurations per generation."),
            ("crossover_rate", "Crossover rate", Kind::Num(0.0, 1.0), "0.9", "Chance that a child mixes two parents."),
            ("mutation_rate", "Mutation rate", Kind::Num(0.0, 1.0), "1 / parameters", "Chance that each parameter of a child moves."),
        ],
        "bayes" => &[
            ("acquisition", "Acquisition", Kind::Choice(&["ei", "pi", "lcb", "portfolio"]), "ei", "How it picks the next point from the model: expected improvement, probability of improvement, lower confidence bound, or all three in turn."),
            ("xi", "Exploration (xi)", Kind::Num(0.0, 10.0), "default", "Margin an improvement must clear: larger explores more."),
            ("initial", "Random start", Kind::Int(1, 100_000), "from the space", "Random points before the Gaussian process is fitted."),
            ("candidates", "Candidates per step", Kind::Int(1, 100_000), "default", "Points the acquisition is evaluated on each step."),
            ("max_train", "Most points fitted", Kind::Int(4, 2000), "default", "The model is fitted on at most this many trials (the best and the latest)."),
            ("transform", "Goal transform", Kind::Choice(&["blend", "rank", "log"]), "default", "How the goal is scaled before fitting."),
            ("relevance", "Per-parameter length scales", Kind::Bool, "default", "Learn how much each parameter matters (ARD)."),
        ],
        "tpe" => &[
            ("startup", "Random start", Kind::Int(0, 100_000), "default", "Random trials before the densities steer."),
            ("gamma", "Good share (gamma)", Kind::Num(0.01, 0.9), "default", "Share of the trials counted as good."),
            ("explore", "Exploration", Kind::Num(0.0, 1.0), "default", "Chance of a random proposal instead of the densities' best."),
            ("candidates", "Candidates per step", Kind::Int(1, 10_000), "default", "Samples from the good density scored each step."),
            ("max_good", "Most good trials", Kind::Int(1, 100_000), "default", "Cap on the good group's size."),
            ("prior_weight", "Prior weight", Kind::Num(0.001, 100.0), "default", "Weight of the uniform prior in each density."),
            ("multivariate", "Joint densities", Kind::Bool, "default", "Model the parameters jointly rather than one by one."),
        ],
        "rl" => &[
            ("learning_rate", "Learning rate", Kind::Num(0.0, 10.0), "default", "Step of each policy update."),
            ("explore", "Exploration", Kind::Num(0.0, 1.0), "default", "Chance of a uniformly random choice."),
            ("baseline_decay", "Baseline decay", Kind::Num(0.0, 0.999), "default", "How slowly the moving baseline of rewards forgets."),
            ("bins", "Bins per continuous parameter", Kind::Int(2, 1000), "default", "Choices a continuous parameter is split into."),
        ],
        "auto" => &[
            ("share_best", "Share the best", Kind::Bool, "on", "Every member of the portfolio sees the best found so far."),
            ("polish_alone", "Polish alone", Kind::Bool, "off", "Only local search spends the last 15% of the budget."),
            ("min_pairs", "Pairs before judging", Kind::Int(1, 10_000), "default", "Evaluations before credit moves between members."),
            ("judge_tpe", "Judge by TPE", Kind::Bool, "on", "TPE's densities judge which member's proposals look promising."),
        ],
        _ => &[],
    }
}

/// Keys an options object carries that the strategy does not read (the auto portfolio's list
/// and forced member are JSON-only options it does read).
pub fn unknown_keys(strategy: &str, options: &Json) -> Vec<String> {
    let known = options_of(strategy);
    let extra: &[&str] = if strategy == "auto" { &["portfolio", "strategy"] } else { &[] };
    options.as_object().map(|o| o.keys().filter(|k| !known.iter().any(|x| x.0 == k.as_str()) && !extra.contains(&k.as_str())).cloned().collect()).unwrap_or_default()
}

/// Reads a field's text as the option's value: None to remove it (empty: the default).
pub fn parse(kind: Kind, text: &str) -> Result<Option<Json>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    match kind {
        Kind::Int(lo, hi) => match t.parse::<i64>() {
            Ok(v) if (lo..=hi).contains(&v) => Ok(Some(v.into())),
            _ => Err(format!("a whole number from {lo} to {hi}")),
        },
        Kind::Num(lo, hi) => match t.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= lo && v <= hi => Ok(Some(v.into())),
            _ => Err(format!("a number from {lo} to {hi}")),
        },
        Kind::Bool => match t {
            "on" | "true" => Ok(Some(true.into())),
            "off" | "false" => Ok(Some(false.into())),
            _ => Err("on or off".into()),
        },
        Kind::Choice(c) => if c.contains(&t) { Ok(Some(t.into())) } else { Err(format!("one of {}", c.join(", "))) },
    }
}

/// Applies `f` to the options of the ticked strategy `name`.
fn edit_options(ctx: Ctx, name: &str, f: impl FnOnce(&mut serde_json::Map<String, Json>)) -> bool {
    ctx.edit(|s| {
        let spec = if s.strategy.name == name { Some(&mut s.strategy) } else { s.compare.iter_mut().find(|x| x.name == name) };
        if let Some(spec) = spec {
            if !spec.options.is_object() {
                spec.options = Json::Object(Default::default());
            }
            if let Some(o) = spec.options.as_object_mut() {
                f(o);
            }
        }
    })
}

/// The labelled controls of every ticked strategy that has options.
#[component]
pub fn StrategyOptions() -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let ticked = Memo::new(move |_| ctx.scenario.with(|s| s.strategies().into_iter().map(|x| x.name.clone()).collect::<Vec<_>>()));
    view! {
        <div class="strategy-options" data-testid="strategy-options">
            {move || ticked.get().into_iter().filter(|n| !options_of(n).is_empty()).map(|name| view! { <OptionsOf name/> }).collect_view()}
        </div>
    }
}

#[component]
fn OptionsOf(name: String) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let name2 = name.clone();
    let current = Memo::new(move |_| {
        ctx.scenario.with(|s| s.strategies().into_iter().find(|x| x.name == name2).map(|x| x.options.clone()).unwrap_or(Json::Null))
    });
    let fields = options_of(&name)
        .iter()
        .map(|&(key, label, kind, default, help)| {
            let name = name.clone();
            let value = move || current.with(|o| o.get(key).map(|v| match v { Json::Bool(b) => if *b { "on".into() } else { "off".into() }, Json::String(s) => s.clone(), other => other.to_string() }).unwrap_or_default());
            let id = format!("opt-{name}-{key}");
            let set = move |ev: leptos::ev::Event| {
                let text = event_target_value(&ev);
                match parse(kind, &text) {
                    Ok(v) => {
                        edit_options(ctx, &name, |o| match v {
                            Some(v) => { o.insert(key.into(), v); }
                            None => { o.remove(key); }
                        });
                    }
                    Err(why) => ctx.fail(format!("{label}: '{}' is not accepted; {why} (empty: the default, {default}).", text.trim())),
                }
            };
            let input = match kind {
                Kind::Bool => view! {
                    <select data-testid=id prop:value=value on:change=set>
                        <option value="">{format!("default ({default})")}</option>
                        <option value="on">"on"</option>
                        <option value="off">"off"</option>
                    </select>
                }.into_any(),
                Kind::Choice(c) => view! {
                    <select data-testid=id prop:value=value on:change=set>
                        <option value="">{format!("default ({default})")}</option>
                        {c.iter().map(|&v| view! { <option value=v>{v}</option> }).collect_view()}
                    </select>
                }.into_any(),
                Kind::Int(..) | Kind::Num(..) => view! {
                    <input type="text" inputmode="decimal" class="short" data-testid=id placeholder=default prop:value=value on:change=set/>
                }.into_any(),
            };
            view! { <label class="opt" title=help>{label}" "{input}</label> }
        })
        .collect_view();
    let name3 = name.clone();
    let unknown = move || current.with(|o| unknown_keys(&name3, o));
    let name4 = name.clone();
    let drop_unknown = move |_| {
        let keys = current.with_untracked(|o| unknown_keys(&name4, o));
        edit_options(ctx, &name4, |o| o.retain(|k, _| !keys.contains(k)));
    };
    let warn = move || {
        let u = unknown();
        (!u.is_empty()).then(|| {
            let drop_unknown = drop_unknown.clone();
            view! {
                <div class="warning" data-testid="unknown-options">
                    <span>{format!("Not an option of this strategy: {} (ignored by it).", u.join(", "))}</span>
                    <button class="dismiss" on:click=drop_unknown>"Remove"</button>
                </div>
            }
        })
    };
    view! {
        <fieldset class="opts" data-testid=format!("options-{name}")>
            <legend>{format!("{name} options")}</legend>
            <div class="opt-grid">{fields}</div>
            {warn}
        </fieldset>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_strategy_with_options_reads_what_the_controls_write() {
        // Each control's value, at its bounds, builds the strategy without an error.
        for (name, _) in tunelab_search::strategies::STRATEGIES {
            for &(key, _, kind, _, _) in options_of(name) {
                let v = match kind {
                    Kind::Int(lo, hi) => vec![Json::from(lo), Json::from(hi)],
                    Kind::Num(lo, hi) => vec![Json::from(lo), Json::from(hi)],
                    Kind::Bool => vec![Json::from(true), Json::from(false)],
                    Kind::Choice(c) => c.iter().map(|&x| Json::from(x)).collect(),
                };
                for v in v {
                    let o = serde_json::json!({ key: v });
                    assert!(tunelab_search::strategies::by_name(name, &o).is_ok(), "{name}.{key} = {v}");
                    assert!(unknown_keys(name, &o).is_empty(), "{name}.{key}");
                }
            }
        }
        assert_eq!(unknown_keys("genetic", &serde_json::json!({"populaton": 8})), vec!["populaton"]);
        assert_eq!(parse(Kind::Int(2, 10), "1"), Err("a whole number from 2 to 10".into()));
        assert_eq!(parse(Kind::Num(0.0, 1.0), ""), Ok(None));
        assert_eq!(parse(Kind::Choice(&["ei", "pi"]), "pi"), Ok(Some("pi".into())));
    }
}
