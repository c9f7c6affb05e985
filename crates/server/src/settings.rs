//! Editor settings (`initializationOptions`, `workspace/didChangeConfiguration`)
//! layered over `[tool.gpulens]` in the workspace's pyproject.toml. How the
//! layers combine is `gpulens_diagnostics::config::resolve`'s.

use gpulens_diagnostics::config::{resolve, Layer, Resolved};
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
    /// A profile of the program (cProfile, speedscope or Scalene), relative to the workspace folder or absolute.
    pub profile: Option<String>,
    /// Below this share of the run (0 to 1), `profileBelow` applies.
    #[serde(alias = "profileThreshold", alias = "profile-threshold", alias = "profile_threshold")]
    pub profile_threshold: Option<f64>,
    /// What happens to diagnostics in code below the threshold: keep, demote or hide.
    #[serde(alias = "profileBelow", alias = "profile-below", alias = "profile_below")]
    pub profile_below: Option<crate::profiling::Below>,
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

    /// The settings that are layered over pyproject.toml's (all but `inlay_hints`).
    pub fn layer(&self) -> Layer {
        let EditorSettings { select, ignore, target_gpu, inlay_hints: _, min_elements, .. } = self.clone();
        Layer { select, ignore, target_gpu, min_elements }
    }
}

/// Everything the server's analysis depends on.
#[derive(Debug, Clone, PartialEq)]
pub struct Effective {
    pub settings: Settings,
    pub inlay_hints: bool,
    pub target_gpu: Option<String>,
    /// The profile setting, as given.
    pub profile: Option<String>,
    /// Default 1% of the run.
    pub profile_threshold: f64,
    pub profile_below: crate::profiling::Below,
}

impl Effective {
    /// pyproject first, the editor's settings on top (as
    /// `gpulens_diagnostics::config::resolve` puts layers together).
    pub fn new(project: Option<&Layer>, editor: &EditorSettings) -> Effective {
        let editor_layer = editor.layer();
        let Resolved { settings, target_gpu } = resolve(project.into_iter().chain([&editor_layer]));
        Effective {
            settings,
            inlay_hints: editor.inlay_hints.unwrap_or(true),
            target_gpu,
            profile: editor.profile.clone().filter(|p| !p.trim().is_empty()),
            profile_threshold: editor.profile_threshold.filter(|t| t.is_finite()).unwrap_or(0.01),
            profile_below: editor.profile_below.unwrap_or_default(),
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
        let project = Layer { select: Some(vec!["CUPY".into()]), min_elements: Some(100), ..Default::default() };
        let editor = EditorSettings { min_elements: Some(7), ignore: Some(vec!["CUPY002".into()]), ..Default::default() };
        let e = Effective::new(Some(&project), &editor);
        assert_eq!(e.settings.select, ["CUPY"]);
        assert_eq!(e.settings.ignore, ["CUPY002"]);
        assert_eq!(e.settings.min_elements, 7);
        assert!(e.inlay_hints);
    }
}
