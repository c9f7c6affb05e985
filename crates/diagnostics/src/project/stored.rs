//! The project index in a form that can be stored between runs (the
//! command line's cache keeps the index of an unchanged tree).

use super::{Argument, Passed, ProjectIndex};
use crate::semantic::Value;

/// What a [`ProjectIndex`] holds, in a form that can be stored between runs
/// (the command line's cache keeps the index of an unchanged tree).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct StoredIndex {
    returns: Vec<(String, StoredValue)>,
    modules: Vec<String>,
    functions: Vec<String>,
    outgoing: Vec<(String, Vec<StoredPassed>)>,
}

/// A [`Value`] as stored: its kind, its number, and a model's name.
type StoredValue = (u8, Option<u64>, Option<String>);

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct StoredPassed {
    callee: String,
    caller: String,
    positional: Vec<(StoredValue, String)>,
    keywords: Vec<(String, StoredValue, String)>,
}

fn store_value(value: Value) -> StoredValue {
    match value {
        Value::Unknown => (0, None, None),
        Value::Int(n) => (1, Some(n), None),
        Value::Scalar => (2, None, None),
        Value::Array(n) => (3, n, None),
        Value::Frame(n) => (4, n, None),
        Value::Graph(n) => (5, n, None),
        Value::Grouped(n) => (6, n, None),
        Value::Device(n) => (7, n, None),
        Value::GpuFrame => (8, None, None),
        Value::Model(name) => (9, None, Some(name.to_string())),
    }
}

/// The value stored as `stored`; `None` for a model this build's knowledge
/// does not know (the index is then made again).
fn stored_value((kind, n, name): StoredValue) -> Option<Value> {
    Some(match kind {
        0 => Value::Unknown,
        1 => Value::Int(n?),
        2 => Value::Scalar,
        3 => Value::Array(n),
        4 => Value::Frame(n),
        5 => Value::Graph(n),
        6 => Value::Grouped(n),
        7 => Value::Device(n),
        8 => Value::GpuFrame,
        9 => Value::Model(gpulens_knowledge::Knowledge::get().api(&name?)?.cpu.as_str()),
        _ => return None,
    })
}

impl ProjectIndex {
    /// The index in a form that can be stored (see [`ProjectIndex::from_stored`]).
    pub fn stored(&self) -> StoredIndex {
        let mut returns: Vec<(String, StoredValue)> = self.returns.iter().map(|(k, v)| (k.clone(), store_value(*v))).collect();
        returns.sort();
        let mut modules: Vec<String> = self.modules.iter().cloned().collect();
        modules.sort();
        let mut functions: Vec<String> = self.functions.iter().cloned().collect();
        functions.sort();
        let argument = |a: &Argument| (store_value(a.value), a.text.clone());
        let mut outgoing: Vec<(String, Vec<StoredPassed>)> = self
            .outgoing
            .iter()
            .map(|(module, passes)| {
                let passes = passes
                    .iter()
                    .map(|p| StoredPassed {
                        callee: p.callee.clone(),
                        caller: p.caller.clone(),
                        positional: p.positional.iter().map(argument).collect(),
                        keywords: p.keywords.iter().map(|(k, a)| (k.clone(), store_value(a.value), a.text.clone())).collect(),
                    })
                    .collect();
                (module.clone(), passes)
            })
            .collect();
        outgoing.sort_by(|a, b| a.0.cmp(&b.0));
        StoredIndex { returns, modules, functions, outgoing }
    }

    /// The index `stored` holds, as it was made; `None` where this build
    /// cannot read it back.
    pub fn from_stored(stored: StoredIndex) -> Option<Self> {
        let returns: Vec<(String, Value)> = stored.returns.into_iter().map(|(k, v)| Some((k, stored_value(v)?))).collect::<Option<_>>()?;
        let mut index = ProjectIndex::new(returns);
        index.modules = stored.modules.into_iter().collect();
        index.functions = stored.functions.into_iter().collect();
        let argument = |(value, text): (StoredValue, String)| Some(Argument { value: stored_value(value)?, text });
        let mut outgoing = Vec::new();
        for (module, passes) in stored.outgoing {
            let passes: Vec<Passed> = passes
                .into_iter()
                .map(|p| {
                    Some(Passed {
                        callee: p.callee,
                        caller: p.caller,
                        positional: p.positional.into_iter().map(argument).collect::<Option<_>>()?,
                        keywords: p.keywords.into_iter().map(|(k, v, t)| Some((k, argument((v, t))?))).collect::<Option<_>>()?,
                    })
                })
                .collect::<Option<_>>()?;
            outgoing.push((module, passes));
        }
        index.set_passes(outgoing);
        Some(index)
    }
}
