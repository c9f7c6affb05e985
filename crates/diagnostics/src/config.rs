//! `[tool.gpulens]` in pyproject.toml, parsed from text (reading the file is
//! the caller's job).

use serde::Deserialize;

use crate::Settings;

#[derive(Debug, Default, Deserialize, Clone, PartialEq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ToolConfig {
    pub select: Option<Vec<String>>,
    pub ignore: Option<Vec<String>>,
    pub target_gpu: Option<String>,
    pub min_elements: Option<u64>,
}

#[derive(Deserialize)]
struct PyProject {
    tool: Option<Tool>,
}

#[derive(Deserialize)]
struct Tool {
    gpulens: Option<toml::Value>,
}

impl ToolConfig {
    /// The `[tool.gpulens]` table of a pyproject.toml; `Ok(None)` when it has none.
    pub fn from_pyproject(text: &str) -> Result<Option<ToolConfig>, String> {
        let project: PyProject = toml::from_str(text).map_err(|e| e.message().to_string())?;
        let Some(table) = project.tool.and_then(|t| t.gpulens) else { return Ok(None) };
        table.try_into().map(Some).map_err(|e: toml::de::Error| format!("[tool.gpulens]: {}", e.message()))
    }

    /// These values on top of `base` (`select` replaces, `ignore` adds).
    pub fn apply(&self, base: &mut Settings) {
        if let Some(select) = &self.select {
            base.select = select.clone();
        }
        if let Some(ignore) = &self.ignore {
            base.ignore.extend(ignore.iter().cloned());
        }
        if let Some(n) = self.min_elements {
            base.min_elements = n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_tool_table() {
        let text = "[project]\nname = \"x\"\n[tool.gpulens]\nselect = [\"CUPY\"]\nignore = [\"CUDF003\"]\nmin-elements = 500\ntarget-gpu = \"T4\"\n";
        let config = ToolConfig::from_pyproject(text).unwrap().unwrap();
        assert_eq!(config.select, Some(vec!["CUPY".to_string()]));
        assert_eq!(config.min_elements, Some(500));
        assert_eq!(config.target_gpu.as_deref(), Some("T4"));
        assert_eq!(ToolConfig::from_pyproject("[tool.ruff]\nline-length = 80\n").unwrap(), None);
        let mut settings = Settings::default();
        config.apply(&mut settings);
        assert_eq!((settings.select, settings.ignore, settings.min_elements), (vec!["CUPY".into()], vec!["CUDF003".into()], 500));
    }

    #[test]
    fn unknown_keys_are_errors() {
        let err = ToolConfig::from_pyproject("[tool.gpulens]\nselcet = [\"CUPY\"]\n").unwrap_err();
        assert!(err.contains("selcet"), "{err}");
    }
}
