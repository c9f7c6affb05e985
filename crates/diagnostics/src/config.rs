//! Settings in layers, and the one place they are put together.
//!
//! Each source of settings is a [`Layer`]: `[tool.gpulens]` in a
//! pyproject.toml (parsed here from text; finding and reading the file is the
//! caller's job), the editor's settings (parsed by the server) and the
//! command line (parsed by the CLI). [`resolve`] puts layers on top of the
//! built-in defaults.

use serde::Deserialize;

use crate::Settings;

/// One source of settings. Every field is optional: `None` leaves what the
/// layers below said. Deserialised, it is `[tool.gpulens]` as written in a
/// pyproject.toml (kebab-case keys; an unknown key is an error).
#[derive(Debug, Default, Deserialize, Clone, PartialEq, Eq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Layer {
    pub select: Option<Vec<String>>,
    pub ignore: Option<Vec<String>>,
    pub target_gpu: Option<String>,
    pub min_elements: Option<u64>,
}

/// The settings in force once every layer is applied.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Resolved {
    /// What the rules read.
    pub settings: Settings,
    /// The GPU to advise for by name; `None`: the attached one, if any.
    pub target_gpu: Option<String>,
}

/// Puts `layers` (lowest first) on top of the built-in defaults.
///
/// The order, lowest to highest:
/// 1. built-in defaults ([`Settings::default`]: select nothing, which means
///    every rule; ignore nothing; `min-elements` 10 000; no target GPU);
/// 2. `[tool.gpulens]` in pyproject.toml: for `gpulens check`, the nearest
///    one with such a table, looking in each file's folder and then its
///    parents (for the target GPU, the one for the first path named); for
///    the language server, the one in the workspace root only. One that
///    cannot be parsed (or, for `gpulens check`, read) is reported and
///    counts as an empty layer, and `gpulens check` looks no further up;
/// 3. the editor's settings (`initializationOptions`, then each
///    `workspace/didChangeConfiguration`, which replaces them whole): the
///    language server only;
/// 4. the command line (`--select`, `--ignore`, `--target-gpu`):
///    `gpulens check` only.
///
/// Each field of a higher layer, when given, replaces the one below, except
/// `ignore`, whose lists add up: every layer's codes are ignored (in layer
/// order). So `select` is the highest layer's alone, while an `ignore` in
/// the editor or on the command line cannot bring back what pyproject.toml
/// ignores.
pub fn resolve<'a>(layers: impl IntoIterator<Item = &'a Layer>) -> Resolved {
    let mut resolved = Resolved::default();
    for layer in layers {
        let Layer { select, ignore, target_gpu, min_elements } = layer;
        if let Some(select) = select {
            resolved.settings.select = select.clone();
        }
        if let Some(ignore) = ignore {
            resolved.settings.ignore.extend(ignore.iter().cloned());
        }
        if let Some(target) = target_gpu {
            resolved.target_gpu = Some(target.clone());
        }
        if let Some(n) = min_elements {
            resolved.settings.min_elements = *n;
        }
    }
    resolved
}

#[derive(Deserialize)]
struct PyProject {
    tool: Option<Tool>,
}

#[derive(Deserialize)]
struct Tool {
    gpulens: Option<toml::Value>,
}

impl Layer {
    /// The `[tool.gpulens]` table of a pyproject.toml; `Ok(None)` when it has none.
    pub fn from_pyproject(text: &str) -> Result<Option<Layer>, String> {
        let project: PyProject = toml::from_str(text).map_err(|e| e.message().to_string())?;
        let Some(table) = project.tool.and_then(|t| t.gpulens) else { return Ok(None) };
        table.try_into().map(Some).map_err(|e: toml::de::Error| format!("[tool.gpulens]: {}", e.message()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_tool_table() {
        let text = "[project]\nname = \"x\"\n[tool.gpulens]\nselect = [\"CUPY\"]\nignore = [\"CUDF003\"]\nmin-elements = 500\ntarget-gpu = \"T4\"\n";
        let config = Layer::from_pyproject(text).unwrap().unwrap();
        assert_eq!(config.select, Some(vec!["CUPY".to_string()]));
        assert_eq!(config.min_elements, Some(500));
        assert_eq!(config.target_gpu.as_deref(), Some("T4"));
        assert_eq!(Layer::from_pyproject("[tool.ruff]\nline-length = 80\n").unwrap(), None);
        let settings = resolve([&config]).settings;
        assert_eq!((settings.select, settings.ignore, settings.min_elements), (vec!["CUPY".into()], vec!["CUDF003".into()], 500));
    }

    #[test]
    fn unknown_keys_are_errors() {
        let err = Layer::from_pyproject("[tool.gpulens]\nselcet = [\"CUPY\"]\n").unwrap_err();
        assert!(err.contains("selcet"), "{err}");
    }

    fn strings(codes: &[&str]) -> Vec<String> {
        codes.iter().map(|c| c.to_string()).collect()
    }

    /// A layer with one field set, told by its pyproject.toml key.
    fn set(field: &str, value: &str) -> Layer {
        let mut layer = Layer::default();
        match field {
            "select" => layer.select = Some(strings(&[value])),
            "ignore" => layer.ignore = Some(strings(&[value])),
            "target-gpu" => layer.target_gpu = Some(value.into()),
            "min-elements" => layer.min_elements = Some(value.parse().unwrap()),
            _ => unreachable!("{field}"),
        }
        layer
    }

    /// The value of one field, spelled as `set` takes it (lists joined by commas).
    fn get(resolved: &Resolved, field: &str) -> String {
        match field {
            "select" => resolved.settings.select.join(","),
            "ignore" => resolved.settings.ignore.join(","),
            "target-gpu" => resolved.target_gpu.clone().unwrap_or_default(),
            "min-elements" => resolved.settings.min_elements.to_string(),
            _ => unreachable!("{field}"),
        }
    }

    /// Every field, with each of the layers pyproject.toml, editor and
    /// command line (in that order) setting it or not: the highest layer
    /// that sets it wins, except `ignore`, where every layer's codes count.
    #[test]
    fn each_layer_overrides_the_ones_below() {
        // field, the value each layer sets it to (pyproject, editor, command line), the default.
        let fields = [
            ("select", ["CUPY", "CUML", "CUDF"], ""),
            ("ignore", ["CUPY001", "CUML002", "CUDF003"], ""),
            ("target-gpu", ["T4", "A100", "H100"], ""),
            ("min-elements", ["500", "7", "123456"], "10000"),
        ];
        // Which layers set the field, and what it then is: an index into the
        // values, or None for the default.
        let table: [([bool; 3], Option<usize>); 8] = [
            ([false, false, false], None),
            ([true, false, false], Some(0)),
            ([false, true, false], Some(1)),
            ([true, true, false], Some(1)),
            ([false, false, true], Some(2)),
            ([true, false, true], Some(2)),
            ([false, true, true], Some(2)),
            ([true, true, true], Some(2)),
        ];
        for (field, values, default) in fields {
            for (sets, winner) in table {
                let layers: Vec<Layer> =
                    (0..3).map(|i| if sets[i] { set(field, values[i]) } else { Layer::default() }).collect();
                let expected = if field == "ignore" {
                    (0..3).filter(|&i| sets[i]).map(|i| values[i]).collect::<Vec<_>>().join(",")
                } else {
                    winner.map_or(default, |i| values[i]).to_string()
                };
                assert_eq!(get(&resolve(&layers), field), expected, "{field} set by {sets:?}");
            }
        }
    }

    #[test]
    fn no_layers_are_the_defaults() {
        let resolved = resolve([]);
        assert_eq!(resolved.settings, Settings::default());
        assert_eq!(resolved.target_gpu, None);
    }

    #[test]
    fn a_layer_sets_only_its_own_fields() {
        let project = Layer {
            select: Some(strings(&["CUPY"])),
            ignore: Some(strings(&["CUDF"])),
            target_gpu: Some("T4".into()),
            min_elements: Some(100),
        };
        let editor = Layer { min_elements: Some(7), ..Default::default() };
        let command_line = Layer { select: Some(strings(&["CUML"])), ignore: Some(strings(&["CUML002"])), ..Default::default() };
        let resolved = resolve([&project, &editor, &command_line]);
        assert_eq!(resolved.settings.select, ["CUML"]);
        assert_eq!(resolved.settings.ignore, ["CUDF", "CUML002"]);
        assert_eq!(resolved.settings.min_elements, 7);
        assert_eq!(resolved.target_gpu.as_deref(), Some("T4"));
        // An empty select list is given, and replaces: every rule again.
        let everything = Layer { select: Some(Vec::new()), ..Default::default() };
        assert!(resolve([&project, &everything]).settings.select.is_empty());
    }
}
