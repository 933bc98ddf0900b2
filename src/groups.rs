//! Parameters grouped per operator, for the operator stage's hundreds of tiling parameters:
//! strategy cards, the best configuration and the Explore menus show one collapsible group per
//! operator instead of one long run of names (Explore uses `param_groups` too).
//!
//! The operator stage names a tiling parameter `OPERATOR.AXIS` (e.g. `decode:attn_qkv.baseM`);
//! a name without a dot (e.g. `flash_attention`) belongs to the whole model.

/// One group: its title and the indices of its parameters, in space order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamGroup {
    pub name: String,
    pub params: Vec<usize>,
}

/// The group a parameter name belongs to (None: the whole model).
pub fn operator_of(name: &str) -> Option<&str> {
    name.rfind('.').filter(|&i| i > 0 && i + 1 < name.len()).map(|i| &name[..i])
}

/// The part of a name after its operator.
pub fn short_name(name: &str) -> &str {
    operator_of(name).map(|op| &name[op.len() + 1..]).unwrap_or(name)
}

/// Groups in order of first appearance; the whole-model group ("model-wide") first when any.
pub fn param_groups(names: &[String]) -> Vec<ParamGroup> {
    let mut groups: Vec<ParamGroup> = Vec::new();
    let mut wide = Vec::new();
    for (i, n) in names.iter().enumerate() {
        match operator_of(n) {
            None => wide.push(i),
            Some(op) => match groups.iter_mut().find(|g| g.name == op) {
                Some(g) => g.params.push(i),
                None => groups.push(ParamGroup { name: op.to_string(), params: vec![i] }),
            },
        }
    }
    if !wide.is_empty() {
        groups.insert(0, ParamGroup { name: "model-wide".into(), params: wide });
    }
    groups
}

/// True when a space is big enough to show grouped (an operator stage).
pub fn is_grouped(names: &[String]) -> bool {
    names.len() > 12 && names.iter().any(|n| operator_of(n).is_some())
}

/// "250 tiling parameters over 18 operators" (plus model-wide switches when any).
pub fn summary(names: &[String]) -> String {
    let groups = param_groups(names);
    let ops: Vec<&ParamGroup> = groups.iter().filter(|g| g.name != "model-wide").collect();
    let tiling: usize = ops.iter().map(|g| g.params.len()).sum();
    let wide = names.len() - tiling;
    let mut s = format!("{tiling} tiling parameters over {} operators", ops.len());
    if wide > 0 {
        s.push_str(&format!(" and {wide} model-wide"));
    }
    s
}

/// A configuration as one line per group: ("decode:attn_qkv", "baseM=128 baseN=256 ...").
pub fn grouped_config(names: &[String], config: &tunelab_search::Config) -> Vec<(String, String)> {
    param_groups(names)
        .into_iter()
        .map(|g| {
            let line = g
                .params
                .iter()
                .filter_map(|&i| config.0.get(i).map(|v| format!("{}={}", short_name(&names[i]), v)))
                .collect::<Vec<_>>()
                .join(" ");
            (g.name, line)
        })
        .collect()
}

/// A parameter menu's groups: one (operator, full names) per operator when the space is grouped
/// (Explore's menus use `<optgroup>`s), else one unlabelled group of every name.
pub fn option_groups(names: &[String]) -> Vec<(Option<String>, Vec<String>)> {
    if !is_grouped(names) {
        return vec![(None, names.to_vec())];
    }
    param_groups(names).into_iter().map(|g| (Some(g.name), g.params.iter().map(|&i| names[i].clone()).collect())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_per_operator_with_model_wide_first() {
        let names: Vec<String> = ["decode:qkv.baseM", "decode:qkv.baseN", "flash_attention", "prefill:mlp.baseM", "decode:qkv.int8"].iter().map(|s| s.to_string()).collect();
        let g = param_groups(&names);
        assert_eq!(g[0], ParamGroup { name: "model-wide".into(), params: vec![2] });
        assert_eq!(g[1], ParamGroup { name: "decode:qkv".into(), params: vec![0, 1, 4] });
        assert_eq!(g[2].name, "prefill:mlp");
        assert_eq!(summary(&names), "4 tiling parameters over 2 operators and 1 model-wide");
        assert_eq!(short_name("decode:qkv.baseM"), "baseM");
        assert_eq!(operator_of(".x"), None);
        assert_eq!(operator_of("x."), None);
    }

    #[test]
    fn the_bundled_operator_scenario_groups() {
        let s = tunelab_scenario::bundled_scenario("qwen2.5-7b-910B2-operator").unwrap();
        let setup = tunelab_scenario::setup(&s).unwrap();
        let names = setup.space.names();
        assert!(is_grouped(names));
        let menus = option_groups(names);
        assert!(menus.iter().all(|(l, _)| l.is_some()));
        assert_eq!(menus.iter().map(|(_, v)| v.len()).sum::<usize>(), names.len());
        let small: Vec<String> = vec!["batch".into(), "tp".into()];
        assert_eq!(option_groups(&small), vec![(None, small.clone())]);
        let g = param_groups(names);
        assert!(g.len() >= 5, "{} groups", g.len());
        assert_eq!(g.iter().map(|g| g.params.len()).sum::<usize>(), names.len());
        println!("{}", summary(names));
    }
}
