//! Editor settings (`initializationOptions`, `workspace/didChangeConfiguration`)
//! layered over `[tool.gpulens]` in the workspace's pyproject.toml.

use gpulens_diagnostics::config::ToolConfig;
use gpulens_diagnostics::Settings;
use serde::Deserialize;
use serde_json::Value;

/// What an editor may send, in camelCase or kebab-case, at the top level or
/// under a `gpulens` key.
#[derive(Debug, Default, Clone, Deserialize, PartialEq)]
#[serde(default)]
pub struct EditorSettings {
    #[serde(alias = "select")]
    pub select: Option<Vec<String>>,
    pub ignore: Option<Vec<String>>,
    #[serde(alias = "targetGpu", alias = "target-gpu", alias = "target_gpu")]
    pub target_gpu: Option<String>,
    #[serde(alias = "inlayHints", alias = "inlay-hints", alias = "inlay_hints")]
    pub inlay_hints: Option<bool>,
    #[serde(alias = "minElements", alias = "min-elements", alias = "min_elements")]
    pub min_elements: Option<u64>,
}

impl EditorSettings {
    /// Reads settings from whatever JSON the client sent; unknown or
    /// ill-typed values are ignored (and reported by the caller), never fatal.
    pub fn from_json(value: &Value) -> Result<EditorSettings, String> {
        let value = value.get("gpulens").unwrap_or(value);
        if value.is_null() {
            return Ok(EditorSettings::default());
        }
        serde_json::from_value(value.clone()).map_err(|e| e.to_string())
    }
}

/// Everything the server's analysis depends on.
#[derive(Debug, Clone, PartialEq)]
pub struct Effective {
    pub settings: Settings,
    pub inlay_hints: bool,
    pub target_gpu: Option<String>,
}

impl Effective {
    /// pyproject first, the editor's settings on top.
    pub fn new(project: Option<&ToolConfig>, editor: &EditorSettings) -> Effective {
        let mut settings = Settings::default();
        if let Some(project) = project {
            project.apply(&mut settings);
        }
        if let Some(select) = &editor.select {
            settings.select = select.clone();
        }
        if let Some(ignore) = &editor.ignore {
            settings.ignore.extend(ignore.iter().cloned());
        }
        if let Some(n) = editor.min_elements {
            settings.min_elements = n;
        }
        Effective {
            settings,
            inlay_hints: editor.inlay_hints.unwrap_or(true),
            target_gpu: editor.target_gpu.clone().or_else(|| project.and_then(|p| p.target_gpu.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn camel_and_kebab_case_under_or_without_a_section() {
        let a = EditorSettings::from_json(&json!({"gpulens": {"inlayHints": false, "minElements": 5, "targetGpu": "T4"}})).unwrap();
        let b = EditorSettings::from_json(&json!({"inlay-hints": false, "min-elements": 5, "target-gpu": "T4"})).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.inlay_hints, Some(false));
        assert!(EditorSettings::from_json(&json!({"minElements": "many"})).is_err());
        assert_eq!(EditorSettings::from_json(&Value::Null).unwrap(), EditorSettings::default());
    }

    #[test]
    fn editor_overrides_project() {
        let project = ToolConfig { select: Some(vec!["CUPY".into()]), min_elements: Some(100), ..Default::default() };
        let editor = EditorSettings { min_elements: Some(7), ignore: Some(vec!["CUPY002".into()]), ..Default::default() };
        let e = Effective::new(Some(&project), &editor);
        assert_eq!(e.settings.select, ["CUPY"]);
        assert_eq!(e.settings.ignore, ["CUPY002"]);
        assert_eq!(e.settings.min_elements, 7);
        assert!(e.inlay_hints);
    }
}
