//! `[tool.gpulens]` in the nearest pyproject.toml, merged with the command line.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gpulens_diagnostics::config::ToolConfig;
use gpulens_diagnostics::Settings;

/// Reads `[tool.gpulens]` from one pyproject.toml. `Ok(None)`: no such table.
pub fn read_pyproject(path: &Path) -> Result<Option<ToolConfig>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    ToolConfig::from_pyproject(&text).map_err(|e| format!("{}: {e}", path.display()))
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
        // Keyed by the folder as spelled (files of one folder share it), so
        // only a folder's first file pays for making it absolute.
        let dir = file.parent().unwrap_or(Path::new(""));
        if let Some(s) = self.by_dir.lock().unwrap().get(dir) {
            return s.clone();
        }
        let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        let config = self.nearest_config(&absolute);
        let settings = Arc::new(self.merge(config));
        self.by_dir.lock().unwrap().insert(dir.to_path_buf(), settings.clone());
        settings
    }

    /// `target-gpu` from the configuration that applies to `path`.
    pub fn target_gpu(&self, path: Option<&Path>) -> Option<String> {
        let path = path.unwrap_or(Path::new("."));
        let dir = if path.is_dir() { path.to_path_buf() } else { path.parent().map(Path::to_path_buf).unwrap_or_default() };
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        self.nearest_config(&dir).target_gpu
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
        config.apply(&mut settings);
        if let Some(select) = &self.overrides.select {
            settings.select = select.clone();
        }
        settings.ignore.extend(self.overrides.ignore.iter().cloned());
        settings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
