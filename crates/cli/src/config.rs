//! `[tool.gpulens]` in the nearest pyproject.toml, under the command line.
//! How the layers combine is `gpulens_diagnostics::config::resolve`'s.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gpulens_diagnostics::config::{resolve, Layer};
use gpulens_diagnostics::Settings;

/// Reads `[tool.gpulens]` from one pyproject.toml. `Ok(None)`: no such table.
pub fn read_pyproject(path: &Path) -> Result<Option<Layer>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Layer::from_pyproject(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Finds and caches the settings for each folder.
pub struct Resolver {
    /// The command line's layer, on top of every pyproject.toml.
    command_line: Layer,
    by_dir: Mutex<HashMap<PathBuf, Arc<Settings>>>,
    /// Problems found in configuration files, reported once each.
    pub errors: Mutex<Vec<String>>,
}

impl Resolver {
    pub fn new(command_line: Layer) -> Self {
        Resolver { command_line, by_dir: Mutex::new(HashMap::new()), errors: Mutex::new(Vec::new()) }
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
        let settings = Arc::new(resolve([&config, &self.command_line]).settings);
        self.by_dir.lock().unwrap().insert(dir.to_path_buf(), settings.clone());
        settings
    }

    /// The target GPU for a run over `path` (the first path named): the
    /// command line's, else the one in the configuration that applies to
    /// `path`. With one on the command line no pyproject.toml is read for it.
    pub fn target_gpu(&self, path: Option<&Path>) -> Option<String> {
        if self.command_line.target_gpu.is_some() {
            return resolve([&self.command_line]).target_gpu;
        }
        let path = path.unwrap_or(Path::new("."));
        let dir = if path.is_dir() { path.to_path_buf() } else { path.parent().map(Path::to_path_buf).unwrap_or_default() };
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        resolve([&self.nearest_config(&dir), &self.command_line]).target_gpu
    }

    fn nearest_config(&self, dir: &Path) -> Layer {
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
                        return Layer::default();
                    }
                }
            }
        }
        Layer::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_pyproject_under_the_command_line() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("sub/bad/deeper")).unwrap();
        // sub has a pyproject.toml without the table: looked past.
        std::fs::write(root.join("sub/pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
        std::fs::write(root.join("pyproject.toml"), "[tool.gpulens]\nselect = [\"CUPY\"]\nignore = [\"CUDF\"]\ntarget-gpu = \"T4\"\n").unwrap();
        std::fs::write(root.join("sub/bad/pyproject.toml"), "[tool.gpulens]\nselcet = [\"CUPY\"]\n").unwrap();

        let command_line = Layer { select: Some(vec!["CUML".into()]), ignore: Some(vec!["CUML002".into()]), ..Default::default() };
        let resolver = Resolver::new(command_line.clone());
        let settings = resolver.settings_for(&root.join("sub/a.py"));
        assert_eq!(settings.select, ["CUML"]);
        assert_eq!(settings.ignore, ["CUDF", "CUML002"]);
        assert_eq!(resolver.target_gpu(Some(&root.join("sub"))).as_deref(), Some("T4"));
        assert!(resolver.errors.lock().unwrap().is_empty());

        // A broken one is reported once and counts as empty; its parents are not read.
        let settings = resolver.settings_for(&root.join("sub/bad/deeper/b.py"));
        assert_eq!((settings.select.as_slice(), settings.ignore.as_slice()), (["CUML".to_string()].as_slice(), ["CUML002".to_string()].as_slice()));
        assert_eq!(resolver.target_gpu(Some(&root.join("sub/bad/c.py"))), None);
        let errors = resolver.errors.lock().unwrap();
        assert_eq!(errors.len(), 1);
        assert!(errors[0].contains("selcet"), "{errors:?}");
        drop(errors);

        // A target on the command line wins, and no pyproject.toml is read for it.
        let resolver = Resolver::new(Layer { target_gpu: Some("H100".into()), ..command_line });
        assert_eq!(resolver.target_gpu(Some(&root.join("sub/bad"))).as_deref(), Some("H100"));
        assert!(resolver.errors.lock().unwrap().is_empty());
    }
}
