//! `[tool.gpulens]` in the nearest pyproject.toml, merged with the command line.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gpulens_diagnostics::Settings;
use serde::Deserialize;

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

/// Reads `[tool.gpulens]` from one pyproject.toml. `Ok(None)`: no such table.
pub fn read_pyproject(path: &Path) -> Result<Option<ToolConfig>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_pyproject(&text).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn parse_pyproject(text: &str) -> Result<Option<ToolConfig>, String> {
    let project: PyProject = toml::from_str(text).map_err(|e| e.message().to_string())?;
    let Some(table) = project.tool.and_then(|t| t.gpulens) else { return Ok(None) };
    table.try_into().map(Some).map_err(|e: toml::de::Error| format!("[tool.gpulens]: {}", e.message()))
}

/// Command-line overrides.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub select: Option<Vec<String>>,
    pub ignore: Vec<String>,
}

/// Finds and caches the settings for each folder.
pub struct Resolver {
    overrides: Overrides,
    by_dir: Mutex<HashMap<PathBuf, Arc<Settings>>>,
    /// Problems found in configuration files, reported once each.
    pub errors: Mutex<Vec<String>>,
}

impl Resolver {
    pub fn new(overrides: Overrides) -> Self {
        Resolver { overrides, by_dir: Mutex::new(HashMap::new()), errors: Mutex::new(Vec::new()) }
    }

    /// Settings for a file: its nearest pyproject.toml with a `[tool.gpulens]`
    /// table (or none), then the command line on top.
    pub fn settings_for(&self, file: &Path) -> Arc<Settings> {
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        if let Some(s) = self.by_dir.lock().unwrap().get(&dir) {
            return s.clone();
        }
        let config = self.nearest_config(&dir);
        let settings = Arc::new(self.merge(config));
        self.by_dir.lock().unwrap().insert(dir, settings.clone());
        settings
    }

    fn nearest_config(&self, dir: &Path) -> ToolConfig {
        for ancestor in dir.ancestors() {
            let candidate = ancestor.join("pyproject.toml");
            if candidate.is_file() {
                match read_pyproject(&candidate) {
                    Ok(Some(config)) => return config,
                    Ok(None) => continue,
                    Err(e) => {
                        let mut errors = self.errors.lock().unwrap();
                        if !errors.contains(&e) {
                            errors.push(e);
                        }
                        return ToolConfig::default();
                    }
                }
            }
        }
        ToolConfig::default()
    }

    fn merge(&self, config: ToolConfig) -> Settings {
        let mut settings = Settings::default();
        if let Some(select) = self.overrides.select.clone().or(config.select) {
            settings.select = select;
        }
        settings.ignore = config.ignore.unwrap_or_default();
        settings.ignore.extend(self.overrides.ignore.iter().cloned());
        if let Some(n) = config.min_elements {
            settings.min_elements = n;
        }
        settings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_tool_table() {
        let text = "[project]\nname = \"x\"\n[tool.gpulens]\nselect = [\"CUPY\"]\nignore = [\"CUDF003\"]\nmin-elements = 500\ntarget-gpu = \"T4\"\n";
        let config = parse_pyproject(text).unwrap().unwrap();
        assert_eq!(config.select, Some(vec!["CUPY".to_string()]));
        assert_eq!(config.min_elements, Some(500));
        assert_eq!(config.target_gpu.as_deref(), Some("T4"));
        assert_eq!(parse_pyproject("[tool.ruff]\nline-length = 80\n").unwrap(), None);
    }

    #[test]
    fn unknown_keys_are_errors() {
        let err = parse_pyproject("[tool.gpulens]\nselcet = [\"CUPY\"]\n").unwrap_err();
        assert!(err.contains("selcet"), "{err}");
    }

    #[test]
    fn command_line_select_replaces_and_ignore_adds() {
        let resolver =
            Resolver::new(Overrides { select: Some(vec!["CUML".into()]), ignore: vec!["CUML002".into()] });
        let settings = resolver.merge(ToolConfig {
            select: Some(vec!["CUPY".into()]),
            ignore: Some(vec!["CUDF".into()]),
            ..Default::default()
        });
        assert_eq!(settings.select, ["CUML"]);
        assert_eq!(settings.ignore, ["CUDF", "CUML002"]);
    }
}
